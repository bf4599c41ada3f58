-- Text 002, "Exercises" 1 to 5: batch mean, variance and X31 of column 1; layer norm of
-- row 1; the final row and row 1; gamma 2, beta -1 on 0.5; eps and an identical set.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local EPS = 1e-5

-- Column j of a matrix tensor as a (B, 1) tensor.
local function column(t, j) return t:slice(2, j, j) end

-- Entry (i, j) of a matrix tensor with d columns (1-based).
local function at(t, i, j, d) return t[(i - 1) * d + j] end

local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

-- Is tensor t the Lua matrix m?
local function equals(t, m)
  local f, k = t:flat(), 0
  for i = 1, #m do
    for j = 1, #m[i] do
      k = k + 1
      if f[k] ~= m[i][j] then return false end
    end
  end
  return k == #f
end

lesson{
  title = "Exercises 1 to 5",
  source = "002_22013a1826c4c83c.txt",
  section = "Exercises (1-5)",
  steps = {
    {text = [[
Exercise 1. Column 1 of the running matrix is (1, 2, 4, 7, 11). Compute
its batch mean, its (population) variance and the batch-normalised value
of X31 = 4, by hand first. Answers: mean 5, variance 66/5 = 13.2, and
(4 - 5) / sqrt(13.2 + 1e-5) = -0.2752.]],
     set = {x = X, batch = X, target = 1, companion = 5, baseline = X[5], kind = "layer",
            axes = "default", eps = EPS, gamma = {}, beta = {}, mode = "train",
            dtype = "fp64", acc = "default", groups = 1, shift = 10, scale = 2},
     focus = "output",
     claims = function(s)
       local c = column(s.x, 1)
       claim("n-ex1-mean", c:mean())
       claim("n-ex1-var", c:var())
       claim("n-bn-x31", at(result().batch.bn, 3, 1, 4))
     end,
     try = {text = [[
Check it on the screen: switch the output panel to batch norm
(set{kind = "batch"}) and read row 3, column 1 of y; the statistics line
has the column's mean and variance.]],
            check = function(s)
              if s.kind ~= "batch" then return "use kind batch" end
              if not equals(s.x, X) then return "keep X as the input" end
              local c = column(s.x, 1)
              local want = (4 - c:mean()) / math.sqrt(c:var() + s.eps)
              local got = at(result().y, 3, 1, 4)
              return math.abs(got - want) < 1e-12 or string.format("y31 is %.6f", got)
            end,
            show = {kind = "batch"}}},

    {text = [[
Exercise 2. Layer-normalise row 1, (1, 3, 7, 2): mean 3.25, variance
5.1875, so the values are (-0.988, -0.110, 1.646, -0.549). The batch
panel's layer-norm matrix has them in its first row.]],
     focus = "batch",
     claims = function(s)
       local ln = result().batch.ln
       claim("n-ln-row1-col1", at(ln, 1, 1, 4))
       claim("n-ln-row1-col2", at(ln, 1, 2, 4))
       claim("n-ln-row1-col3", at(ln, 1, 3, 4))
       claim("n-ln-row1-col4", at(ln, 1, 4, 4))
     end,
     try = {text = [[
Give the output panel row 1 alone under layer norm
(set{x = {{1, 3, 7, 2}}, kind = "layer"}) and compare.]],
            check = function(s)
              if s.kind ~= "layer" then return "use kind layer" end
              if not equals(s.x, {X[1]}) then return "x should be {{1, 3, 7, 2}}" end
              local d = maxdiff(result().y:flat(), result().batch.ln:slice(1, 1, 1):flat())
              return d < 1e-12 or string.format("off by %.3g", d)
            end,
            show = {x = {X[1]}, kind = "layer"}}},

    {text = [[
Exercise 3. Row 5 changes. Explain why row 1's batch-norm output moves
while its layer-norm output stays put. Batch norm's statistics for
each column include row 5; layer norm's statistics for row 1 use row 1
only. The batch panel watches row 1 while row 5 changes.]],
     focus = "batch",
     try = {text = [[
Change row 5 (set{batch = {...}} with a new last row): row 1's batch
norm moves, its layer norm does not.]],
            check = function(s)
              local b = result().batch
              if maxdiff(b.target_now, b.target_base) == 0 then return "change row 5" end
              local ln1 = ns.normalize(ns.tensor{X[1]}, {kind = "layer", eps = s.eps}):flat()
              local d = maxdiff(b.ln:slice(1, 1, 1):flat(), ln1)
              return d < 1e-12 or "keep row 1 as it was"
            end,
            show = {batch = {X[1], X[2], X[3], X[4], {0, 1, 2, 30}}}}},

    {text = [[
Exercise 4. gamma = 2 and beta = -1 applied to a standardised value of
0.5 give 2 x 0.5 - 1 = 0. The new frame has mean beta = -1 and spread
gamma = 2; the value still sits half a spread above the mean, at -1 + 1.
Its number changed, not its place. The output panel shows it: x has
mean 0 and standard deviation 1 (eps 0), and its first value is 0.5.]],
     set = {x = {0.5, -0.5, math.sqrt(1.75), -math.sqrt(1.75)}, kind = "layer", eps = 0,
            gamma = 2, beta = -1},
     focus = "output",
     claims = function(s) claim("n-ex4-affine", result().y[1]) end,
     try = {text = [[
Which beta puts that value at 1 instead (gamma still 2)? Set it and check
the first output.]],
            check = function(s)
              local y = result().y[1]
              return math.abs(y - 1) < 1e-9 or string.format("the first output is %.4f", y)
            end,
            show = {beta = 0}}},

    {text = [[
Exercise 5. What does eps prevent when every value of a reference set is
the same? x = (3, 3, 3, 3): the variance is 0, and with eps = 1e-5 every
output is 0 / sqrt(0 + eps) = 0, a clean answer.]],
     set = {x = {3, 3, 3, 3}, eps = EPS, gamma = {}, beta = {}},
     focus = "output",
     claims = function(s) claim("n-ex5-constant-eps", result().y:abs():max()) end,
     try = {text = [[
Remove it (set{eps = 0}): 0 / 0, the output panel reports a degenerate
statistic and y is NaN.]],
            check = function(s)
              if s.eps ~= 0 then return "set eps to 0" end
              return result().ndegenerate > 0 or "nothing is degenerate"
            end,
            show = {eps = 0}}},
  },
}
