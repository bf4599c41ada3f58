-- Text 002, Level 2 (Mechanics), "A normalisation layer performs three operations": a
-- statistic over the chosen set, the subtract-and-divide with eps, then gamma and beta.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}

-- Column means and population variances of y (a B x D tensor), as Lua arrays.
local function colstats(y) return y:mean({1}):flat(), y:var({1}):flat() end

lesson{
  title = "Level 2: three operations",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 2 - Mechanics: A normalisation layer performs three operations",
  steps = {
    {text = [[
Every normalisation layer does three things.

1. It picks a set of values and computes a statistic of it: for batch
   and layer norm a mean and a variance.
2. It subtracts the mean and divides by sqrt(variance + eps).
3. It multiplies by a learned gamma and adds a learned beta.

The output panel (Alt-3) runs batch norm on the running matrix: its statistics
line lists the four column means and variances (step 1), and the
denominators sqrt(var + eps) used in step 2.]],
     set = {x = X, kind = "batch", eps = 1e-5, gamma = {}, beta = {}},
     focus = "output"},

    {text = [[
Why eps? A reference set with no variation has variance 0, and step 2
would divide 0 by 0. Here the second column is constant: with eps = 1e-5
its outputs are 0 (the value equals its mean), not undefined.
(Alt-3)]],
     set = {x = {{1, 5}, {2, 5}, {3, 5}}},
     focus = "output",
     try = {text = [[
Set eps to 0 (set{eps = 0}) and watch the output panel flag the constant
column as degenerate: its outputs become NaN.]],
            check = function(s)
              if s.eps ~= 0 then return "eps is still " .. s.eps end
              return result().ndegenerate > 0 or "no statistic is degenerate: keep a constant column"
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 0}]]},
            show = {eps = 0}}},

    {text = [[
Step 3: gamma and beta, one pair per feature for batch norm. With
gamma = (1, 2, 3, 4) and beta = (0, 10, 20, 30), column j of the output
has mean beta_j and standard deviation gamma_j: the model picks the range
each feature works in. (Alt-3)]],
     set = {x = X, eps = 1e-5, gamma = {1, 2, 3, 4}, beta = {0, 10, 20, 30}},
     focus = "output"},

    {text = [[
Without gamma and beta, every channel would be stuck at mean 0 and
variance 1, whether or not the task wants another range.
(Alt-3)]],
     focus = "output",
     try = {text = [[
Remove them (set{gamma = {}, beta = {}}) and check the output's columns:
every mean 0 and every variance just below 1 (eps takes a little).]],
            check = function(s)
              local m, v = colstats(result().y)
              for j = 1, #m do
                if math.abs(m[j]) > 1e-9 or math.abs(v[j] - 1) > 1e-3 then
                  return string.format("column %d has mean %.3g, variance %.3g", j, m[j], v[j])
                end
              end
              return true
            end,
            hints = {"w cycles gamma and beta (none, gamma 2, gamma 2 and beta 0.5); other values at the prompt (:)",
                     [[set{gamma = {}, beta = {}}]]},
            show = {gamma = {}, beta = {}}}},
  },
}
