## src: the normscope binary
