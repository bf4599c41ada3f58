-- Text 002, Level 2, "Evaluation uses the training reference distribution" (Fig. 13.4):
-- default_rng(90), 1000 training values from N(0, 1), then 300 evaluation values from
-- N(2, 1); the evaluation values under their own statistics and under the stored ones.
-- The train/eval panel draws exactly these (seed 90, one training batch of 1000, an
-- evaluation batch of 300 from N(eval_loc, eval_scale)), and its exact-merge estimator
-- is the stored training mean and variance; the V view splits the gap.
local EPS = 1e-5

-- The draws, once per file, for the histogram: training first, then evaluation.
local g = ns.rng(90)
local TRAIN = g:normal(0, 1, 1000)
local EVAL = g:normal(2, 1, 300)

-- The state that makes the train/eval panel draw the chapter's numbers.
local PANEL = {seed = 90, train_source = "rng", train_loc = 0, train_scale = 1,
               train_batches = 1, batch_size = 1000, eval_loc = 2, eval_scale = 1,
               eval_size = 300, momentum = 0.1}

-- The mean of the evaluation batch's outputs under its own statistics and under the
-- stored (exactly merged) training statistics, as the panel computes them.
local function mean_own() return ns.tensor(result().train.eval_y):mean() end
local function mean_stored() return ns.tensor(result().train.exact.y):mean() end

local function column(t) return t:reshape({#t, 1}) end

local function panel_set(extra)
  local t = {}
  for k, v in pairs(PANEL) do t[k] = v end
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

lesson{
  title = "Level 2: evaluation keeps the training reference",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 2 - Mechanics: Evaluation uses the training reference distribution",
  steps = {
    {text = [[
An experiment with a shifted test set. Training activations: 1000
values from N(0, 1). Evaluation activations: 300 values from N(2, 1),
shifted by 2 (both drawn with numpy's default_rng(90)); the figure (F) has
the two histograms (the left of Fig. 13.4).

The train/eval panel (Alt-6) draws exactly these: seed 90, one training batch
of 1000, an evaluation batch of 300 from N(eval_loc = 2, eval_scale =
1). Normalised with its own batch statistics, as train mode does, the
evaluation batch has mean output 0: the shift is gone from view. The
output panel shows the same on the 300 values as x.]],
     set = panel_set{x = column(EVAL), kind = "batch", mode = "train", eps = EPS,
                     gamma = {}, beta = {}},
     focus = "train",
     figure = function(s)
       return ns.plot.hist({TRAIN, EVAL}, {width = 72, height = 12, bins = 30,
                                           density = true, xlabel = "activation",
                                           labels = {"training", "evaluation"},
                                           title = "Fig. 13.4 (left): the two inputs"})
     end,
     claims = function(s)
       claim("n-eval-current-mean", mean_own())
     end},

    {text = [[
Normalise the same values with the stored training mean (-0.026) and
variance (0.999), as eval mode does (the exact row). The mean output is
2.118 (V: "mean eval output"; 0 with own statistics): the data sit two
training standard deviations up. Not a bug: the inputs left the
training reference. (V; F: figure)]],
     focus = "shift",
     figure = function(s)
       return ns.plot.bars({mean_own(), mean_stored()},
                           {width = 60, height = 10, labels = {"own batch", "stored training"},
                            title = "Fig. 13.4 (right): mean output"})
     end,
     claims = function(s)
       claim("n-eval-stored-mean", mean_stored())
     end},

    {text = [[
Stored statistics make one function for every batch. V splits the gap:
the estimator part is what 1000 training draws get wrong about N(0, 1)
(small), the shift part what the evaluation shift costs (about 2.1).]],
     focus = "shift",
     try = {text = [[
Put the evaluation distribution back: eval_loc 0 (( twice, or
set{eval_loc = 0}). The mean output falls near 0, and the shift part
shrinks to the evaluation batch's own sampling noise.]],
            check = function(s)
              local m = mean_stored()
              return math.abs(m) < 0.2 or
                       string.format("mean output under stored statistics: %.3f", m)
            end,
            hints = {"( and ) move the evaluation mean by 1",
                     [[set{eval_loc = 0}]]},
            show = {eval_loc = 0}}},
  },
}
