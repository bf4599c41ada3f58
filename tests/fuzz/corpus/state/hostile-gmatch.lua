for w in ("a"):rep(3000):gmatch("a*a*a*b") do end
set{eps = 0.1}
