-- fixture for test_lesson (the C API): states, a runaway check, a memory bomb, verdicts.
lesson{title = "engine fixture", source = "999", section = "test",
  steps = {
    {text = "one", set = {kind = "rms", eps = 0}},
    {text = "two", set = {x = {1, 2, 3, 5}, shift = 3}, focus = "spectrum",
     try = {text = "raise eps", show = {eps = 0.5},
            check = function(s) return s.eps > 0.1 or "eps is " .. s.eps end}},
    {text = "three", try = {text = "a check that never ends",
                            check = function(s) while true do end end}},
    {text = "four", claims = function(s)
       local t = {}
       for i = 1, 1e9 do t[i] = {i} end
     end},
    {text = "five", set = {eps = 1e-3},
     claims = function(s)
       print("five", 5)
       claim("c15-rank-centered", 2)
       claim("c15-rank-rms", 2.5)
       claim("c15-eps-radial", 0 / 0)
     end},
  }}
