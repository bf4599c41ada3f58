-- hostile: read a tensor file through set{}
set{x = {file = "/tmp/normscope-hostile.npy"}}
