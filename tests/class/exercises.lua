-- exercises.lua: a lesson for tests/class/test_export.sh with every kind of exercise: a
-- prediction with choices, one with a number, a number to compute with hints, and a try
-- whose answer is a state.
lesson{
  title = "Exercises for the handout",
  source = "000_b251982bd6a65d6e.txt",
  section = "a test of the handout",
  steps = {
    {text = [[Layer norm of four numbers.]],
     set = {x = {-2, -1, 1, 2}, eps = 0}, focus = "output"},
    {text = [[Shift x by 10 under RMS norm.]],
     predict = {question = "Will y change?", choices = {"no", "yes"}, answer = 2},
     set = {kind = "rms", shift = 10}, focus = "output"},
    {text = [[The same x, its mean.]],
     predict = {question = "What is the mean of x + 1?",
                value = function(s) return (s.x + 1):mean() end},
     set = {kind = "layer"}},
    {text = [[Column 1 of the batch panel.]],
     set = {batch = {{1, 3}, {2, 5}, {4, 7}, {7, 9}, {11, 15}}}, focus = "batch",
     try = {text = [[Its population variance? Type = and your number.]],
            answer = {value = function(s) return s.batch:slice(2, 1, 1):var() end},
            hints = {"the mean of the column first", "then the mean of the squared gaps"}}},
    {text = [[eps is 0 here.]],
     try = {text = [[Raise eps above zero.]],
            check = function(s) return s.eps > 0 or "eps is still 0" end,
            hints = {"e and E step it"},
            show = {eps = 1e-3}}},
  },
}
