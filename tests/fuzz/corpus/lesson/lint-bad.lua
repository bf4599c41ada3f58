-- fixture for lesson --check: every kind of problem it reports, once
lesson{title = "lint fixture", source = "000", section = "test",
  steps = {
    {text = "unknown fields", set = {epss = 1, kindd = "rms"}},
    {text = ""},
    {text = "this line is much too long for the lesson pane: it runs on and on past eighty columns"},
    {text = "unknown claim", claims = function(s) claim("no-such-claim", 1) end},
    {text = "a try that is already done",
     try = {text = "nothing to do", check = function(s) return true end}},
    {text = "a show that does not pass",
     try = {text = "raise eps", show = {eps = 0},
            check = function(s) return s.eps > 1 or "eps is small" end}},
    {text = "a bad value", set = {eps = -1}},
    {text = "an unknown panel", focus = "nowhere"},
    {text = "the same claim twice", claims = function(s) claim("c15-rank-rms", 3) end},
    {text = "and again", claims = function(s) claim("c15-rank-rms", 3) end},
  }}
