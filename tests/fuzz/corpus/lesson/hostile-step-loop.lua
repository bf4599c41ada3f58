-- hostile: an endless loop inside a try.check
lesson{title = "looping check", source = "000", section = "test",
  steps = {{text = "one step", try = {text = "change eps", show = {eps = 1},
            check = function(s) while true do end end}}}}
