os.exit(3)
