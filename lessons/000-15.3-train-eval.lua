-- Text 000 (chapter 15), section 15.3: train mode and evaluation mode use two different
-- estimates of the same statistics, and disagree with no distribution shift at all.

-- The chapter derives its seed from a name: the first 8 hex digits of sha256 of it.
local SEED = tonumber(ns.sha256("c15-running-state"):sub(1, 8), 16)
local BATCHES, SIZE, EPS = 8, 32, 1e-5

-- The draws of the chapter: 8 training batches of 32 values, then one evaluation batch of
-- 32, all from normal(4, 2) with that seed.
local function draws()
  local g = ns.rng(SEED)
  local train = g:normal(4, 2, {BATCHES, SIZE})
  local eval = g:normal(4, 2, SIZE)
  return train, eval
end

-- One Welford state per training batch, merged in batch order: the state after each batch.
local function trace(train)
  local states = {}
  for b = 1, BATCHES do
    local m = ns.moments(train:slice(1, b, b), {algo = "welford"})
    states[b] = b == 1 and m or ns.merge(states[b - 1], m)
  end
  return states
end

-- The evaluation batch normalized by a state (mean, population variance m2/n).
local function normalized(eval, st)
  return (eval - st.mean) / math.sqrt(st.m2 / st.n + EPS)
end

local function column(t) -- the values of a tensor as a Lua array
  return t:flat()
end

lesson{
  title = "Train state and evaluation state are two estimators",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.3 Train state and evaluation state are different estimators",
  steps = {
    {text = [[
One scalar feature, drawn from the same normal population (mean 4,
standard deviation 2) for training and for evaluation: no distribution
shift anywhere. The seed comes from a name: the first eight hex digits of
sha256("c15-running-state"), which is 316832669.

The train/eval panel (Alt-6) draws 8 training batches of 32 values and one
evaluation batch of 32. The evaluation batch has mean about 3.766 and
population variance about 3.063.]],
     set = {seed = SEED, train_source = "rng", train_loc = 4, train_scale = 2,
            train_batches = BATCHES, batch_size = SIZE, eps = EPS, momentum = 0.1,
            kind = "batch", x = {-2, -1, 1, 2}},
     focus = "train",
     claims = function(s)
       local tr = result().train
       claim("c15-eval-mean", tr.eval_mean[1])
       claim("c15-eval-var", tr.eval_var[1])
     end},

    {text = [[
In train mode the 32 evaluation values are centred and scaled by their
own mean and variance. In eval mode the layer reaches instead for a
running state built from the 256 training values. Build it exactly: one
centered state (n, mean, m2) per batch, merged batch after batch; the
train/eval panel's exact row holds it, under the evaluation batch's own
mean and variance (the "eval" line): compare them.
(Alt-6)]],
     predict = {question = "Eval mode uses a state merged from 256 training values of the same " ..
                  "population as the 32 evaluation values. Does it have the evaluation " ..
                  "batch's mean?",
                choices = {"yes: same population, same mean",
                           "no: another sample, another estimate"},
                answer = function(s)
                  local t = result().train
                  return math.abs(t.exact.mean[1] - t.eval_mean[1]) < 1e-9 and 1 or 2
                end},
     focus = "train",
     claims = function(s)
       local st = trace((draws()))[BATCHES]
       claim("c15-running-mean", st.mean)
       claim("c15-running-var", st.m2 / st.n)
     end},

    {text = [[
The running estimate settles as batches come in. After batch 1 it is
that batch's own mean and variance; each merge adds 32 more values. The
figure (left half of Fig. 15.2) follows the mean and the variance batch
by batch; the population values are 4 and 4. (Alt-6)
(F: figure)]],
     focus = "train",
     figure = function(s)
       local st = trace((draws()))
       local means, vars = {}, {}
       for b = 1, BATCHES do means[b], vars[b] = st[b].mean, st[b].m2 / st[b].n end
       return ns.plot.lines({{y = means, label = "running mean"},
                             {y = vars, label = "running variance"}},
                            {width = 72, height = 12, xlabel = "merged batches",
                             ylabel = "estimate", title = "Fig. 15.2 (left)"})
     end,
     claims = function(s)
       local st = trace((draws()))
       for b = 1, BATCHES - 1 do
         claim("c15-trace-mean-" .. b, st[b].mean)
         claim("c15-trace-var-" .. b, st[b].m2 / st[b].n)
       end
     end},

    {text = [[
Merging is exact up to rounding: Chan's pairwise formula combines two
states (n, mean, m2) into the state of their union. Compare it with one
pass over all 256 values in a row: the same mean to rounding, and m2
about 973 either way. (Alt-6)]],
     predict = {question = "Chan's merge of the 8 batch states against one pass over all 256 " ..
                  "values: how far apart are the two means?",
                value = function(s)
                  local train = draws()
                  return math.abs(trace(train)[BATCHES].mean -
                                  ns.moments(train, {algo = "welford"}).mean)
                end, tol = 1e-9},
     focus = "train",
     claims = function(s)
       local train = draws()
       local merged = trace(train)[BATCHES]
       local direct = ns.moments(train, {algo = "welford"})
       claim("c15-merge-vs-direct", math.abs(merged.mean - direct.mean))
       claim("c15-merge-m2-vs-direct", math.abs(merged.m2 - direct.m2))
     end},

    {text = [[
Now normalize the same 32 evaluation values twice: with their own
statistics (train mode) and with the running state (eval mode). One
coordinate moves by about 0.448: not rounding, not a shifted population,
just two finite samples that estimate differently (the exact row).
(Alt-6; F: figure)]],
     focus = "train",
     figure = function(s)
       local train, eval = draws()
       local own = ns.moments(eval, {algo = "welford"})
       return ns.plot.lines({{y = column(normalized(eval, own)), label = "batch state"},
                             {y = column(normalized(eval, trace(train)[BATCHES])),
                              label = "running state"}},
                            {width = 72, height = 12, xlabel = "evaluation value",
                             ylabel = "normalized", title = "Fig. 15.2 (right)"})
     end,
     claims = function(s)
       local train, eval = draws()
       local own = ns.moments(eval, {algo = "welford"})
       local gap = normalized(eval, own) - normalized(eval, trace(train)[BATCHES])
       claim("c15-max-discrepancy", gap:abs():max())
     end,
     try = {text = [[
Give the running state more data: raise the training batches (j/J, or
set{train_batches = 64}). The running estimate nears the population, but
the evaluation batch keeps its own sampling error: the gap stays.]],
            check = function(s)
              return s.train_batches > BATCHES or "train_batches is still " .. s.train_batches
            end,
            hints = {"j and J halve and double the training batches",
                     [[set{train_batches = 64}]]},
            show = {train_batches = 64}}},

    {text = [[
Frameworks do not merge exactly. PyTorch keeps an exponential moving
average (momentum 0.1) that starts at mean 0 and variance 1, so after 8
batches it still remembers its start: its gap in the panel is far larger.
The evaluation policy (which estimate, updated how) is part of the
layer's definition. (Alt-6)]],
     focus = "train",
     try = {text = [[
The momentum row forgets its start slowly. Raise the momentum to 0.5
(set{momentum = 0.5}, or o/O) and watch its gap fall to the size of the
cumulative one: a faster average forgets the initial mean 0 and var 1.]],
            check = function(s)
              return (s.momentum ~= false and s.momentum >= 0.5) or
                     "momentum is still " .. tostring(s.momentum)
            end,
            hints = {"o and O halve and double the momentum",
                     [[set{momentum = 0.5}]]},
            show = {momentum = 0.5}}},
  },
}
