-- Text 002, Level 3, "Group normalisation defines intermediate reduction sets": on an
-- N x C x H x W tensor (numpy default_rng(5), shape 2 x 4 x 3 x 3), G = 1 is layer norm
-- over channels and space, G = C is instance norm.
local IMG = ns.rng(5):normal(0, 1, {2, 4, 3, 3})
local EPS = 1e-5

-- Largest |y - (the same x under another spec)|, with the state's eps.
local function dev_from(s, spec)
  spec.eps = s.eps
  return (result().y - ns.normalize(s.x, spec)):abs():max()
end

lesson{
  title = "Level 3: group norm sits between layer and instance norm",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 3 - Mathematics & Code: Group normalisation defines intermediate " ..
              "reduction sets",
  steps = {
    {text = [[
An image batch has shape N x C x H x W: here 2 samples, 4 channels and
3 x 3 pixels (drawn with numpy's default_rng(5)). Group norm splits the
C channels into G groups of C/G neighbouring channels; each sample and
group gets its own mean and variance over its channels and all pixels.

With G = 2 the output panel (Alt-3) lists 2 x 2 = 4 statistics, each over
2 channels x 9 pixels = 18 values.]],
     set = {x = IMG, kind = "group", groups = 2, axes = "default", eps = EPS,
            gamma = {}, beta = {}},
     focus = "output"},

    {text = [[
One group (G = 1) holds every channel: each sample is normalised over
all of C, H and W, which is layer norm on this tensor. The largest
difference from kind layer is 0. (Alt-3)]],
     set = {groups = 1},
     focus = "output",
     claims = function(s) claim("n-gn-g1-equals-ln", dev_from(s, {kind = "layer"})) end},

    {text = [[
G = C puts one channel in each group: each (sample, channel) pair is
normalised over its pixels alone, which is instance norm. Again the
largest difference is 0. So the grouping, and the axes it runs over,
define the operation; the name "group norm" does not.
(Alt-3)]],
     set = {groups = 4},
     focus = "output",
     claims = function(s) claim("n-gn-gc-equals-in", dev_from(s, {kind = "instance"})) end,
     try = {text = [[
Which G gives the largest reference sets, and which the smallest? Try
G = 1, 2 and 4 and count the statistics; then leave the panel at the G
whose statistics cover 18 values each.]],
            check = function(s)
              if s.kind ~= "group" then return "use kind group" end
              local per = #s.x // #result().mean
              return per == 18 or string.format("each statistic covers %d values", per)
            end,
            hints = {"g and G give fewer or more groups",
                     [[set{groups = 2}]]},
            show = {groups = 2}}},
  },
}
