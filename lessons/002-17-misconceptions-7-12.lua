-- Text 002, "Common misconceptions", items 7 to 12: each belief refuted by an experiment
-- on the screen, with a change for the learner to make.
local COL = {{1}, {2}, {4}, {7}, {11}}
local IMG = ns.rng(5):normal(0, 1, {2, 4, 3, 3})

-- A small image batch, N x C x H x W = 2 x 4 x 2 x 2, and the same values channels-last.
local NCHW = ns.rng(8):normal(0, 1, {2, 4, 2, 2})
local function to_nhwc(t)
  local f, out = t:flat(), {}
  for n = 1, 2 do
    for h = 1, 2 do
      for w = 1, 2 do
        for c = 1, 4 do out[#out + 1] = f[(((n - 1) * 4 + (c - 1)) * 2 + (h - 1)) * 2 + w] end
      end
    end
  end
  return ns.tensor(out, {2, 2, 2, 4})
end
local NHWC = to_nhwc(NCHW)

-- Group norm done right for the NHWC values: on the NCHW tensor, then laid out NHWC.
local function right_gn(groups, eps)
  return to_nhwc(ns.normalize(NCHW, {kind = "group", groups = groups, eps = eps}))
end

-- Per-channel sums and sums of squares of one sample (one worker) of a rank-4 batch.
local function worker_sums(x, n)
  local part = x:slice(1, n, n)
  return part:sum({1, 3, 4}):flat(), part:square():sum({1, 3, 4}):flat()
end

lesson{
  title = "Misconceptions 7 to 12, tested",
  source = "002_22013a1826c4c83c.txt",
  section = "Common misconceptions (7-12)",
  steps = {
    {text = [[
Belief 7: "RMS norm is layer norm with another eps." It drops the mean
subtraction (and usually the bias). The output panel (Alt-3) shows RMS
norm of x = (2, 3, 4, 5): its mean is far from 0, and the shift probe
(x + 10) moves the output, which layer norm's never does.]],
     predict = {question = "Belief 7 says RMS norm is layer norm with another eps. RMS " ..
                  "norm of x = (2, 3, 4, 5): what is the mean of its output?",
                value = function(s) return result().y_mean end, tol = 0.02},
     set = {x = {2, 3, 4, 5}, kind = "rms", axes = "default", eps = 1e-5, gamma = {},
            beta = {}, mode = "train", shift = 10, scale = 2, dtype = "fp64",
            acc = "default", groups = 1},
     focus = "output",
     try = {text = [[
Look for an eps that turns RMS norm into layer norm: try a few
(set{eps = 1}, set{eps = 1e-9}, ...). The output mean never gets near 0.]],
            check = function(s)
              if s.eps == 1e-5 then return "change eps" end
              local m = result().y_mean
              return m > 0.5 or string.format("mean %.3f", m)
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 1}]]},
            show = {eps = 1}}},

    {text = [[
Belief 8: "group norm does not depend on axis choices." Its groups split
the channel axis, so it must know which axis that is. Here an image batch
is stored channels-last (N x H x W x C, 2 x 2 x 2 x 4); group norm with 2
groups takes axis 2 (height) as channels: finite output, wrong numbers
(the figure line (F) gives the distance to the right ones). (Alt-3)]],
     predict = {question = "Belief 8 says group norm does not depend on axis choices. " ..
                  "Group norm (2 groups) of an image batch stored channels-last: does it " ..
                  "give the channels-first answer?",
                choices = {"yes, the same numbers", "no: it takes the height for the channels"},
                answer = function(s)
                  return (result().y - right_gn(s.groups, s.eps)):abs():max() < 1e-12 and 1 or 2
                end},
     set = {x = NHWC, kind = "group", groups = 2},
     focus = "output",
     figure = function(s)
       local d = (result().y - right_gn(s.groups, s.eps)):abs():max()
       return string.format("groups %d: max |this - right| = %.3g", s.groups, d)
     end,
     try = {text = [[
One grouping makes the layout irrelevant: G = 1 puts a sample's values
in one set (set{groups = 1}), and the distance drops to 0.]],
            check = function(s)
              local d = (result().y - right_gn(s.groups, s.eps)):abs():max()
              return d < 1e-12 or string.format("still %.3g from the right answer", d)
            end,
            hints = {"g and G give fewer or more groups",
                     [[set{groups = 1}]]},
            show = {groups = 1}}},

    {text = [[
Belief 9: "with normalisation, initialisation no longer matters." Here
x = 0.001 (-2, -1, 1, 2), as if weights started 1000 times too small;
layer norm, eps 0. The output equals that of (-2, -1, 1, 2), but the
spectrum's (Alt-4) largest eigenvalue is 632: gradients come back 1000
times larger. Stability still depends on the scale (text 004 goes on).]],
     predict = {question = "Belief 9 says initialisation no longer matters with " ..
                  "normalisation. Layer norm (eps 0) of 0.001 (-2, -1, 1, 2): the largest " ..
                  "eigenvalue of its Jacobian?",
                value = function(s) return result().jacobian.smax end, tol = 5},
     set = {x = {-0.002, -0.001, 0.001, 0.002}, kind = "layer", eps = 0},
     focus = "spectrum",
     try = {text = [[
Restore the normal scale (set{x = {-2, -1, 1, 2}}): the same output, and
the largest eigenvalue falls to 0.632.]],
            check = function(s)
              local j = result().jacobian
              return j.smax < 1 or string.format("largest singular value %.3g", j.smax)
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {-2, -1, 1, 2}}]]},
            show = {x = {-2, -1, 1, 2}}}},

    {text = [[
Belief 10: "a finite output proves the layer is set up right." Batch
norm on the running matrix with the wrong axis (axes {2}, across the
features): every output is finite, the shape is right, the values look
normalised, yet the columns do not have mean 0. (Alt-3: the output
panel)]],
     predict = {question = "Belief 10 says a finite output proves the layer is set up " ..
                  "right. Batch norm of the running matrix with axes {2}: does every column " ..
                  "of y have mean 0?",
                choices = {"yes", "no"},
                answer = function(s)
                  return result().y:mean({1}):abs():max() < 1e-9 and 1 or 2
                end},
     set = {x = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10},
                 {11, 15, 23, 14}}, kind = "batch", axes = {2}, eps = 1e-5},
     focus = "output",
     try = {text = [[
Restore the kind's own axes (set{axes = "default"}) and check that now
each column of the output has mean 0.]],
            check = function(s)
              local m = result().y:mean({1}):abs():max()
              return m < 1e-9 or string.format("a column mean is %.3g", m)
            end,
            hints = {"A steps the reduction axes",
                     [[set{axes = "default"}]]},
            show = {axes = "default"}}},

    {text = [[
Belief 11: "train and eval mode differ only for dropout." Batch norm
changes where its statistics come from. One feature (1, 2, 4, 7, 11) in
eval mode: normalised with the train/eval panel's running estimates, so
its mean is not 0. (Alt-3)]],
     predict = {question = "Belief 11 says train and eval mode differ only for dropout. " ..
                  "Batch norm of (1, 2, 4, 7, 11) in eval mode: the mean of y?",
                value = function(s) return result().y_mean end, tol = 0.05},
     set = {x = COL, kind = "batch", axes = "default", mode = "eval"},
     focus = "output",
     try = {text = [[
Switch to train mode (set{mode = "train"}) and the same input gives a
different output: the batch's own statistics.]],
            check = function(s)
              if s.mode ~= "train" then return "switch to train mode" end
              local t = result().train.momentum
              local ev = (s.x - t.mean[1]) / math.sqrt(t.var[1] + s.eps)
              local d = (result().y - ev):abs():max()
              return d > 0.1 or string.format("train and eval differ by %.3g only", d)
            end,
            hints = {"m switches between train and eval mode",
                     [[set{mode = "train"}]]},
            show = {mode = "train"}}},

    {text = [[
Belief 12: "synchronised batch norm is free." The output panel (Alt-3):
batch norm on a 2 x 4 x 3 x 3 image batch. Split it over two workers,
one sample each. To normalise with the statistics of both, each worker
must send, in every forward pass and for every batch-norm layer, its
count and a sum and a sum of squares per channel, and wait for the
others. The figure (F) has those numbers and the merged means.]],
     predict = {question = "Belief 12 says synchronised batch norm is free. Two workers, " ..
                  "4 channels: how many numbers must each send per layer and forward pass?",
                value = function(s) return 2 * s.x:shape()[2] + 1 end, tol = 0},
     set = {x = IMG, mode = "train"},
     focus = "output",
     figure = function(s)
       local C = s.x:shape()[2]
       local s1, q1 = worker_sums(s.x, 1)
       local s2, q2 = worker_sums(s.x, 2)
       local per = #s.x // (2 * C)
       local l = {string.format("channel   worker 1 sum, sumsq   worker 2 sum, sumsq   merged mean"),}
       for c = 1, C do
         l[#l + 1] = string.format("%7d   %8.3f %10.3f   %8.3f %10.3f   %11.4f", c, s1[c], q1[c],
                                   s2[c], q2[c], (s1[c] + s2[c]) / (2 * per))
       end
       l[#l + 1] = string.format("sent per worker per layer per pass: %d numbers", 2 * C + 1)
       return table.concat(l, "\n")
     end,
     try = {text = [[
Widen the layer: set{x = ns.rng(1):normal(0, 1, {2, 8, 3, 3})} has 8
channels. The message each worker sends grows with the channels.]],
            check = function(s)
              local shp = s.x:shape()
              if #shp ~= 4 then return "use a rank-4 image batch" end
              return shp[2] > 4 or "still 4 channels"
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = ns.rng(1):normal(0, 1, {2, 8, 3, 3})}]]},
            show = {x = ns.rng(1):normal(0, 1, {2, 8, 3, 3})}}},
  },
}
