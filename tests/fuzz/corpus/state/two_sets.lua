set{x = ns.tensor({1,2}), kind = "rms"} set{eps = 1}
