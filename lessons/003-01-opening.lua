-- Text 003 (the course lesson), its opening: the moving-target problem of a deep stack,
-- standardization as a layer of the forward pass, and the one choice that separates the
-- family (which entries are pooled into a mean and a variance).
local X = {2, 4, 6, 8}
-- four examples (rows) of three features (columns)
local M = {{2, 1, 0}, {4, -1, 3}, {6, 0, 1}, {8, 2, -2}}

lesson{
  title = "Normalization: a fixed scale for a moving target",
  source = "003_5350b2b8404a7fc0.txt",
  section = "Normalization (opening)",
  steps = {
    {text = [[
Layer k learns from layers below that change every step, so its input
drifts in mean and spread. The input panel: one feature, four examples;
the output panel (Alt-3) standardizes them over the batch (kind batch,
eps 0). Its shift probe (+10) and scale probe (x2) both give y again:
the drift is gone.]],
     set = {x = X, kind = "batch", eps = 0, gamma = {}, beta = {}, shift = 10,
            scale = 2},
     focus = "output",
     try = {text = [[
Drift it another way (set{shift = -3.5} or set{scale = 0.1}): the
probes' largest change stays 0.]],
            check = function(s)
              if s.shift == 10 and s.scale == 2 then
                return "shift is still 10 and scale still 2"
              end
              local r = result()
              if s.scale <= 0 then return "use a positive scale" end
              return (r.shift_dev < 1e-12 and r.scale_dev < 1e-12) or
                       string.format("largest change %.3g: use kind batch, eps 0",
                                     math.max(r.shift_dev, r.scale_dev))
            end,
            hints = {"s and S move the shift probe's b",
                     [[set{shift = -3.5, scale = 0.1}]]},
            show = {shift = -3.5, scale = 0.1}}},

    {text = [[
The standardization does not happen once, to the data set, before
training. It is a layer inside the forward pass, recomputed for every
batch, and the gradient flows through its mean and variance like through
any other operation (lesson 003-03 follows it).

A fixed mean 0 and variance 1 may be the wrong place for the next layer,
so two learned numbers per feature put it back: y = gamma x_hat + beta.
This step sets gamma 3 and beta -1: the output panel (Alt-3) now shows mean -1
and standard deviation 3.]],
     set = {gamma = 3, beta = -1},
     focus = "output"},

    {text = [[
Every member of the family centres by a mean, rescales by a standard
deviation, then applies gamma and beta; only which entries share a mean
and a variance differs.

Here x is a batch of 4 examples (rows) by 3 features (columns). Batch
norm pools each column: 3 statistics, one per feature, each over 4
examples. The output panel (Alt-3) lists the 3 means (5, 0.5 and 0.5).]],
     set = {x = M, kind = "batch", gamma = {}, beta = {}},
     focus = "output",
     try = {text = [[
Switch to layer norm (set{kind = "layer"}): it pools each row instead,
so there are 4 statistics, one per example, each over 3 features.]],
            check = function(s)
              local n = #result().mean
              return n == 4 or ("there are " .. n .. " statistics, not 4 (kind " ..
                                s.kind .. ")")
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},
  },
}
