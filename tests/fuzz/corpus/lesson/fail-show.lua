-- fixture: a try whose show does not answer its check
lesson{title = "a wrong answer", source = "000", section = "test",
  steps = {{text = "one step", try = {text = "raise eps", show = {eps = 0},
            check = function(s) return s.eps > 1 or "eps is " .. s.eps end}}}}
