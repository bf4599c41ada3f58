-- Text 004 (the essay), "Price 2: training and inference diverge": one example's output
-- depends on its batch; inference has no batch, so batch norm switches to running
-- statistics; layer norm changes one axis and loses both problems.

-- A batch of four examples with one feature; the learner edits the second one.
local BATCH = {{0.5}, {1.5}, {-1}, {2}}

-- Largest |a_i - b_i| of two Lua arrays.
local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

lesson{
  title = "Price 2: training and inference compute different things",
  source = "004_f7fd3ff892c4fe59.txt",
  section = "Price 2: training and inference diverge",
  steps = {
    {text = [[
With batch statistics, an example's output depends on who else is in its
batch. The batch panel (Alt-5) holds four examples of one feature; row 1 is the
one we watch, row 2 the one you change. The panel compares row 1's batch
norm output now with its output when row 2 holds its first value (1.5).
In training this wobble acts a little like noise added to the network,
which can even help (the regularising side effect).]],
     set = {batch = BATCH, target = 1, companion = 2, baseline = {1.5}, eps = 1e-5,
            eps_at = "var", ddof = 0},
     focus = "batch",
     try = {text = [[
Change example 2 only (set{batch = {{0.5}, {-3}, {-1}, {2}}}) and watch
row 1's output move although row 1 did not change.]],
            check = function(s)
              local b = result().batch
              local d = maxdiff(b.target_now, b.target_base)
              return d > 0.05 or string.format("row 1 moved by only %.3g", d)
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{0.5}, {-3}, {-1}, {2}}}]]},
            show = {batch = {{0.5}, {-3}, {-1}, {2}}}}},

    {text = [[
At inference one example has no batch, so batch norm keeps running
estimates of mean and variance from training and uses them in eval mode.
The train/eval panel (Alt-6) draws training batches of 4 from N(4, 2) and
one evaluation batch; a gap is the largest change between normalising it
by itself (train) and by the running estimates (eval). At batch 4 it is
large (about 0.8, even for the exact state).]],
     set = {kind = "batch", batch_size = 4, train_batches = 8, train_source = "rng",
            train_loc = 4, train_scale = 2, momentum = false},
     focus = "train",
     try = {text = [[
Make batches larger (set{batch_size = 128}): the exact state's gap drops
below 0.3, but never vanishes: the two paths compute different things.]],
            check = function(s)
              local g = result().train.exact.gap
              return g < 0.3 or string.format("the exact gap is still %.3f", g)
            end,
            hints = {"batch_size has no key: set it at the prompt (:)",
                     [[set{batch_size = 128}]]},
            show = {batch_size = 128}}},

    {text = [[
Layer norm takes its statistics along one example's features (mean_F,
std_F), not the batch:
  z = (z-mean_F z)/(std_F z + 1e-5)
One axis changes, and every property above with it: each example is
normalised from its own features, so the batch size drops out, training
and inference compute the same, and a batch may mix examples of any
length. Transformers use it. The output panel (Alt-3): layer norm on
x = (-2, -1, 1, 2).]],
     set = {kind = "layer", x = {-2, -1, 1, 2}, mode = "train"},
     focus = "output",
     try = {text = [[
Switch to eval mode (set{mode = "eval"}): layer norm's output stays.
(Kind batch in eval mode would use running statistics.)]],
            -- both halves pass: eval mode under layer norm (y does not move), and then
            -- kind batch in eval mode (y moves to the running statistics)
            check = function(s)
              if s.mode ~= "eval" then return "mode is still " .. s.mode end
              local own = ns.normalize(s.x, {kind = s.kind, eps = s.eps})
              local d = (result().y - own):abs():max()
              if s.kind == "layer" then
                return d == 0 or string.format("y moved by %.3g under layer norm?", d)
              end
              if s.kind == "batch" then
                return d > 1e-6 or "batch norm in eval mode should use the running statistics"
              end
              return "use kind layer, then kind batch"
            end,
            hints = {"m switches between train and eval mode",
                     [[set{mode = "eval"}]]},
            show = {mode = "eval"}}},

    {text = [[
So layer norm is not a better batch norm. It standardises along another
axis and is therefore a different function: it never sees the batch, so
it has neither price, but it also forgets a per-example offset and scale
that batch norm keeps. The output panel (Alt-3) has two examples, the second
the first plus 10, under layer norm: their rows of y are the same.]],
     set = {x = {{1, 2, 4}, {11, 12, 14}}, kind = "layer", mode = "train"},
     focus = "output",
     try = {text = [[
Switch the same two examples to batch norm (k K in the settings, or
set{kind = ...}) and see the offset come back: the two rows differ.]],
            check = function(s)
              if s.kind ~= "batch" then return "the kind is " .. s.kind end
              local y = result().y
              return (y:slice(1, 1, 1) - y:slice(1, 2, 2)):abs():max() > 0.5 or
                       "the rows are still alike"
            end,
            hints = {"Batch norm compares each feature across the two examples.",
                     "set{kind = \"batch\"}"},
            show = {kind = "batch"}}},
  },
}
