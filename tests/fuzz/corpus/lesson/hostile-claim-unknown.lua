-- hostile: a claim id that the registry does not have
lesson{title = "unknown claim", source = "000", section = "test",
  steps = {{text = "one step", claims = function(s) claim("no-such-claim", 1) end}}}
