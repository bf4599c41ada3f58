-- Text 002, "Exercises" 1 to 5: batch mean, variance and X31 of column 1; layer norm of
-- row 1; the final row and row 1; gamma 2, beta -1 on 0.5; eps and an identical set. Each
-- asks first: a number to type (with variants where the numbers are a draw), a
-- prediction, or a change to make; the answers sit in the hints.
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

-- Exercise 1's variant: X with another column 1 (five integers, not all equal).
local function other_column(seed)
  local g, m = ns.rng(seed), {}
  for i = 1, 5 do
    m[i] = {math.floor(g:random() * 15) - 2, X[i][2], X[i][3], X[i][4]}
  end
  if m[1][1] == m[2][1] and m[2][1] == m[3][1] then m[1][1] = m[1][1] + 3 end
  return m
end

-- The batch-normalised value of entry (3, 1) of x, from column 1's own mean and variance.
local function bn31(s)
  local c = column(s.x, 1)
  return (c[3] - c:mean()) / math.sqrt(c:var() + s.eps)
end

lesson{
  title = "Exercises 1 to 5",
  source = "002_22013a1826c4c83c.txt",
  section = "Exercises (1-5)",
  steps = {
    {text = [[
Exercise 1. Take column 1 of the running matrix, the first column of
the input panel (Alt-1). By hand, compute its batch mean, its population
variance, and the batch-normalised value of its third entry (eps 1e-5).
V gives another column to practise on.]],
     set = {x = X, batch = X, target = 1, companion = 5, baseline = X[5], kind = "layer",
            axes = "default", eps = EPS, gamma = {}, beta = {}, mode = "train",
            dtype = "fp64", acc = "default", groups = 1, shift = 10, scale = 2},
     focus = "input",
     variant = function(seed, s) return {x = other_column(seed)} end,
     claims = function(s)
       local c = column(s.x, 1)
       claim("n-ex1-mean", c:mean())
       claim("n-ex1-var", c:var())
       claim("n-bn-x31", at(result().batch.bn, 3, 1, 4))
     end,
     try = {text = [[
Type the batch-normalised third entry: = and a number, or any Lua
expression that computes it (math.sqrt is there).]],
            answer = {value = bn31},
            hints = {"The mean of the five values first.",
                     "The population variance is the mean of the squared deviations " ..
                       "(divide by 5, not 4).",
                     "For (1, 2, 4, 7, 11): mean 5, variance 66/5 = 13.2, and " ..
                       "(4 - 5) / sqrt(13.2 + 1e-5) = -0.2752."}}},

    {text = [[
Exercise 1 on the screen. The output panel (Alt-3) still runs layer norm over
each row; batch norm over each column gives your number at row 3,
column 1 of y, and the statistics line has the column's mean and
variance (stat 1/4).]],
     focus = "output",
     try = {text = [[
Switch the output panel to batch norm and find row 3, column 1 of y.]],
            check = function(s)
              if s.kind ~= "batch" then return "use kind batch" end
              local want = bn31(s)
              local got = at(result().y, 3, 1, 4)
              return math.abs(got - want) < 1e-12 or string.format("y31 is %.6f", got)
            end,
            hints = {"k in the settings steps the kind.", "set{kind = \"batch\"}"},
            show = {kind = "batch"}}},

    {text = [[
Exercise 2. Layer-normalise row 1 of the running matrix, (1, 3, 7, 2),
by hand: its mean, its population variance, then each value.
(Alt-1)]],
     set = {x = X, kind = "layer", target = 3},
     focus = "input",
     claims = function(s)
       local ln = result().batch.ln
       claim("n-ln-row1-col1", at(ln, 1, 1, 4))
       claim("n-ln-row1-col2", at(ln, 1, 2, 4))
       claim("n-ln-row1-col3", at(ln, 1, 3, 4))
       claim("n-ln-row1-col4", at(ln, 1, 4, 4))
     end,
     try = {text = [[
Type the layer-normalised value of the 7: = and a number.]],
            answer = {value = function(s) return at(result().batch.ln, 1, 3, 4) end},
            hints = {"The mean of (1, 3, 7, 2) is 13/4.",
                     "The squared deviations average to 5.1875.",
                     "(7 - 3.25) / sqrt(5.1875 + 1e-5) = 1.646; the batch panel's layer-norm " ..
                       "matrix (Alt-5) has all four in its first row."}}},

    {text = [[
Exercise 3. Row 5 changes. Explain why row 1's batch-norm output moves
while its layer-norm output stays put. The batch panel (Alt-5) watches row 1
(T) while row 5 (C, the companion) is the one you change.]],
     set = {target = 1},
     focus = "batch",
     try = {text = [[
Change row 5 and watch row 1 in the batch panel: which of its two
outputs moves?]],
            check = function(s)
              local b = result().batch
              if maxdiff(b.target_now, b.target_base) == 0 then return "change row 5" end
              local ln1 = ns.normalize(ns.tensor{X[1]}, {kind = "layer", eps = s.eps}):flat()
              local d = maxdiff(b.ln:slice(1, 1, 1):flat(), ln1)
              return d < 1e-12 or "keep row 1 as it was"
            end,
            hints = {"With the batch panel focused, Down moves to row 5; type a number " ..
                       "and Enter.",
                     "Batch norm's statistics for each column include row 5; layer norm's " ..
                       "for row 1 use row 1 only.",
                     "set{batch = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, " ..
                       "{7, 9, 17, 10}, {0, 1, 2, 30}}}"},
            show = {batch = {X[1], X[2], X[3], X[4], {0, 1, 2, 30}}}}},

    {text = [[
Exercise 4. A standardised value of 0.5 goes through gamma = 2 and
beta = -1. Where does it land, and where does it sit in the new frame?
The input panel (Alt-1) has a vector with mean 0 and standard deviation 1
whose first value is 0.5.]],
     set = {x = {0.5, -0.5, math.sqrt(1.75), -math.sqrt(1.75)}, kind = "layer", eps = 0},
     focus = "input",
     try = {text = [[
Type the output of the 0.5: = and a number.]],
            answer = {value = function(s)
                        return ns.normalize(s.x, {kind = "layer", eps = 0, gamma = 2,
                                                  beta = -1})[1]
                      end, tol = 1e-6},
            hints = {"y = gamma x_hat + beta.",
                     "2 x 0.5 - 1.",
                     "0: the new frame has mean beta = -1 and spread gamma = 2, and the " ..
                       "value still sits half a spread above its mean."}}},

    {text = [[
Its number changed, not its place: the output panel (Alt-3) shows y
with gamma 2 and beta -1 now, and the first value sits half a spread
(gamma = 2) above the new mean (beta).]],
     set = {gamma = 2, beta = -1},
     claims = function(s) claim("n-ex4-affine", result().y[1]) end,
     focus = "output",
     try = {text = [[
Which beta puts that value at 1 instead (gamma still 2)? Set it and
check the first output.]],
            check = function(s)
              local y = result().y[1]
              return math.abs(y - 1) < 1e-9 or string.format("the first output is %.4f", y)
            end,
            hints = {"1 = 2 x 0.5 + beta.", "set{beta = 0}"},
            show = {beta = 0}}},

    {text = [[
Exercise 5. What does eps prevent when every value of a reference set
is the same? The input becomes x = (3, 3, 3, 3) with eps = 1e-5: once
you answer, the output panel (Alt-3) shows it; then the try removes eps.]],
     predict = {question = "Exercise 5: x = (3, 3, 3, 3) under layer norm with eps = 1e-5. What " ..
                  "is every output?",
                choices = {"0", "1", "NaN (0 / 0)", "an error"},
                answer = function(s)
                  local y = result().y
                  if y:abs():max() == 0 then return 1 end
                  if y[1] ~= y[1] then return 3 end
                  return 2
                end},
     set = {x = {3, 3, 3, 3}, eps = EPS, gamma = {}, beta = {}},
     focus = "output",
     claims = function(s) claim("n-ex5-constant-eps", result().y:abs():max()) end,
     try = {text = [[
Now take eps away and read what the output panel reports.]],
            check = function(s)
              if s.eps ~= 0 then return "set eps to 0" end
              return result().ndegenerate > 0 or "nothing is degenerate"
            end,
            hints = {"e in the settings makes eps ten times smaller; below 1e-12 it is 0.",
                     "set{eps = 0}"},
            show = {eps = 0}}},
  },
}
