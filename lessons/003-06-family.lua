-- Text 003 (the course lesson), "The family: which axes are normalized" and "Layer norm,
-- written out": the N x C grid shaded by statistic for each kind, the batch-dependence
-- table and its experiment, layer norm at train and test, a batch of one, RMS norm, small
-- batches, and the group-norm count exercise.
local N, C, H, W = 4, 6, 2, 2
local X4 = ns.rng(5):normal(0, 1, {N, C, H, W})
local KINDS = {{kind = "batch"}, {kind = "layer"}, {kind = "instance"},
               {kind = "group", groups = 3}}

-- The spec of a kind entry, with eps.
local function spec_of(k, eps)
  return {kind = k.kind, groups = k.groups, eps = eps or 1e-5}
end

-- Which statistic each (n, c) cell of the N x C grid belongs to, read off the shape of
-- the statistics ns.normalize returns (axis 1: one per example or one for all; axis 2:
-- one per channel, one per group of channels, or one for all).
local function grid(k)
  local _, st = ns.normalize(X4, spec_of(k))
  local sh = st.mean:shape()
  local m = {}
  for n = 1, N do
    m[n] = {}
    for c = 1, C do
      local i = sh[1] > 1 and n or 1
      local j = sh[2] == C and c or sh[2] > 1 and math.ceil(c * sh[2] / C) or 1
      m[n][c] = (i - 1) * sh[2] + j
    end
  end
  return m
end

-- Two text figures side by side (equal-width lines, ASCII).
local function side_by_side(a, b)
  local la, lb = {}, {}
  for l in (a .. "\n"):gmatch("(.-)\n") do la[#la + 1] = l end
  for l in (b .. "\n"):gmatch("(.-)\n") do lb[#lb + 1] = l end
  local w = 0
  for _, l in ipairs(la) do w = math.max(w, #l) end
  local out = {}
  for i = 1, math.max(#la, #lb) do
    local l = la[i] or ""
    out[i] = l .. string.rep(" ", w - #l + 3) .. (lb[i] or "")
  end
  return table.concat(out, "\n")
end

local function shading(k)
  local title = k.kind .. (k.groups and (" (G = " .. k.groups .. ")") or "")
  return ns.plot.heatmap(grid(k), {width = 36, height = 8, ascii = true, title = title,
                                   labels = {rows = {"n1", "n2", "n3", "n4"},
                                             cols = {"c1", "c2", "c3", "c4", "c5", "c6"}}})
end

-- How much example 1's output moves when only example 2 changes (x any rank >= 2, the
-- state's spec): 0 for the batch-independent kinds.
local function dependence(x, sp)
  local x2 = x:copy()
  local f = x2:flat()
  local per = #f // x:shape()[1]
  for i = per + 1, 2 * per do f[i] = f[i] * 3 + 1 end
  x2 = ns.tensor(f, x:shape())
  local y1 = ns.normalize(x, sp):slice(1, 1, 1)
  local y2 = ns.normalize(x2, sp):slice(1, 1, 1)
  return (y1 - y2):abs():max()
end

local function state_spec(s)
  return {kind = s.kind, groups = s.groups, eps = s.eps}
end

-- The spread of batch means of N(0, 1) for batch sizes 2 .. 32: 200 batches each
-- (seed 17), computed once for the figure.
local SIZES = {2, 4, 8, 16, 32}
local MEANS = {}
do
  local g = ns.rng(17)
  for i, m in ipairs(SIZES) do
    MEANS[i] = g:normal(0, 1, {200, m}):mean({2}):flat()
  end
end

lesson{
  title = "The family: which axes are normalized",
  source = "003_5350b2b8404a7fc0.txt",
  section = "The family: which axes are normalized",
  steps = {
    {text = [[
Draw an (N, C, H, W) activation as an N x C grid: a cell per example
and channel, each an H x W map. Every member computes its means and
variances over groups of cells; only the grouping changes. In the
figures (F), cells with one number share a mean and a variance (N = 4,
C = 6, 3 groups). One statistic:
 batch    per channel, all examples
 layer    per example, all channels
 instance per example and channel
 group    per example and group
(Alt-3)]],
     set = {x = X4, kind = "batch", eps = 1e-5, gamma = {}, beta = {}, mode = "train",
            groups = 3},
     focus = "output",
     figure = function(s)
       return side_by_side(shading(KINDS[1]), shading(KINDS[2])) .. "\n\n" ..
                side_by_side(shading(KINDS[3]), shading(KINDS[4]))
     end},

    {text = [[
The input panel now holds such a tensor, (4, 6, 2, 2), and the output
panel counts the statistics: batch norm has 6, one per channel, each
over 4 * 2 * 2 = 16 values. (Alt-3)]],
     focus = "output",
     try = {text = [[
Group norm with 3 groups: how many values does each of its statistics
pool? Type = and a number, then switch (k, or set{kind = "group"}) and
count; instance and layer norm are worth a look too.]],
            answer = {value = function(s)
                        local _, st = ns.normalize(s.x, {kind = "group", groups = 3})
                        return #s.x // #st.mean
                      end, tol = 0},
            hints = {"One statistic per example and group: 4 x 3 of them.",
                     "Each group holds 6 / 3 = 2 channels of 2 x 2 pixels.",
                     "2 x 2 x 2 = 8 values (12 statistics; instance has 24, layer 4)."}}},

    {text = [[
What decides most: is the batch axis N pooled? A statistic pools
 batch    N, H, W of a channel
 layer    C, H, W of an example
 instance H, W of one map
 group    C/G channels, H, W
Only batch norm pools N: it alone depends on other examples, differs
between train and test, and fails at batch 1. The figure (F) changes
example 2 and measures how far example 1 moves, per kind. (Alt-3)]],
     focus = "output",
     figure = function(s)
       local v, labels = {}, {}
       for i, k in ipairs(KINDS) do
         v[i] = dependence(X4, spec_of(k))
         labels[i] = k.kind
       end
       return ns.plot.bars(v, {width = 60, height = 8, labels = labels,
                               title = "change of example 1 when example 2 changes"})
     end,
     try = {text = [[
Pick a batch-independent kind (layer, instance, group): example 1 no
longer feels example 2.]],
            check = function(s)
              local d = dependence(s.x, state_spec(s))
              if d < 1e-12 then return true end
              return string.format("example 1 moves by %.3g under kind %s", d, s.kind)
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "instance"}]]},
            show = {kind = "instance"}}},

    {text = [[
Layer norm for one example, features x_1 .. x_d:
  mu  = (1/d) sum_j x_j
  var = (1/d) sum_j (x_j - mu)^2
  y_j = gamma_j (x_j-mu)/sqrt(var+eps)
        + beta_j
Batch norm's formulas, summed over features, not examples. No other
example enters, so nothing is replaced at test time: train and eval
agree. Input: 3 examples of 4 features, train mode. (Alt-3)]],
     set = {x = {{1, 2, 3, 6}, {0, -1, 4, 2}, {5, 5, 1, 0}}, kind = "layer"},
     focus = "output",
     try = {text = [[
Switch to eval mode (m, or set{mode = "eval"}): layer norm's output
stays. (Batch norm's would move to running statistics.)]],
            check = function(s)
              if s.mode ~= "eval" then return "mode is still train" end
              local y = ns.normalize(s.x, {kind = s.kind, groups = s.groups, eps = s.eps,
                                           gamma = #s.gamma > 0 and s.gamma or nil,
                                           beta = #s.beta > 0 and s.beta or nil})
              local d = (result().y - y):abs():max()
              return d < 1e-15 or string.format("eval moved the output by %.3g (kind %s)",
                                             d, s.kind)
            end,
            hints = {"m switches between train and eval mode",
                     [[set{mode = "eval"}]]},
            show = {mode = "eval"}}},

    {text = [[
A batch of one example: for batch norm each feature has a single value,
its variance over the batch is 0, x - mu is 0, and every output is just
beta (0.5 here). The output panel (Alt-3) warns that each statistic has one
value. Layer norm treats one example like a thousand; that is why it is
the default in Transformers (whose batch axis holds sequences of any
length) and in recurrent networks (the same statistics at every step).]],
     set = {x = {{1, 2, 3, 6}}, kind = "batch", mode = "train", beta = 0.5},
     focus = "output",
     try = {text = [[
Switch this one-example batch to layer norm: its four outputs spread
out again.]],
            check = function(s)
              local y = result().y
              return (y:max() - y:min() > 0.1) or "all outputs are equal (kind " ..
                       s.kind .. ")"
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},

    {text = [[
RMS norm drops the centering: it divides by the root mean square,

  y_j = gamma_j x_j / sqrt((1/d) sum_k x_k^2 + eps)

and has a scale but no shift. One reduction and one parameter vector
fewer per layer, and on large Transformers hardly any loss of accuracy:
recent large language models mostly use it. The output panel's shift
probe shows what was given up: adding 10 now changes the output.
(Alt-3)]],
     set = {x = {2, 3, 4, 5}, kind = "rms", beta = {}},
     focus = "output"},

    {text = [[
Why not always batch norm? With small batches its mu_B and sigma_B^2
are noisy estimates of the population values. The figure (F) draws 200
batch means for batch sizes 2 to 32 (N(0, 1), seed 17): the spread
falls like 1 / sqrt(m). Detection and segmentation models, held to tiny
batches by memory, use group norm; sequence models use layer norm.
(Alt-6)]],
     set = {kind = "batch", x = X4},
     focus = "train",
     figure = function(s)
       local labels = {}
       for i, m in ipairs(SIZES) do labels[i] = "m = " .. m end
       return ns.plot.box(MEANS, {width = 72, height = 12, labels = labels,
                                  ref = {0, "population mean 0"},
                                  title = "200 batch means per batch size"})
     end,
     try = {text = [[
Shrink the train/eval panel's batches to 4 (set{batch_size = 4}): the
gap between train-mode and eval-mode outputs grows.]],
            check = function(s)
              return s.batch_size <= 4 or "batch_size is " .. s.batch_size
            end,
            hints = {"batch_size has no key: set it at the prompt (:)",
                     [[set{batch_size = 4}]]},
            show = {batch_size = 4}}},

    {text = [[
Exercise. A tensor of shape (8, 16, 4, 4) goes through group norm with
G = 4 groups. How many values does each mean and variance pool? Then
put such a tensor in the explorer and let the output panel (Alt-3) count.]],
     set = {batch_size = 32},
     focus = "output",
     try = {text = [[
Type the number of values per statistic: = and a number.]],
            answer = {value = function(s)
                        local x = ns.rng(1):normal(0, 1, {8, 16, 4, 4})
                        local _, st = ns.normalize(x, {kind = "group", groups = 4})
                        return #x // #st.mean
                      end, tol = 0},
            hints = {"Each statistic covers one example and one group of channels, over " ..
                       "all pixels.",
                     "16 / 4 = 4 channels per group, each 4 x 4 pixels.",
                     "64; the output panel counts it with set{x = " ..
                       "ns.rng(1):normal(0, 1, {8, 16, 4, 4}), kind = \"group\", groups = 4}."}}},
  },
}
