set{x = ns.tensor({1,2}), kind = "rms"} setps{eps = 1}
