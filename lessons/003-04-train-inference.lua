-- Text 003 (the course lesson), "Train versus inference": running buffers and the two ways
-- of writing the momentum, the running estimate tracking the population, the frozen
-- layer as a fixed affine map folded into the linear layer before it, and the classic
-- bug (training mode at test time) on the batch panel.
local X = {2, 4, 6, 8}
local EPS = 1e-5

-- A fresh PyTorch-style running state after one update on X (momentum 0.1 on the new
-- value): mean 0.1 * 5, var 0.9 * 1 + 0.1 * (unbiased batch variance).
local function one_step()
  local r = ns.running{momentum = 0.1}
  r:update(ns.tensor(X))
  return r
end

-- The frozen layer (gamma 2, beta 1) applied to the values t with running state r.
local function frozen(r, t)
  return (ns.normalize(ns.tensor(t), {kind = "batch", mode = "eval", running = r,
                                      gamma = 2, beta = 1, eps = EPS}))
end

-- The same update written with the other convention: keep rho = 0.9 of the old value.
local R1 = one_step()
local RHO = 0.9
local OTHER_MEAN = RHO * 0 + (1 - RHO) * ns.tensor(X):mean()
local OTHER_VAR = RHO * 1 + (1 - RHO) * ns.tensor(X):var(nil, 1)

-- Running statistics over many batches of 32 draws from N(4, 2) (seed 7), momentum 0.1:
-- the trace of the mean and the variance after each batch, computed once.
local TRACE_BATCHES = 60
local trace_mean, trace_var = {}, {}
do
  local g = ns.rng(7)
  local r = ns.running{momentum = 0.1}
  local draws = g:normal(4, 2, {TRACE_BATCHES, 32})
  for b = 1, TRACE_BATCHES do
    r:update(draws:slice(1, b, b):reshape({32}))
    trace_mean[b], trace_var[b] = r.mean, r.var
  end
end

-- Folding: a linear layer z = w u + c (one feature) followed by the frozen layer is the
-- linear layer w' u + c' with w' = a w, c' = a c + b, where y = a z + b is the frozen
-- map. The largest difference over some inputs u, computed once.
local FOLD_DIFF
do
  local w, c = 1.5, -0.5
  local u = ns.rng(11):normal(0, 3, 16)
  local z = u * w + c
  local y0, y1 = frozen(R1, {0})[1], frozen(R1, {1})[1]
  local a, b = y1 - y0, y0
  local folded = u * (a * w) + (a * c + b)
  FOLD_DIFF = (frozen(R1, z:flat()) - folded):abs():max()
end

local function x_is(s, v)
  local f = s.x:flat()
  if #f ~= #v then return false end
  for i = 1, #v do if f[i] ~= v[i] then return false end end
  return true
end

lesson{
  title = "Train versus inference",
  source = "003_5350b2b8404a7fc0.txt",
  section = "Train versus inference",
  steps = {
    {text = [[
mu_B and sigma_B^2 describe a batch, not an example. At test time
inputs may come one at a time, and a prediction must not depend on what
else happens to be in the batch. So during training the layer also
keeps running estimates r_mu and r_v, and at test time it uses those.

r_mu and r_v are buffers, not parameters: a formula updates them, never
a gradient. The train/eval panel (Alt-6) follows them over 8 training batches
of 32 values from a normal population with mean 4 and spread 2.]],
     set = {x = X, kind = "batch", eps = EPS, gamma = 2, beta = 1, mode = "train",
            shift = 10, scale = 2, momentum = 0.1, train_batches = 8, batch_size = 32,
            train_source = "rng", train_loc = 4, train_scale = 2, seed = 316832669},
     focus = "train"},

    {text = string.format([[
Each training step folds the batch moments into the buffers (a, the
weight alpha, is about 0.1):
  r_mu <- (1-a) r_mu + a mu_B
  r_v  <- (1-a) r_v + a m/(m-1) var_B
Some frameworks call the old value's weight (0.9) the momentum, not the
new one's (0.1): the same update. From a fresh state (r_mu 0, r_v 1),
one step on x = (2, 4, 6, 8) gives r_mu %.4g either way (ns.running:
%.4g). The stored variance has the n - 1 divisor, m/(m-1) var_B; the
normalization divides by n (var_B = 5). (Alt-6)]],
                         OTHER_MEAN, R1.mean),
     predict = {question = "A fresh running state (r_v = 1), one step on x = (2, 4, 6, 8) with " ..
                  "alpha 0.1 and the n - 1 batch variance: what is r_v?",
                value = function(s)
                  assert(math.abs(OTHER_VAR - R1.var) < 1e-12, "the two conventions differ")
                  return R1.var
                end},
     focus = "train"},

    {text = [[
After enough steps the buffers forget their start and follow the
population: the figure (F) runs 60 batches (seed 7, momentum 0.1) and the
running mean and variance settle near the population's 4 and 4, with
the wobble that the last few batches bring. Eight batches, as in the
panel, are not enough: the momentum row still remembers 0 and 1.
(Alt-6)]],
     focus = "train",
     figure = function(s)
       return ns.plot.lines({{y = trace_mean, label = "r_mu"},
                             {y = trace_var, label = "r_v"}},
                            {width = 72, height = 12, xlabel = "training batches",
                             ylabel = "running estimate",
                             title = "running statistics, momentum 0.1"})
     end,
     try = {text = [[
Give the panel more batches: set{train_batches = 100} (or j/J). The
momentum row's mean moves close to 4.]],
            check = function(s)
              if s.train_batches < 40 then
                return "train_batches is " .. s.train_batches .. ": try 40 or more"
              end
              return true
            end,
            hints = {"j and J halve and double the training batches",
                     [[set{train_batches = 100}]]},
            show = {train_batches = 100}}},

    {text = [[
At test time the layer is frozen:

  y = gamma (x - r_mu) / sqrt(r_v + eps) + beta = a x + b,
  a = gamma / sqrt(r_v + eps),   b = beta - a r_mu

one scale and one shift, the same for every example, no batch involved.
The train/eval panel now takes one training step of a fresh layer on
the batch rows (2, 4, 6, 8), the step above; the output panel (Alt-3) is in eval
mode with x = (0, 1, 2). The outputs are equally spaced: the second
difference y(2) - 2 y(1) + y(0) is 0.]],
     set = {mode = "eval", x = {0, 1, 2}, train_source = "batch",
            batch = {{2}, {4}, {6}, {8}}},
     focus = "output",
     claims = function(s)
       local y = result().y
       claim("g-infer-affine", math.abs(y[3] - 2 * y[2] + y[1]))
     end},

    {text = string.format([[
A scale and shift can be merged into the linear layer before it: if
z = w u + c, then a z + b = (a w) u + (a c + b). At inference the
normalization costs nothing. Checked on 16 inputs with w = 1.5 and
c = -0.5: the folded layer and the frozen one differ by at most %.1g.
(Alt-3)]],
                         FOLD_DIFF),
     set = {mode = "eval"},
     focus = "output",
     try = {text = [[
Read a and b of the frozen map: keep eval mode and set{x = {0, 1}}.
Then y_1 is b and y_2 - y_1 is a (here a = 2 / sqrt(r_v + eps)).]],
            check = function(s)
              if s.mode ~= "eval" then return "switch to eval mode (m)" end
              if not x_is(s, {0, 1}) then return "set x to {0, 1}" end
              local y = result().y
              local a = y[2] - y[1]
              local r = result().train[result().train.active]
              local want = s.gamma[1] / math.sqrt(r.var[1] + s.eps)
              return math.abs(a - want) < 1e-12 or
                       string.format("a = %.6g, but gamma / sqrt(r_v + eps) = %.6g", a, want)
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {0, 1}}]]},
            show = {x = {0, 1}}}},

    {text = [[
Mixing up the modes is the classic batch-norm bug. Its forms (ours):
  training mode at test time       outputs depend on the other examples
  eval mode while training         the layer stops adapting to the data
  running buffers updated on test  test data leaks into the model
  too few steps before testing     buffers still near their start (0, 1)
  batch of one in training mode    variance 0: every output is beta
The first is the most common: the batch panel (Alt-5) shows it.]],
     set = {mode = "train", x = X, batch = {{1, 0.5}, {3, -1}, {0, 2}}, target = 1,
            companion = 2, train_source = "rng"},
     focus = "batch",
     try = {text = [[
Change the companion (set{batch = {{1, 0.5}, {-4, 2}, {0, 2}}}): the
watched row's input stays, its train-mode output does not.]],
            check = function(s)
              local b = result().batch
              local d = 0
              for j = 1, #b.target_now do
                d = math.max(d, math.abs(b.target_now[j] - b.target_base[j]))
              end
              return d > 1e-6 or "the watched row's output has not moved yet"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{1, 0.5}, {-4, 2}, {0, 2}}}]]},
            show = {batch = {{1, 0.5}, {-4, 2}, {0, 2}}}}},
  },
}
