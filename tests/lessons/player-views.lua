-- A fixture of the player: every view a step can open, a figure in the pane and above it,
-- and each kind of exercise (tests/tui/test_layout.sh, tests/lessons/test_lesson.c).
local function fig(s)
  return ns.plot.lines({{y = result().y, label = "y"}},
                       {width = 60, height = 8, title = "the output, drawn by the step"})
end

lesson{
  title = "The player's views and exercises",
  source = "000_fixture.txt",
  section = "fixture",
  steps = {
    {text = [[The residual block's view (D).]], set = {x = {1, 2, 4, 8}}, focus = "residual"},
    {text = [[The backward pass (B).]], focus = "backward"},
    {text = [[The shifted evaluation (V).]], focus = "shift"},
    {text = [[A figure in the pane, under the text.]], focus = "output", figure = fig},
    {text = [[The same figure above the pane.]], figure = fig, view = "figure"},
    {text = [[The focused panel's own figure (f).]], focus = "spectrum", view = "figure"},
    {text = [[A prediction.]],
     predict = {question = [[Under RMS, will y change?]], choices = {"no", "yes"},
                answer = function(s) return s.kind == "rms" and 2 or 1 end},
     set = {kind = "rms"}, focus = "output"},
    {text = [[A number.]],
     variant = function(seed, s) return {x = ns.rng(seed):normal(0, 1, {4})} end,
     try = {text = [[The mean of x, please.]],
            answer = {value = function(s) return s.x:mean() end, tol = 1e-3},
            hints = {"add the four and divide by 4",
                     function(s) return string.format("it is %.4f", s.x:mean()) end}}},
    {text = [[The deep stacks (L).]], focus = "stacks"},
  },
}
