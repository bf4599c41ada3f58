-- Text 001 (the review article), section 7: in eval mode batch norm uses stored running
-- statistics, which are part of the model's state; the same input under two sets of
-- statistics; statistics from another distribution shift the outputs.
local X = {3, 5, 4, 6, 2, 4.5}

-- Largest |a - b| of two tensors.
local function maxdiff(a, b) return (a - b):abs():max() end

lesson{
  title = "Inference statistics are extra state",
  source = "001_5d139345c05ab941.txt",
  section = "7 Inference statistics introduce an additional state",
  steps = {
    {text = [[
In eval mode a batch-norm layer does not use the batch: it uses a stored
mean and variance, accumulated while training. Those numbers are state
of the model just as much as the weights, and a saved model without
them cannot reproduce its predictions. Here x is a batch of 6 values of
one feature; the train/eval panel has trained running statistics on 8
batches of 32 draws from N(4, 2). (Alt-3)]],
     set = {x = X, kind = "batch", eps = 1e-5, eps_at = "var", ddof = 0, gamma = {},
            beta = {}, mode = "train", train_source = "rng", train_loc = 4, train_scale = 2,
            train_batches = 8, batch_size = 32, momentum = false},
     focus = "output"},

    {text = [[
The check the article recommends is the one the m key makes here: the
weights stay, the input stays, only the statistics change. Train mode
takes the batch's own mean and variance, eval mode the stored pair. How
far y moves tells you how much the output leans on that stored state;
it does not tell you that the network learned badly.
(Alt-3)]],
     focus = "output",
     try = {text = [[
Switch to eval mode (set{mode = "eval"}) and compare y with the train-mode
output: same x, same layer, different statistics.]],
            check = function(s)
              if s.mode ~= "eval" then return "mode is still " .. s.mode end
              local own = ns.normalize(s.x, {kind = "batch", eps = s.eps})
              local d = maxdiff(result().y, own)
              return d > 1e-3 or string.format("y moved by only %.3g", d)
            end,
            hints = {"m switches between train and eval mode",
                     [[set{mode = "eval"}]]},
            show = {mode = "eval"}}},

    {text = [[
Statistics estimated on one distribution and used on another shift the
outputs systematically. Keep eval mode and let the running statistics
come from N(0, 2) instead: the inputs (mean about 4) now all look large,
and the output mean is far from 0. (Alt-3)]],
     set = {mode = "eval", train_loc = 0},
     focus = "output",
     try = {text = [[
Train the running statistics on the inputs' own distribution again
(set{train_loc = 4}) and watch the mean of y come back toward 0.]],
            check = function(s)
              local m = result().y_mean
              return math.abs(m) < 0.5 or string.format("the mean of y is %.3f", m)
            end,
            hints = {"train_loc has no key: set it at the prompt (:)",
                     [[set{train_loc = 4}]]},
            show = {train_loc = 4}}},

    {text = [[
A deployment that recomputes the statistics from incoming data has
changed what is being evaluated, and it ties one user's prediction to
whoever else arrived in the same batch (the coupling of lesson 001-s06).
If stored statistics are adapted, use a declared, authorised data set,
compare with the frozen statistics, and keep test labels out of it:
otherwise adaptation becomes leakage. The output panel (Alt-3) is back in train
mode (m toggles it): y is centred again by the batch's own statistics,
which is what recomputing at deployment does.]],
     set = {mode = "train"},
     focus = "output"},
  },
}
