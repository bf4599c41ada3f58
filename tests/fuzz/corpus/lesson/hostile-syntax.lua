-- hostile: a syntax error on line 3
lesson{title = "broken",
  steps = {{text = "a" "b" = 1}}}
