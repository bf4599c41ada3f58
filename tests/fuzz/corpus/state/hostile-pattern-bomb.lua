local x = ("a"):rep(40):find(("a*"):rep(40) .. "b")
set{eps = 0.1}
