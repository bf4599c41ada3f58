-- Text 002, "Summary", "Looking ahead" and the further reading: the four reductions side
-- by side on one matrix, what the shared pattern leaves open, and where to read on.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local KINDS = {"batch", "layer", "group", "rms"}

-- Number of statistics and values per statistic of a kind on X (group: 2 groups).
local function reduction(kind)
  local y, st = ns.normalize(ns.tensor(X), {kind = kind, groups = kind == "group" and 2 or nil})
  return #st.mean, 20 // #st.mean, y
end

lesson{
  title = "Summary: a reference set, and what follows from it",
  source = "002_22013a1826c4c83c.txt",
  section = "Summary; Looking ahead; Further reading",
  steps = {
    {text = [[
The chapter's four kinds on X. The table counts each one's statistics
and the values behind each: batch norm one per column (5 observations
each), layer norm one per row (4 features each), group norm with 2
groups two per row, RMS norm one per row with no mean removed. Only the
grouping differs; batch norm's runs across observations, so it ties a
row's output to its batch. (Alt-3; F: figure)]],
     set = {x = X, kind = "batch", axes = "default", groups = 1, eps = 1e-5, gamma = {},
            beta = {}, mode = "train", dtype = "fp64", acc = "default"},
     focus = "output",
     figure = function(s)
       local l = {"kind    statistics   values each   mean of y"}
       for _, k in ipairs(KINDS) do
         local n, per, y = reduction(k)
         l[#l + 1] = string.format("%-5s   %10d   %11d   %9.3f", k, n, per, y:mean())
       end
       return table.concat(l, "\n")
     end,
     try = {text = [[
Cycle the kinds (set{kind = ...}; group with groups = 2) and watch the
statistics line's count. End on group norm, 2 groups: 10 statistics.]],
            check = function(s)
              if s.kind ~= "group" then return "end on kind group" end
              return #result().mean == 10 or (#result().mean .. " statistics")
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "group", groups = 2}]]},
            show = {kind = "group", groups = 2}}},

    {text = [[
Whatever the kind, the layer runs one recipe: a statistic, then the
subtract-and-divide, then gamma and beta. What the recipe leads to
differs a lot, and each consequence had a panel in these lessons. The
axes decide which rows can move which (the batch panel). Batch norm
must keep a stored state for eval mode (the train/eval panel), and a
small batch makes that state noisy. Workers must swap statistics to
agree. And the tensor layout, the padding, eps and the dtype of the
sums all change the numbers (the settings and precision panels).
(Alt-2)]],
     set = {kind = "batch", groups = 1},
     focus = "settings"},

    {text = [[
Picking a kind means picking which dependency between examples the model
can live with. The layer's name in a config file settles nothing. The
batch panel (Alt-5) does: change a companion row and see whether the target row
moves, then read the statistics line to see which axis was reduced.]],
     focus = "batch"},

    {text = [[
Next in the book: how a gradient becomes a weight step, and how the step
size is scheduled. Normalisation is part of it, as it sets the gradient
size the optimiser gets (001-s08's 1/c law). The spectrum (Alt-4) at
x = (-20, -10, 10, 20), layer norm: the bulk eigenvalue is a tenth of the
0.632 at (-2, -1, 1, 2). Ten times larger activations, ten times smaller
gradients. Reading: Ioffe and Szegedy (2015, batch), Ba et al. (2016,
layer), Wu and He (2018, group), Zhang and Sennrich (2019, RMS), Vaswani
et al. (2017, the Transformer).]],
     set = {x = {-20, -10, 10, 20}, kind = "layer", groups = 1},
     focus = "spectrum"},
  },
}
