-- fixture for test_plot_lesson.sh: a lesson that shows the explorer's panel figures
-- headless, as a step's figure and printed from a step's claims.
lesson{title = "panel figures in a lesson", source = "999", section = "test",
  steps = {
    {text = "The spectrum of the default input at eps = 1e-3.", set = {eps = 1e-3},
     focus = "spectrum",
     figure = function(s) return plot("spectrum", {width = 78, height = 22}) end},
    {text = "The batch matrix under batch and layer norm.", set = {eps = 1e-5},
     focus = "batch",
     claims = function(s) print(plot("batch", {width = 78, height = 8, ascii = true})) end},
  }}
