local s = (""):rep(1 << 62)
set{eps = 0.1, source = s}
