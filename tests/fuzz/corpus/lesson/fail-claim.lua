-- fixture: a lesson whose claim fails (the value is deliberately off by one)
lesson{title = "a failing claim", source = "000", section = "test",
  steps = {{text = "one step",
            claims = function(s) claim("c15-rank-rms", result().jacobian.rank + 1) end}}}
