-- Text 002, Level 2, "Layer, group, and RMS normalisation avoid batch dependence" with
-- its concept box and Fig. 13.5: one vector f of 8 features under three per-example rules.
local F = {{1, 2, 3, 8, 10, 12, 18, 20}}
local EPS = 1e-5

-- Fig. 13.5: f and its three normalised versions, one row each.
local function family_figure()
  local f = ns.tensor(F)
  local rows = {f, ns.normalize(f, {kind = "layer", eps = EPS}),
                ns.normalize(f, {kind = "group", groups = 2, eps = EPS}),
                (ns.normalize(f, {kind = "rms", eps = EPS}))}
  local cols = {}
  for j = 1, 8 do cols[j] = "f" .. j end
  return ns.plot.heatmap(ns.concat(rows, 1),
                         {width = 76, height = 6, range = {-2.2, 2.2},
                          labels = {rows = {"original", "layer", "group 2", "rms"}, cols = cols},
                          title = "Fig. 13.5: one vector, three reference rules"})
end

lesson{
  title = "Level 2: layer, group and RMS norm",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 2 - Mechanics: Layer, group, and RMS normalisation avoid batch " ..
              "dependence",
  steps = {
    {text = [[
Three rules that look inside one example only, so none needs running
batch statistics and train and eval mode agree:

  layer norm   all the features of one observation (or one token)
  group norm   groups of channels within one observation
  RMS norm     divides one vector by its root mean square, no centring

They choose different reference sets; they are not three names for one
rescaling. The input is f = (1, 2, 3, 8, 10, 12, 18, 20), one row.
Layer norm centres all eight together: f1 becomes -1.227.
(Alt-3; F: figure)]],
     set = {x = F, kind = "layer", eps = EPS, gamma = {}, beta = {}, axes = "default"},
     focus = "output",
     figure = function(s) return family_figure() end,
     claims = function(s) claim("n-family-ln-f1", result().y[1]) end},

    {text = [[
Group norm with two groups centres (1, 2, 3, 8) and (10, 12, 18, 20)
separately. The gap between the two group means is removed: f4 = 8 is
the top of its group and becomes 1.671, while f5 = 10, larger but the
bottom of its group, becomes -1.213. (Alt-3)]],
     set = {kind = "group", groups = 2},
     focus = "output",
     claims = function(s) claim("n-family-gn2-f4", result().y[4]) end},

    {text = [[
RMS norm divides by sqrt(mean(f^2) + eps) and subtracts nothing: every
value keeps its sign, and f8 = 20 becomes 1.749. The magnitude is
controlled and the positive offset of f survives. (Alt-3)]],
     set = {kind = "rms", groups = 1},
     focus = "output",
     claims = function(s) claim("n-family-rms-f8", result().y[8]) end,
     try = {text = [[
Which of the three can give a negative output for an all-positive f?
Switch to one of them (set{kind = ...}, groups 2 for group) so that the
output panel shows negatives.]],
            check = function(s)
              if result().y:min() < 0 then return true end
              return "every output is >= 0 under " .. s.kind .. ": try a centring kind"
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},
  },
}
