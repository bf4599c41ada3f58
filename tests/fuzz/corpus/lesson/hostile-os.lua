-- hostile: run a shell command
os.execute("echo pwned")
