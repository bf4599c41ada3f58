-- Text 002, Level 2, "Evaluation uses the training reference distribution" (Fig. 13.4):
-- default_rng(90), 1000 training values from N(0, 1), then 300 evaluation values from
-- N(2, 1); the evaluation values under their own statistics and under the stored ones.
local EPS = 1e-5

-- The draws, once per file: training first, then evaluation, from one stream.
local g = ns.rng(90)
local TRAIN = g:normal(0, 1, 1000)
local EVAL = g:normal(2, 1, 300)
-- The stored statistics: the training values merged exactly (population variance).
local STORED = ns.running{exact = true}
STORED:update(TRAIN)

-- Values normalised with the stored training statistics (batch norm in eval mode).
local function with_stored(x)
  return ns.normalize(x, {kind = "batch", mode = "eval", running = STORED, eps = EPS})
end

local function column(t) return t:reshape({#t, 1}) end

lesson{
  title = "Level 2: evaluation keeps the training reference",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 2 - Mechanics: Evaluation uses the training reference distribution",
  steps = {
    {text = [[
An experiment with a shifted test set. Training activations: 1000
values from N(0, 1). Evaluation activations: 300 values from N(2, 1),
shifted by 2 (both drawn with numpy's default_rng(90)); the left of
Fig. 13.4 shows the two histograms.

The input panel holds the 300 evaluation values as one feature, and the
output panel normalises them with their own batch statistics: the mean
output is 0. The shift is gone from view.]],
     set = {x = column(EVAL), kind = "batch", mode = "train", eps = EPS, gamma = {},
            beta = {}},
     focus = "output",
     figure = function(s)
       return ns.plot.hist({TRAIN, EVAL}, {width = 72, height = 12, bins = 30,
                                           density = true, xlabel = "activation",
                                           labels = {"training", "evaluation"},
                                           title = "Fig. 13.4 (left): the two inputs"})
     end,
     claims = function(s)
       claim("n-eval-current-mean", result().y_mean)
     end},

    {text = [[
Now normalise the same values with the stored training mean (-0.026)
and variance (0.999), as batch norm does in evaluation mode. The mean
output is 2.118: the evaluation data sit two training standard
deviations above where training put them. That is not a bug. It is the
signal that the inputs have moved away from the training reference.]],
     focus = "output",
     figure = function(s)
       local cur = result().y_mean
       local st = with_stored(s.x):mean()
       return ns.plot.bars({cur, st}, {width = 60, height = 10,
                                       labels = {"own batch", "stored training"},
                                       title = "Fig. 13.4 (right): mean output"})
     end,
     claims = function(s)
       claim("n-eval-stored-mean", with_stored(s.x):mean())
     end},

    {text = [[
With the current batch's statistics, each output would also depend on
which other cases were evaluated alongside it. The stored statistics
give one fixed function, the same for every batch.

(The train/eval panel cannot shift its evaluation draws, so this
experiment runs in the lesson: its figures are computed from the draws.)]],
     focus = "output",
     try = {text = [[
Give the layer an evaluation batch from the training distribution, e.g.
set{x = ns.rng(91):normal(0, 1, {300, 1})}. Under the stored statistics
its mean output is now near 0 (the check computes it).]],
            check = function(s)
              local m = with_stored(s.x):mean()
              return math.abs(m) < 0.2 or
                       string.format("mean output under stored statistics: %.3f", m)
            end,
            show = {x = ns.rng(91):normal(0, 1, {300, 1})}}},
  },
}
