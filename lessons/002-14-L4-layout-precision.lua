-- Text 002, Level 4, the subsection on layout, masks and precision: a wrong layout gives
-- finite, plausible output; padding and a reduction across positions (a masked mean
-- written as sums over the kept entries, and the same by ns.moments's mask); accumulation
-- precision; an eps that dominates; fused-kernel tolerances.
local IMG = ns.rng(5):normal(0, 1, {2, 4, 3, 3}) -- N x C x H x W

-- The same values laid out channels-last: N x H x W x C.
local function to_nhwc(t)
  local f, out = t:flat(), {}
  local N, C, H, W = 2, 4, 3, 3
  for n = 1, N do
    for h = 1, H do
      for w = 1, W do
        for c = 1, C do
          out[#out + 1] = f[(((n - 1) * C + (c - 1)) * H + (h - 1)) * W + w]
        end
      end
    end
  end
  return ns.tensor(out, {N, H, W, C})
end
local NHWC = to_nhwc(IMG)
-- The right answer for NHWC: batch norm per channel = over axes 1, 2 and 3.
local RIGHT = ns.normalize(NHWC, {kind = "batch", axes = {1, 2, 3}})

-- A sequence of 5 positions x 2 features whose last 2 positions are padding (zeros).
local SEQ = {{{1, 4}, {3, 8}, {5, 6}, {0, 0}, {0, 0}}}
local KEEP = {1, 1, 1, 0, 0}

-- Per-feature mean over positions: all of them, or only the kept ones (sums over the
-- kept entries divided by their count).
local function position_means(x, keep)
  local f, out = x:flat(), {}
  for j = 1, 2 do
    local s, n = 0, 0
    for t = 1, 5 do
      if not keep or keep[t] == 1 then s, n = s + f[(t - 1) * 2 + j], n + 1 end
    end
    out[j] = s / n
  end
  return out
end

lesson{
  title = "Level 4: layout, padding and precision",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 4: layout, masks and precision",
  steps = {
    {text = [[
State the tensor's shape and the reduction axes, always. Here: an
image batch stored channels-last, N x H x W x C = 2 x 3 x 3 x 4,
but batch norm with its default axes (1, 3, 4) assumes channels-first:
it takes axis 2, the image height, for the channels. The output is
finite, the right shape and looks normalised, yet its numbers are not
per-channel batch norm: the figure (F) compares them with the right ones.
(Alt-3)]],
     set = {x = NHWC, kind = "batch", axes = "default", eps = 1e-5, gamma = {}, beta = {},
            dtype = "fp64", acc = "default", mode = "train"},
     focus = "output",
     figure = function(s)
       return ns.plot.scatter(RIGHT:flat(), result().y:flat(),
                              {width = 60, height = 14, xlabel = "right (axes 1, 2, 3)",
                               ylabel = "wrong axes", title = "same input, two layouts"})
     end,
     try = {text = [[
Fix it by naming the axes: for N x H x W x C, batch norm reduces N, H
and W (set{axes = {1, 2, 3}}). The check compares with the right output.]],
            check = function(s)
              local d = (result().y - RIGHT):abs():max()
              return d < 1e-12 or string.format("still %.3g away from the right output", d)
            end,
            hints = {"A steps the reduction axes",
                     [[set{axes = {1, 2, 3}}]]},
            show = {axes = {1, 2, 3}}}},

    {text = [[
Padding. A sequence of 5 positions whose last 2 are padding zeros. Per-
token layer norm (axis 3, the output panel, Alt-3) never looks across
positions, so the padding cannot enter any statistic. A statistic across
positions can: the table has the per-feature mean over all 5 positions
against the mean over the 3 real ones (sums over the kept positions, and
the same by ns.moments with a mask; exercise 12 normalises with one).
(F: figure)]],
     set = {x = SEQ, kind = "layer", axes = "default"},
     focus = "output",
     figure = function(s)
       local x = ns.tensor(SEQ)
       local all, kept = position_means(x), position_means(x, KEEP)
       local m = {}
       for j = 1, 2 do -- feature j's column, and the mask of its real positions
         m[j] = ns.moments(x:reshape{5, 2}:slice(2, j, j), {mask = {{1}, {1}, {1}, {0}, {0}}}).mean
       end
       return string.format("feature   mean over 5   mean over the 3 real   ns.moments, mask\n" ..
                              "      1   %11.3f   %20.3f   %16.3f\n" ..
                              "      2   %11.3f   %20.3f   %16.3f",
                            all[1], kept[1], m[1], all[2], kept[2], m[2])
     end},

    {text = [[
Means and variances are reductions, and reductions lose digits. Mixed
precision stores fp16 but often accumulates in fp32. The precision panel (Alt-7)
has x = (998, 999, 1001, 1002) in fp16 with fp16 accumulation: the raw
formula mean(x^2) - mean(x)^2 overflows (x^2 is near 1e6, fp16 stops at
65504) and gives NaN.]],
     set = {x = {998, 999, 1001, 1002}, kind = "layer", dtype = "fp16", acc = "fp16"},
     focus = "precision",
     try = {text = [[
Accumulate in fp32 (set{acc = "fp32"}) and every row of the precision
panel gets the true variance 2.5 back.]],
            check = function(s)
              local p = result().precision
              return math.abs(p.raw.var - 2.5) < 1e-6 or
                       string.format("the raw variance is %s, not 2.5",
                                     p.raw.var ~= p.raw.var and "NaN" or
                                       string.format("%.6g", p.raw.var))
            end,
            hints = {"T steps the accumulation dtype",
                     [[set{acc = "fp32"}]]},
            show = {acc = "fp32"}}},

    {text = [[
eps has to fit between two limits. Too small, and a group with almost no
variance is divided by almost nothing; too large, and eps outweighs the
variance it was there to protect. x = (0.001, 0.002, 0.003, 0.004)
has variance 1.25e-6, below eps = 1e-5: the output's standard deviation
is only 0.33 instead of 1. (Alt-3)]],
     set = {x = {0.001, 0.002, 0.003, 0.004}, dtype = "fp64", acc = "default", eps = 1e-5},
     focus = "output",
     try = {text = [[
Lower eps until it no longer dominates (e.g. set{eps = 1e-8}) and watch
the output's standard deviation return close to 1.]],
            check = function(s)
              local sd = result().y_std
              return sd > 0.99 or string.format("std %.3f", sd)
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 1e-8}]]},
            show = {eps = 1e-8}}},

    {text = [[
Fused kernels compute normalisation, the affine and a residual add in
one pass to save memory traffic; their sums run in another order and
another precision, so comparisons against a reference need tolerances.
Here the same layer norm in fp32 and in fp64 differ by the amount in the
figure line: small, but not 0. (Alt-3)
(F: figure)]],
     set = {x = {1.5, -0.25, 3.125, 0.7, 2.2}, eps = 1e-5},
     focus = "output",
     figure = function(s)
       local a = ns.normalize(s.x, {kind = "layer", dtype = "fp32"})
       local b = ns.normalize(s.x, {kind = "layer"})
       return string.format("max |fp32 - fp64| = %.3g", (a:astype("fp64") - b):abs():max())
     end},
  },
}
