-- Text 001 (the review article), section 6 and equation 4: with batch statistics, changing
-- only the companion of an example flips the sign of that example's output; the article's
-- second figure (the first output against the companion's value).
local EPS = 1e-5

-- Batch norm output of the first example of the batch (0, b), one scalar feature.
local function first(b)
  return ns.normalize(ns.tensor({0, b}), {kind = "batch", eps = EPS, ddof = 0}):flat()[1]
end

lesson{
  title = "A batch can change one example's output",
  source = "001_5d139345c05ab941.txt",
  section = "6 A batch can change one example's output (equation 4, figure 2)",
  steps = {
    {text = [[
One scalar feature, a batch of two examples: (0, 2). Batch norm with the
population variance and eps = 1e-5 gives the first example

  BN(0; {0, b}) = -b / sqrt(b^2 + 4 eps)          (equation 4)

which at b = 2 is -0.999995, nearly -1. The batch panel (Alt-5) shows it: row 1
is the target, row 2 its companion.]],
     set = {batch = {{0}, {2}}, target = 1, companion = 2, baseline = false, eps = EPS,
            eps_at = "var", ddof = 0},
     focus = "batch",
     claims = function(s)
       claim("r6-companion-first", result().batch.target_now[1])
     end},

    {text = [[
Now replace the companion by -2 and leave the first example at 0. Its
output becomes +0.999995: the sample did not change, its training-mode
output changed sign. The batch panel (Alt-5) marks the flip against the old
companion (2).]],
     predict = {question = [[
The companion goes from 2 to -2; the first example stays 0. Its batch-norm
output will:]],
                choices = {"stay near -1", "move to about 0", "flip to about +1"},
                answer = function(s)
                  local y = result().batch.target_now[1]
                  return y > 0.5 and 3 or y < -0.5 and 1 or 2
                end},
     set = {batch = {{0}, {-2}}, baseline = {2}},
     focus = "batch",
     claims = function(s)
       claim("r6-companion-flipped", result().batch.target_now[1])
     end},

    {text = [[
The article's second figure: the first example's output as the companion
b moves from -0.05 to 0.05. Far from 0 the output sits at -1 or +1,
decided only by the companion's sign; near 0, eps takes over and the
output passes through 0. At b = 0.01 it is -0.845. (F: figure)]],
     figure = function(s)
       local bs, ys = {}, {}
       for k = -40, 40 do
         bs[#bs + 1] = k * 0.05 / 40
         ys[#ys + 1] = first(bs[#bs])
       end
       return ns.plot.lines({{x = bs, y = ys, label = "BN(0; {0, b})"}},
                            {width = 72, height = 12, xlabel = "companion b",
                             ylabel = "first output", range = {-1.05, 1.05},
                             title = "Figure 2: one example, its companion decides"})
     end,
     claims = function(s)
       claim("r6-fig-b1e-2", first(0.01))
     end,
     try = {text = [[
Choose a companion that brings the first output between -0.5 and 0.5:
edit row 2 of the batch panel (Down, then type a value and Enter).]],
            check = function(s)
              local y = result().batch.target_now[1]
              return math.abs(y) < 0.5 or string.format("the first output is %.4f", y)
            end,
            hints = {"In the figure the output leaves -1 only where b is close to 0.",
                     "Try a companion of a few thousandths: set{batch = {{0}, {0.002}}}."},
            show = {batch = {{0}, {0.002}}}}},

    {text = [[
This is no arithmetic bug: shared statistics do exactly this. It means
an experiment that changes which examples share a batch has changed the
function evaluated at each of them, even if it calls the model the same.
A batch holding one example twice, or several near-copies, shifts the
statistics as well. A careful evaluation says how statistics are
obtained: recomputed per batch, frozen, synchronised across devices, or
accumulated by a stated rule. This is row 2 of the article's table:
statistics across examples couple batch members, so test how sensitive
outputs are to batch composition. The batch panel (Alt-5) now holds (0, 2, 2):
the same companion twice, and row 1's output is no longer near -1.]],
     set = {batch = {{0}, {2}, {2}}, baseline = false},
     focus = "batch"},
  },
}
