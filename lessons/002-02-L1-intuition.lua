-- Text 002, Level 1 (Intuition): a value needs a reference; the reference set decides
-- the meaning (23 under batch and layer norm); centring and scaling are separate jobs,
-- and gamma and beta set a new working range (Fig. 13.2).
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local V = {2, 4, 7, 11, 16}

-- Entry (i, j) of a matrix tensor with d columns (1-based).
local function at(t, i, j, d) return t[(i - 1) * d + j] end

-- Largest absolute difference between two Lua arrays.
local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

-- Fig. 13.2: the vector, centred, standardised, then gamma 1.5 and beta 0.8, one row of
-- dots per stage (the top row is the original).
local function stages_figure(x)
  local t = ns.tensor(x)
  local c = t - t:mean()
  local z = c / t:std()
  local a = z * 1.5 + 0.8
  local xs = {t:flat(), c:flat(), z:flat(), a:flat()}
  local ys = {}
  for k = 1, 4 do ys[k] = ns.full({#x}, 5 - k):flat() end
  return ns.plot.scatter(xs, ys, {width = 72, height = 13, range = {0.5, 4.5},
                                  labels = {"original", "minus the mean", "over the std",
                                            "gamma 1.5, beta 0.8"},
                                  xlabel = "value", title = "Fig. 13.2: four stages"})
end

lesson{
  title = "Level 1: a value means something against a reference",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 1 - Intuition",
  steps = {
    {text = [[
The number 30 says little by itself. Among (30, 60, 90) it is the
smallest; among (10, 20, 30) the largest. Saying "two standard deviations
above the mean" carries its own reference.

A normalisation layer does this to activations. The output panel (Alt-3) shows
layer norm of (30, 60, 90): the 30 becomes -1.22, below its reference
mean, and the signs and the order of the values survive.]],
     set = {x = {30, 60, 90}, kind = "layer", eps = 1e-5, gamma = {}, beta = {}},
     focus = "output",
     try = {text = [[
Put the same 30 into a set where it sits above the mean, e.g.
set{x = {10, 20, 30}}, and watch its output turn positive.]],
            check = function(s)
              local f = s.x:flat()
              for i = 1, #f do
                if f[i] == 30 then
                  local y = result().y[i]
                  return y > 0 or string.format("30 gives %.3f: still below the mean", y)
                end
              end
              return "keep a 30 in x"
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {10, 20, 30}}]]},
            show = {x = {10, 20, 30}}}},

    {text = [[
Back to the running matrix in the batch panel (Alt-5). Batch norm compares the
23 of row 5 with the rest of its column, 7, 11, 13 and 17; layer norm
with the rest of its row, 11, 15 and 14. Two reference sets, two numbers:
1.613 under batch norm, 1.634 under layer norm.]],
     set = {batch = X, target = 1, companion = 5, baseline = X[5]},
     focus = "batch",
     claims = function(s)
       local b = result().batch
       claim("n-bn-x53", at(b.bn, 5, 3, 4))
       claim("n-ln-x53", at(b.ln, 5, 3, 4))
     end},

    {text = [[
Under batch norm row 1 uses the column statistics, so it moves when any
other row does; under layer norm it reads only row 1. The batch panel
(Alt-5) holds row 1 (target) against the batch with row 5 (companion) as
it was.]],
     focus = "batch",
     try = {text = [[
Change row 5: set{batch = {{1,3,7,2}, {2,5,11,4}, {4,7,13,8},
{7,9,17,10}, {11,15,23,40}}}: row 1's batch norm moves, its layer norm stays.]],
            check = function(s)
              local b = result().batch
              if maxdiff(b.target_now, b.target_base) == 0 then
                return "row 1's batch norm has not moved: change row 5"
              end
              local ln1 = ns.normalize(ns.tensor{X[1]}, {kind = "layer", eps = s.eps}):flat()
              local d = maxdiff(b.ln:slice(1, 1, 1):flat(), ln1)
              return d < 1e-12 or "change row 5 only, keep row 1"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 40}}}]]},
            show = {batch = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8},
                             {7, 9, 17, 10}, {11, 15, 23, 40}}}}},

    {text = [[
Centring and scaling are two jobs. Subtracting the mean moves the values
around zero; dividing by the standard deviation then counts each value's
distance from the mean in multiples of the spread. Take v = (2, 4, 7,
11, 16) with eps 0: the output panel (Alt-3) shows the standardised vector, mean
0 and variance 1 (population). (F: figure)]],
     set = {x = V, eps = 0},
     focus = "output",
     figure = function(s) return stages_figure(V) end,
     claims = function(s)
       local y = result().y
       claim("n-standardised-mean", y:mean())
       claim("n-standardised-var", y:var())
     end},

    {text = [[
The last row of the figure: a learned scale gamma = 1.5 and shift
beta = 0.8 give a new working range. The output now has mean 0.8 and
standard deviation 1.5, on purpose: normalisation fixes a frame of
reference, it does not pin every layer to mean 0 and variance 1.
(Alt-3)]],
     set = {gamma = 1.5, beta = 0.8},
     focus = "output",
     claims = function(s)
       local y = result().y
       claim("n-affine-mean", y:mean())
       claim("n-affine-std", y:std())
     end,
     try = {text = [[
With gamma = 2 and beta = -1 instead, what would the 16 of v become?
Type = and a number (a Lua expression will do), then set them and
compare with the output panel.]],
            answer = {value = function(s)
                        return ns.normalize(s.x, {kind = s.kind, eps = s.eps, gamma = 2,
                                                  beta = -1})[5]
                      end},
            hints = {"First standardise: v has mean 8 and population variance 25.2.",
                     "The 16 is (16 - 8) / sqrt(25.2) = 1.594 standard deviations up.",
                     "2 x 1.594 - 1 = 2.187: set{gamma = 2, beta = -1} shows it."}}},

    {text = [[
RMS norm does only the second job: it divides by the root mean square
and does not subtract the mean. With kind rms, v's output keeps a
positive mean, and every value stays positive: the magnitude is
controlled, the offset is kept. (Alt-3)]],
     set = {kind = "rms", gamma = {}, beta = {}, eps = 1e-5},
     focus = "output"},
  },
}
