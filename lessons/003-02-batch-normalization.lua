-- Text 003 (the course lesson), "Batch normalization": the four equations on one feature,
-- the concrete pass x = (2, 4, 6, 8) (mean, variance, x_hat, y with gamma 2 and beta 1),
-- shift invariance, where the parameters live on an (N, C, H, W) tensor, and the affine
-- map that can undo the standardization.
local X = {2, 4, 6, 8}
local SHIFTED = {12, 14, 16, 18}

-- x_hat of a batch of one feature: batch norm, eps 0, no affine
local function xhat(v) return (ns.normalize(ns.tensor(v), {kind = "batch", eps = 0})) end

-- Does the state's x hold exactly the values v?
local function x_is(s, v)
  local f = s.x:flat()
  if #f ~= #v then return false end
  for i = 1, #v do if f[i] ~= v[i] then return false end end
  return true
end

-- A small (N, C, H, W) = (2, 3, 2, 2) activation, channel c around 10 c.
local IMG = {}
do
  local g = ns.rng(3)
  local noise = g:normal(0, 1, 24):flat()
  local k = 0
  for n = 1, 2 do
    IMG[n] = {}
    for c = 1, 3 do
      IMG[n][c] = {}
      for h = 1, 2 do
        IMG[n][c][h] = {}
        for w = 1, 2 do
          k = k + 1
          IMG[n][c][h][w] = 10 * c + noise[k]
        end
      end
    end
  end
end

lesson{
  title = "Batch normalization by hand",
  source = "003_5350b2b8404a7fc0.txt",
  section = "Batch normalization",
  steps = {
    {text = [[
Take one feature and a minibatch of m of its values x_1 .. x_m. Batch
normalization computes, in this order:

  mu_B      = (1/m) sum_i x_i                  the batch mean
  sigma_B^2 = (1/m) sum_i (x_i - mu_B)^2       the batch variance
  x_hat_i   = (x_i - mu_B) / sqrt(sigma_B^2 + eps)
  y_i       = gamma x_hat_i + beta

eps (usually 1e-5) keeps the division safe. gamma and beta are learned,
one pair per feature; they are the layer's only parameters. This lesson
uses eps = 0 and no gamma or beta yet. The batch is x = (2, 4, 6, 8).
(Alt-1)]],
     set = {x = X, kind = "batch", eps = 0, gamma = {}, beta = {}, shift = 10,
            scale = 2},
     focus = "input"},

    {text = [[
The first two equations summarize the batch: where the values sit and
how far they spread. For (2, 4, 6, 8) the mean is 5, the deviations are
(-3, -1, 1, 3), and the variance is (9 + 1 + 1 + 9) / 4 = 5. The output
panel lists both statistics. (Alt-3)]],
     focus = "output",
     claims = function(s)
       local r = result()
       claim("g-bn-mean", r.mean[1])
       claim("g-bn-var", r.var[1])
     end},

    {text = [[
The third equation divides the deviations by sqrt(5):

  x_hat = (-3, -1, 1, 3) / sqrt(5) = (-1.342, -0.447, 0.447, 1.342)

Whatever scale the layers below produced, the feature now has mean 0
and variance 1 over the batch. The output panel (Alt-3) shows y = x_hat (no
gamma, no beta). (F: figure)]],
     focus = "output",
     figure = function(s)
       return ns.plot.bars(result().y, {width = 60, height = 10,
                                        labels = {"x_hat_1", "x_hat_2", "x_hat_3", "x_hat_4"},
                                        title = "x_hat for x = (2, 4, 6, 8)"})
     end,
     claims = function(s)
       local y = result().y
       for i = 1, 4 do claim("g-bn-xhat-" .. i, y[i]) end
       claim("g-bn-xhat-mean", y:mean())
       claim("g-bn-xhat-var", y:var())
     end},

    {text = [[
The fourth equation hands control back to the network. With gamma = 2
and beta = 1 the standardized values are stretched by 2 and moved to
center 1:

  y = 2 x_hat + 1 = (-1.683, 0.106, 1.894, 3.683)

The output panel (Alt-3) shows mean 1 and standard deviation 2.]],
     set = {gamma = 2, beta = 1},
     focus = "output",
     claims = function(s)
       local y = result().y
       for i = 1, 4 do claim("g-bn-y-" .. i, y[i]) end
     end},

    {text = [[
Now the layers below shift the whole batch by 10: x = (12, 14, 16, 18).
The mean moves to 15, the deviations stay (-3, -1, 1, 3), so x_hat is
exactly what it was. Look at the output panel (Alt-3): y has not moved.]],
     set = {x = SHIFTED, gamma = {}, beta = {}},
     focus = "output",
     claims = function(s)
       local d = result().y - xhat(X)
       claim("g-bn-shift-dev", d:abs():max())
     end,
     try = {text = [[
Try a shift of your own, e.g. set{x = {-98, -96, -94, -92}}, or a
positive multiple such as {6, 12, 18, 24}. Both leave x_hat unchanged.]],
            check = function(s)
              if x_is(s, SHIFTED) or x_is(s, X) then return "type another x first" end
              if #s.x ~= 4 then return "keep four values" end
              local d = (result().y - xhat(X)):abs():max()
              return d < 1e-12 or
                       string.format("x_hat moved by %.3g: use a shift or a positive " ..
                                     "multiple of (2, 4, 6, 8)", d)
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {-98, -96, -94, -92}}]]},
            show = {x = {-98, -96, -94, -92}}}},

    {text = [[
Where the parameters live. Statistics are per feature, and on a
convolution's (N, C, H, W) output a feature is a channel: its mean and
variance pool its N * H * W entries, with its own gamma and beta: 2 C
parameters, whatever the batch or image size.
The input is now (2, 3, 2, 2): 3 channels of 2 * 2 * 2 = 8 entries. The
output panel (Alt-3) shows 3 means, near 10, 20, 30.]],
     set = {x = IMG},
     focus = "output",
     try = {text = [[
Give each channel its own scale: set{gamma = {1, 2, 3}, beta = {0, 0,
5}} (2 C = 6 numbers).]],
            check = function(s)
              if #s.gamma ~= 3 or #s.beta ~= 3 then
                return "give gamma and beta one value per channel (3 each)"
              end
              return true
            end,
            hints = {"w cycles gamma and beta (none, gamma 2, gamma 2 and beta 0.5); other values at the prompt (:)",
                     [[set{gamma = {1, 2, 3}, beta = {0, 0, 5}}]]},
            show = {gamma = {1, 2, 3}, beta = {0, 0, 5}}}},

    {text = [[
Forcing mean 0 and variance 1 is a constraint, and gamma and beta can
lift it: some choice of the two turns x_hat back into x itself. So the
layer loses no expressive power; the network chooses the final mean and
spread through two parameters instead of inheriting them from the
layers below. (Alt-3)]],
     set = {x = X, gamma = {}, beta = {}},
     focus = "output",
     try = {text = [[
Find the gamma and beta that give back x = (2, 4, 6, 8) exactly (the
output equal to the input, to the 5 decimals the output panel shows).]],
            check = function(s)
              if not x_is(s, X) then return "keep x = (2, 4, 6, 8)" end
              -- judged at the panels' digits: y must read as x to the 6 significant
              -- digits printed (gamma = 2.23607, the std as the input panel prints it,
              -- passes; so does math.sqrt(5))
              if shown(result().y:flat(), s.x:flat()) then return true end
              local d = (result().y - s.x):abs():max()
              return string.format("y differs from x by up to %.3g (it must agree to the " ..
                                   "digits shown)", d)
            end,
            hints = {"y = gamma x_hat + beta, and x_hat = (x - mu_B) / sigma_B: solve for " ..
                       "the gamma and beta that undo it.",
                     "gamma = sigma_B and beta = mu_B; the input panel (Alt-1) prints both.",
                     "set{gamma = 2.23607, beta = 5} (or gamma = math.sqrt(5))"},
            show = {gamma = math.sqrt(ns.tensor(X):var()), beta = ns.tensor(X):mean()}}},
  },
}
