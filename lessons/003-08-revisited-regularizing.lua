-- Text 003 (the course lesson), "Normalization, revisited" and "The regularizing side
-- effect": where the explanations and the variants came from, and the noise batch norm
-- injects: one fixed input gets a different x_hat in every random batch, less so in
-- larger batches.
local V = 1.0        -- the fixed input value of one feature
local TRIALS = 300   -- random batches per batch size
local SIZES = {4, 8, 16, 32, 64}
local EPS = 1e-5

-- x_hat of V in TRIALS random batches of size m: V plus m - 1 draws from N(0, 1).
-- Each batch is normalized by ns.normalize (batch norm of one feature); V is its first
-- value. Computed once per size, from one generator (seed 31).
local XHAT, SD = {}, {}
do
  local g = ns.rng(31)
  for i, m in ipairs(SIZES) do
    local others = g:normal(0, 1, {TRIALS, m - 1})
    local col = ns.full({TRIALS, 1}, V)
    local batches = ns.concat({col, others}, 2):T()  -- m x TRIALS: one column per batch
    local y = ns.normalize(batches, {kind = "batch", eps = EPS})
    XHAT[i] = y:slice(1, 1, 1):flat()
    SD[i] = y:slice(1, 1, 1):std()
  end
end

lesson{
  title = "Revisited, and the regularizing side effect",
  source = "003_5350b2b8404a7fc0.txt",
  section = "Normalization, revisited; The regularizing side effect",
  steps = {
    {text = [[
Batch normalization (Ioffe and Szegedy, 2015) came with the internal-
covariate-shift motivation, and textbooks (Goodfellow et al., section
8.7.1) repeat it. Santurkar et al. (2018) tested it directly: they
added distribution shift after every batch-norm layer on purpose, and
training was still as fast. So the speed-up does not come from removing
drift; the smoother loss surface (lesson 003-05) is the better-supported
cause. The method works; its name is a historical accident.]],
     set = {x = {2, 4, 6, 8}, kind = "batch", eps = EPS, gamma = {}, beta = {},
            mode = "train", shift = 10, scale = 2}},

    {text = [[
Each batch-free variant was built for a case where batch statistics hurt:
 layer: RNNs, sequence models (Ba et al. 2016)
 instance: image style transfer (Ulyanov et al. 2016)
 group: detection, segmentation, small batches (Wu and He 2018)
 RMS: cheaper, no centering (Zhang, Sennrich 2019)
Large language models today use pre-norm layer norm or RMS norm: 003-07's
identity path lets very deep stacks train. Batch norm stays the default
for image classifiers with large batches. (Alt-2)]],
     focus = "settings"},

    {text = [[
Batch norm also counts as a regularizer, for a concrete reason: noise.
An example's x_hat depends on the random batch it was drawn with,
through mu_B and sigma_B^2. The batch panel (Alt-5) normalizes the watched row
(row 1) with its batch, in train mode: its output depends on the
companion row, though its own input does not change.]],
     set = {batch = {{1, 1}, {0, 2}, {3, -1}}, target = 1, companion = 2},
     focus = "batch",
     try = {text = [[
Put the same row 1 in another batch: change the companion row, e.g.
set{batch = {{1, 1}, {-2, 0}, {3, -1}}}. Row 1's output moves.]],
            check = function(s)
              local b = result().batch
              local d = 0
              for j = 1, #b.target_now do
                d = math.max(d, math.abs(b.target_now[j] - b.target_base[j]))
              end
              return d > 1e-6 or "row 1's output has not moved"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{1, 1}, {-2, 0}, {3, -1}}}]]},
            show = {batch = {{1, 1}, {-2, 0}, {3, -1}}}}},

    {text = string.format([[
How much noise? Fix one input value, 1.0, and put it in %d random
batches whose other values come from N(0, 1) (seed 31). Its x_hat
scatters around 1, the way a unit's value jitters under dropout; that
shared effect is one reason a network with batch norm is often given
less dropout. The figure (F) compares
batches of 4 and 32: the spread of x_hat is %.2f at 4 and %.2f at 32.
(Alt-5)]],
                         TRIALS, SD[1], SD[4]),
     focus = "batch",
     figure = function(s)
       return ns.plot.hist({XHAT[1], XHAT[4]},
                           {width = 72, height = 12, bins = 24,
                            labels = {"batch of 4", "batch of 32"},
                            xlabel = "x_hat of the input 1.0",
                            title = "one input, " .. TRIALS .. " random batches"})
     end},

    {text = string.format([[
The noise shrinks as the batch grows, roughly like 1 / sqrt(m): the
spread is %.3f at m = 4, %.3f at 8, %.3f at 16, %.3f at 32 and %.3f
at 64. The same noise that regularizes is what makes small batches
unstable, and it is why training and testing need different statistics.

So normalization buys better conditioning and a little noise, and pays
with running statistics to keep. Next to weight penalties, dropout, data
augmentation and early stopping it is an odd regularizer: the only one
on that list that also changes the shape of the loss surface itself.
(Alt-6; F: figure)]],
                         SD[1], SD[2], SD[3], SD[4], SD[5]),
     focus = "train",
     figure = function(s)
       return ns.plot.lines({{x = SIZES, y = SD, label = "spread of x_hat"}},
                            {width = 72, height = 10, log = "xy", xlabel = "batch size m",
                             ylabel = "standard deviation",
                             title = "the batch noise falls with the batch size"})
     end},
  },
}
