-- Text 002, "Exercises" 11 to 16: layer and RMS norm under a common shift; a masked
-- normalisation across positions (written with tensor arithmetic, then with the mask
-- field, checked against each other); running means over 20 shifted batches; micro-batch
-- statistics; an audit for mixed precision and data parallelism; replacing layer norm by
-- RMS norm.
local V = {2, 3, 4, 5}
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local EPS = 1e-5

-- Exercise 12: one sequence, 5 positions x 2 features; the last 2 positions are padding.
local SEQ = {{{1, 4}, {3, 8}, {5, 6}, {0, 0}, {0, 0}}}
local MASK = ns.tensor({{{1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}}})

-- Normalisation of each feature across the positions (axis 2), counting only the kept
-- entries: masked sums over the count of kept positions; padded outputs are 0.
local function masked_norm(x, mask, eps)
  local n = mask:sum({2})
  local mean = (x * mask):sum({2}) / n
  local dev = (x - mean) * mask
  local var = dev:square():sum({2}) / n
  return dev / (var + eps):sqrt()
end

-- Exercise 13: 20 batches whose means climb 1, 2, ..., 20 (32 values each, sd 1, numpy
-- default_rng(13)), through PyTorch-style running statistics with the given momentum.
local RAMP = {}
do
  local g = ns.rng(13)
  for k = 1, 20 do RAMP[k] = g:normal(k, 1, 32) end
end
local function ramp_run(momentum)
  local r, means, batch = ns.running{momentum = momentum}, {}, {}
  for k = 1, 20 do
    r:update(RAMP[k])
    means[k], batch[k] = r.mean, RAMP[k]:mean()
  end
  return means, batch
end

local function is_shift_of_v(f)
  if #f ~= 4 then return nil end
  local c = f[1] - V[1]
  for i = 2, 4 do if f[i] - V[i] ~= c then return nil end end
  return c
end

lesson{
  title = "Exercises 11 to 16",
  source = "002_22013a1826c4c83c.txt",
  section = "Exercises (11-16)",
  steps = {
    {text = [[
Exercise 11. Add the same constant to every feature and compare layer
and RMS norm. The input becomes x = (2, 3, 4, 5) under RMS norm, and
the shift probe adds 10 to every feature: the output
panel shows the largest change (x+10 max|y'-y|). (Alt-3)]],
     predict = {question = "Exercise 11: RMS norm (eps 1e-5) of (2, 3, 4, 5). By how much does " ..
                  "the output of (2, 3, 4, 5) " ..
                  "move at most when 10 is added to every feature?",
                value = function(s) return result().shift_dev end, tol = 0.02},
     set = {x = V, kind = "rms", axes = "default", eps = EPS, gamma = {}, beta = {},
            mode = "train", dtype = "fp64", acc = "default", groups = 1, shift = 10,
            scale = 2},
     focus = "output",
     claims = function(s)
       claim("n-ex11-rms-shift", result().shift_dev)
       local y0 = ns.normalize(s.x, {kind = "layer", eps = s.eps})
       local y1 = ns.normalize(s.x + s.shift, {kind = "layer", eps = s.eps})
       claim("n-ex11-ln-shift", (y1 - y0):abs():max())
     end,
     try = {text = [[
Under RMS norm the first feature goes from 2 / 3.674 to 12 / 13.546.
Switch to layer norm and read the shift probe again.]],
            check = function(s)
              return result().shift_dev < 1e-12 or
                       string.format("the shift probe moves by %.3g", result().shift_dev)
            end,
            hints = {"K steps the kind back towards layer.", "set{kind = \"layer\"}"},
            show = {kind = "layer"}}},

    {text = [[
Exercise 12: a masked normalisation across positions. One sequence of 5
positions, 2 features, the last two padding. The output panel (Alt-3)
normalises each feature across positions (axes {2}) unmasked, so the
padding zeros pull the statistics. The lesson's masked version counts
only kept positions; the figure (F) compares the two on the 3 real ones.]],
     set = {x = SEQ, kind = "batch", axes = {2}, mask = false},
     focus = "output",
     figure = function(s)
       local m = masked_norm(s.x, MASK, s.eps):flat()
       local u = result().y:flat()
       local l = {"position   unmasked (f1, f2)    masked (f1, f2)"}
       for t = 1, 3 do
         l[#l + 1] = string.format("%8d   %8.3f %8.3f   %8.3f %8.3f", t, u[2 * t - 1], u[2 * t],
                                   m[2 * t - 1], m[2 * t])
       end
       return table.concat(l, "\n")
     end,
     try = {text = [[
The mask field: 1 keeps an element in its statistic, 0 leaves it out.
Set the padding mask (set{mask = {{{1},{1},{1},{0},{0}}}}, one value per
position, broadcast over features); the check compares with the lesson.]],
            check = function(s)
              if not s.mask then return "set a mask (mask = false is none)" end
              local a, b = result().y:flat(), masked_norm(s.x, MASK, s.eps):flat()
              for i = 1, #b do
                if math.abs(a[i] - b[i]) > 1e-12 then
                  return string.format("position %d, feature %d differs from the lesson's sums",
                                       (i + 1) // 2, 2 - i % 2)
                end
              end
              return true
            end,
            hints = {"the mask has no key: set it at the prompt (:)",
                     [[set{mask = {{{1}, {1}, {1}, {0}, {0}}}}]]},
            show = {mask = {{{1}, {1}, {1}, {0}, {0}}}}}},

    {text = [[
Exercise 12, with the mask field. The mask keeps positions 1 to 3; the
output panel (Alt-3) shows the two padded positions as dots (their outputs are
0) and counts the 6 kept values, and the spectrum lists one eigenvalue
0 labelled "masked" per padded value: those inputs reach nothing. The
figure checks ns.normalize's mask against the lesson's own sums.
(F: figure)]],
     set = {x = SEQ, kind = "batch", axes = {2}, mask = {{{1}, {1}, {1}, {0}, {0}}}},
     focus = "output",
     figure = function(s)
       local a = ns.normalize(s.x, {kind = "batch", axes = {2}, eps = s.eps, mask = s.mask})
       local d = (a - masked_norm(s.x, MASK, s.eps)):abs():max()
       return string.format("max |ns.normalize with mask - the lesson's masked sums| = %.3g", d)
     end,
     try = {text = [[
Test it with padding: put other values in the two padded positions
(e.g. 100s). Without the mask the outputs of the real positions would
change; the check confirms that with it they do not.]],
            check = function(s)
              local f = s.x:flat()
              if #f ~= 10 then return "keep 5 positions x 2 features" end
              if f[7] == 0 and f[8] == 0 and f[9] == 0 and f[10] == 0 then
                return "change the padded positions"
              end
              if not s.mask then return "keep the mask" end
              local a = result().y:flat()
              local b = masked_norm(ns.tensor(SEQ), MASK, s.eps):flat()
              for i = 1, 6 do
                if f[i] ~= ns.tensor(SEQ)[i] then return "change only the padding" end
                if math.abs(a[i] - b[i]) > 1e-12 then return "the masked output moved" end
              end
              return true
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{{1, 4}, {3, 8}, {5, 6}, {100, 100}, {100, 100}}}}]]},
            show = {x = {{{1, 4}, {3, 8}, {5, 6}, {100, 100}, {100, 100}}}}}},

    {text = [[
Exercise 13. Running means across 20 deliberately shifted batches: the
batch means climb 1, 2, ..., 20 (32 values each, numpy default_rng(13)),
through PyTorch's running mean with momentum 0.1. The
figure follows both; an evaluation would use the running value.
(Alt-6; F: figure)]],
     predict = {question = "Exercise 13: 20 batches whose means climb 1, 2, ..., 20, through a " ..
                  "running mean with momentum 0.1. After the 20th, how far below the last " ..
                  "batch's mean is " ..
                  "the running mean?",
                value = function(s)
                  local run, batch = ramp_run(0.1)
                  return batch[20] - run[20]
                end, tol = 1},
     set = {x = V, kind = "layer", axes = "default", momentum = 0.1, mask = false},
     focus = "train",
     figure = function(s)
       local run, batch = ramp_run(0.1)
       return ns.plot.lines({{y = batch, label = "batch mean"},
                             {y = run, label = "running mean, momentum 0.1"}},
                            {width = 70, height = 12, xlabel = "batch",
                             title = "20 shifted batches"})
     end,
     try = {text = [[
Which momentum keeps the running mean within 2 of the last batch? Set
it (set{momentum = ...}); the check reruns the 20 batches with it.]],
            check = function(s)
              if s.momentum == false then return "use a momentum, not the cumulative average" end
              local run, batch = ramp_run(s.momentum)
              local lag = batch[20] - run[20]
              return lag < 2 or string.format("it lags by %.2f", lag)
            end,
            hints = {"The running mean forgets the old batches at the rate momentum per step.",
                     "A steady ramp leaves a lag of about (1 - m) / m batches.",
                     "set{momentum = 0.5}: a lag of about 1."},
            show = {momentum = 0.5}}},

    {text = [[
Exercise 14. Does gradient accumulation change per-micro-batch
statistics? The output panel (Alt-3) has the full running matrix under batch
norm; its statistics line has the full-batch column means (5, 7.8,
14.2, 7.6).]],
     set = {x = X, kind = "batch", axes = "default", momentum = 0.1},
     focus = "output",
     try = {text = [[
Run one micro-batch instead, e.g. rows 3-5 (set{x = {...}}): its
column means differ, and accumulating gradients afterwards cannot
change that.]],
            check = function(s)
              local shp = s.x:shape()
              if #shp ~= 2 or shp[2] ~= 4 or shp[1] >= 5 then
                return "use fewer than 5 rows of X"
              end
              local full = ns.tensor(X):mean({1}):flat()
              local m = result().mean
              for j = 1, 4 do if math.abs(m[j] - full[j]) > 1e-9 then return true end end
              return "these rows have the full-batch means"
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}}]]},
            show = {x = {X[3], X[4], X[5]}}}},

    {text = [[
Exercise 15. An audit for a mixed-precision, data-parallel model: record
the method, axes and layout, eps and where it goes, gamma and beta,
train or eval mode and the running momentum, the batch per device and
whether statistics are synchronised, padding, and the storage and
accumulation precision. Then measure the statistics along the intended
axes in that precision, and run the two perturbation tests on each
device's batch. (Alt-7)]],
     focus = "precision",
     try = {text = [[
Put the layer in mixed precision: storage bf16, accumulation fp32
(set{dtype = "bf16", acc = "fp32"}), and read the precision panel.]],
            check = function(s)
              if s.dtype ~= "bf16" and s.dtype ~= "fp16" then return "store in bf16 or fp16" end
              return s.acc == "fp32" or "accumulate in fp32"
            end,
            hints = {"t steps the storage dtype",
                     [[set{dtype = "bf16", acc = "fp32"}]]},
            show = {dtype = "bf16", acc = "fp32"}}},

    {text = [[
Exercise 16. A Transformer swaps layer norm for RMS norm. What is no
longer controlled, what still is, and which fixed-input test shows the
difference? The table compares the two on the token
(2, 3, 4, 5). (Alt-3; F: figure)]],
     predict = {question = "Exercise 16: a Transformer's layer norm becomes RMS norm. Which " ..
                  "property of each token's " ..
                  "outputs is lost?",
                choices = {"their mean is no longer 0", "their root mean square is no " ..
                             "longer 1", "both", "neither"},
                answer = function(s)
                  local y = result().y
                  local centred = math.abs(y:mean()) < 1e-6
                  local unit = math.abs(math.sqrt(y:square():mean()) - 1) < 1e-3
                  return (not centred and unit) and 1 or (centred and not unit) and 2 or
                           (not centred and not unit) and 3 or 4
                end},
     set = {x = V, kind = "rms", dtype = "fp64", acc = "default"},
     focus = "output",
     figure = function(s)
       local l = {"kind    mean of y   rms of y   moves under x + 10"}
       for _, k in ipairs{"layer", "rms"} do
         local y = ns.normalize(s.x, {kind = k, eps = s.eps})
         local y10 = ns.normalize(s.x + 10, {kind = k, eps = s.eps})
         l[#l + 1] = string.format("%-5s   %9.3f   %8.3f   %18.3g", k, y:mean(),
                                   math.sqrt(y:square():mean()), (y10 - y):abs():max())
       end
       return table.concat(l, "\n")
     end,
     try = {text = [[
Run a fixed-input test on the screen: change the token in a way that
leaves layer norm's output where it is, and see whether RMS norm's
output moves.]],
            check = function(s)
              local c = is_shift_of_v(s.x:flat())
              if not c or c == 0 then return "add one nonzero constant to (2, 3, 4, 5)" end
              if s.kind ~= "rms" then return "keep kind rms" end
              local y0 = ns.normalize(ns.tensor(V), {kind = "rms", eps = s.eps})
              return (result().y - y0):abs():max() > 1e-6 or "the output did not move"
            end,
            hints = {"Type new values into the input panel (Alt-1), each one the old one " ..
                       "plus the same number.",
                     "set{x = {12, 13, 14, 15}}"},
            show = {x = {12, 13, 14, 15}}}},
  },
}
