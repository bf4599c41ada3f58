local x = ("a"):rep(2000000):find(("a"):rep(20000) .. "%d")
set{eps = 0.1}
