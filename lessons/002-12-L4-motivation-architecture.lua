-- Text 002, Level 4 (research and systems), the subsections on the motivation and on the
-- architecture: why batch norm helps is disputed, and the reference set that suits conv
-- nets, small batches and Transformers (per-token layer norm, group and RMS norm).
local IMG = ns.rng(5):normal(0, 1, {2, 4, 3, 3})
local SEQ = ns.rng(6):normal(0, 1, {2, 3, 8})

lesson{
  title = "Level 4: why it works, and which reference set fits",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 4: the motivation, and the reference set each architecture suits",
  steps = {
    {text = [[
Batch norm was proposed to reduce "internal covariate shift", the drift
of intermediate distributions during training. It also changes the
geometry of the optimisation, often allows larger learning rates, and
adds noise through batch statistics. Which of these matters depends on
the model: report the measured effect in your model rather than one
mechanism as the explanation.

In convolutional networks batch norm fits well: a channel's statistics
pool the batch and all pixels. The output panel (Alt-3) normalises a 2 x
4 x 3 x 3 image batch that way (axes 1, 3 and 4): 4 statistics, one per
channel, each over 2 x 9 = 18 values.]],
     set = {x = IMG, kind = "batch", axes = "default", groups = 1, eps = 1e-5,
            gamma = {}, beta = {}, mode = "train"},
     focus = "output"},

    {text = [[
Recurrent and autoregressive models are less friendly to batch norm:
sequence lengths, order and batch sizes vary, and the statistics vary
with them. At the extreme, one example per batch leaves batch norm
nothing to compare with. (Alt-3)]],
     set = {x = {{0.3, -1.2, 2.0, 0.7}}},
     focus = "output",
     try = {text = [[
The input is a batch of one observation. Look at the output: every value
is 0 (each feature equals its own mean). Switch to layer norm
(set{kind = "layer"}) and the observation gets a real output.]],
            check = function(s)
              if result().y:abs():max() == 0 then return "the output is still all zero" end
              return s.kind ~= "batch" or "batch norm has one value per statistic"
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},

    {text = [[
Layer norm was built to avoid batch dependence and became part of the
Transformer. There each token's hidden vector is normalised on its own:
here 2 sequences x 3 tokens x 8 features give 6 statistics. Whether it
sits before or after the attention and feed-forward blocks changes the
gradient along the residual path (text 000's placement lesson shows
it). (Alt-3)]],
     set = {x = SEQ, kind = "layer"},
     focus = "output"},

    {text = [[
Group norm was designed for small per-device image batches, where batch
estimates are unstable. How many groups to use is the designer's call:
each extra group shrinks the reference sets, and the scale is then taken
out over fewer channels at a time. RMS norm drops the mean and saves
some work; in a language model judge it with the rest of the residual
architecture, not as a drop-in swap. (Alt-3)]],
     set = {x = IMG, kind = "group", groups = 2},
     focus = "output",
     try = {text = [[
Make the reference sets as small as group norm allows on this tensor
(one channel per group, set{groups = 4}) and read off the number of
statistics: 8, each over 9 values.]],
            check = function(s)
              if s.kind ~= "group" then return "keep kind group" end
              return #result().mean == 8 or (#result().mean .. " statistics")
            end,
            hints = {"g and G give fewer or more groups",
                     [[set{groups = 4}]]},
            show = {groups = 4}}},
  },
}
