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
Normalisation writes activations relative to a chosen reference set.
Batch norm reduces over the observations for each feature, and so makes
the batch a dependency. Layer norm reduces over the features of one
observation or token. Group norm uses groups of channels. RMS norm
fixes the root mean square and does not subtract a mean. The table
shows the four on the running matrix X.]],
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
Cycle the kinds in the output panel (set{kind = ...}; group with
groups = 2) and watch the statistics line change its count. End on
group norm with 2 groups: 10 statistics of 2 values.]],
            check = function(s)
              if s.kind ~= "group" then return "end on kind group" end
              return #result().mean == 10 or (#result().mean .. " statistics")
            end,
            show = {kind = "group", groups = 2}}},

    {text = [[
The recipe is always the same three steps: statistics, transform, learned
scale and shift. What follows from it is not simple. The axes decide who
influences whom; batch norm needs separate train and eval behaviour;
small batches give noisy statistics; several devices may have to talk.
Layout, padding, eps and accumulation precision are part of whether the
method is correct.]],
     set = {kind = "batch", groups = 1},
     focus = "settings"},

    {text = [[
So pick the method from the dependency your architecture can afford.
The name in a config file proves little: measure the statistics along
each axis and run the perturbation tests, and the implementation shows
you what it really does.]],
     focus = "batch"},

    {text = [[
Looking ahead: the next chapter turns to optimisers and learning-rate
schedules. Normalisation changes the scale and the geometry the
optimiser meets; that chapter follows how gradients become parameter
updates over time.

Further reading: Ioffe and Szegedy (2015) introduced batch norm; Ba et
al. (2016) layer norm; Wu and He (2018) group norm with small image
batches; Zhang and Sennrich (2019) RMS norm; Vaswani et al. (2017) the
Transformer, a major use of layer norm.]]},
  },
}
