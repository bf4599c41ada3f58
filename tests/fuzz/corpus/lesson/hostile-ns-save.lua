-- hostile: write a file through the module
ns.save("/tmp/normscope-hostile.npy", ns.zeros({2}))
