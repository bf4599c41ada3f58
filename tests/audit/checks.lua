-- checks.lua: ns.audit on tensors built to trigger each check (a dead channel, a huge
-- offset with a tiny spread, a transposed layout, a running state from another
-- distribution, a spike) and on clean ones that trigger none. The values are compared
-- with references computed here from ns.normalize and tensor reductions, not with the
-- audit's own output; streaming in chunks of 7 elements must agree with one chunk.
local T = dofile((arg and arg[0] or "tests/audit/checks.lua"):gsub("[^/]*$", "") ..
  "../lua/tap.lua")
local ns = T.ns

local g = ns.rng(20261201)

-- (N, C, H, W) with channel c ~ normal(loc[c], scale[c])
local function nchw(N, C, H, W, loc, scale)
  local x = g:normal(0, 1, {N, C, H, W})
  local l = ns.tensor(loc):reshape{1, C, 1, 1}
  local s = ns.tensor(scale):reshape{1, C, 1, 1}
  return x * s + l
end

local function verdicts(r)
  local v = {}
  for _, f in ipairs(r) do v[#v + 1] = f.check .. "=" .. f.verdict end
  return table.concat(v, " ")
end

-- ---- clean batch-norm input: nothing warns
local loc, scale = {0.5, -1, 2, 0, 1, -0.5}, {1, 2, 0.5, 1.5, 1, 3}
local x = nchw(16, 6, 5, 5, loc, scale)
local r = ns.audit(x, {kind = "batch"})
T.is(#r, 6, "six findings without running statistics")
for _, name in ipairs{"axes", "near_zero_variance", "precision", "outliers"} do
  T.is(r[name].verdict, "ok", "clean batch input: " .. name .. " ok")
end
T.is(r.batch_dependence.verdict, "yes", "batch norm: batch_dependence yes")
T.is(r.batch_size_sensitivity.verdict, "yes", "batch norm: batch_size_sensitivity yes")
T.ok(r.train_eval_gap == nil, "no train_eval_gap without running statistics")
T.ok(r.axes.detail:find("{1,3,4}", 1, true), "axes names the reduction {1,3,4}", r.axes.detail)
T.ok(r.axes.detail:find("agree with nchw", 1, true), "the statistics agree with nchw",
  r.axes.detail)

-- batch_dependence's value: recomputed with ns.normalize on the first 16 examples
do
  local y0 = ns.normalize(x, {kind = "batch"})
  local x2 = x:copy()
  local e2 = x:slice(1, 2, 2) * 3 + 1
  x2 = ns.concat({x:slice(1, 1, 1), e2, x:slice(1, 3, 16)}, 1)
  local y1 = ns.normalize(x2, {kind = "batch"})
  local d = (y1:slice(1, 1, 1) - y0:slice(1, 1, 1)):abs():max()
  T.close(r.batch_dependence.value, d, 1e-12, "batch_dependence value = |dy| of example 1")
  -- the alone case: one example, each channel normalized over its own H x W
  local alone = ns.normalize(x:slice(1, 1, 1), {kind = "batch"})
  local full = y0:slice(1, 1, 1)
  local want = (alone - full):abs():max()
  local got = r.batch_size_sensitivity.detail:match("alone it differs by ([%d%.e%-]+)")
  T.close(tonumber(got), tonumber(string.format("%.3g", want)), 0,
    "batch_size_sensitivity: the alone difference (3 digits)")
end

-- outliers' value: max |x - mean| / sqrt(var + eps) per channel, from tensor reductions
do
  local best = 0
  for c = 1, 6 do
    local xc = x:slice(2, c, c)
    local m, v = xc:mean(), xc:var()
    local d = math.max(xc:max() - m, m - xc:min()) / math.sqrt(v + 1e-5)
    best = math.max(best, d)
  end
  T.close(r.outliers.value, best, 1e-10, "outliers value = largest |z| (reference)")
end

-- streaming: chunks of 7 elements give the same findings to rounding
do
  local r7 = ns.audit(x, {kind = "batch", chunk = 7})
  local worst = 0
  for i, f in ipairs(r) do
    local a, b = f.value, r7[i].value
    worst = math.max(worst, math.abs(a - b) / math.max(1e-300, math.abs(a)))
  end
  T.ok(worst < 1e-9, "chunks of 7 elements: every value within 1e-9 (rel " .. worst .. ")")
  T.is(verdicts(r7), verdicts(r), "chunks of 7 elements: the same verdicts")
end

-- ---- layer norm of a (B, T, D) tensor: per-example, nothing couples
do
  local y = g:normal(0, 1, {4, 8, 16}) * 2 + 1
  local q = ns.audit(y, {kind = "layer"})
  T.is(q.batch_dependence.verdict, "no", "layer norm: batch_dependence no")
  T.is(q.batch_dependence.value, 0, "layer norm: the target's output does not move at all")
  T.is(q.batch_size_sensitivity.verdict, "no", "layer norm: batch_size_sensitivity no")
  T.ok(q.axes.detail:find("layer norm over axes {3}", 1, true), "layer norm reduces {3}",
    q.axes.detail)
  local t = ns.audit(y, {kind = "layer", running = {mean = {0}, var = {1}}})
  T.is(t.train_eval_gap.verdict, "no", "layer norm with running statistics: train_eval_gap no")
end

-- ---- a dead channel
do
  local d = nchw(8, 4, 6, 6, {0, 1, 0.25, -1}, {1, 1, 1e-4, 2})
  local q = ns.audit(d, {kind = "batch"})
  T.is(q.near_zero_variance.verdict, "warn", "a dead channel: near_zero_variance warn")
  T.is(q.near_zero_variance.value, 1, "exactly one statistic below 100 eps")
  T.ok(q.near_zero_variance.detail:find("1-based 3)", 1, true), "it names channel 3 (1-based)",
    q.near_zero_variance.detail)
  local v = d:slice(2, 3, 3):var()
  T.ok(q.near_zero_variance.detail:find(string.format("the smallest, %.3g", v), 1, true),
    "it reports that channel's variance " .. string.format("%.3g", v),
    q.near_zero_variance.detail)
  -- a larger eps makes more channels "dead"; eps 0 none (var > 0)
  local q0 = ns.audit(d, {kind = "batch", eps = 0})
  T.is(q0.near_zero_variance.verdict, "ok", "eps 0: no variance is below 100 eps")
end

-- ---- a huge offset with a tiny spread: precision
do
  local h = g:normal(1e4, 1e-2, {64, 32})
  local q = ns.audit(h, {kind = "layer"})
  T.is(q.precision.verdict, "warn", "offset 1e4, spread 1e-2: precision warn")
  local worst = 0
  for b = 1, 64 do
    local row = h:slice(1, b, b)
    local m, v = row:mean(), row:var()
    worst = math.max(worst, m * m / v)
  end
  T.close(q.precision.value, math.log(1 + worst, 10), 1e-9,
    "precision value = log10(1 + max mean^2/var) (reference)")
  T.ok(q.precision.value > 11, "about 12 digits lost by raw moments")
  local clean = ns.audit(g:normal(0, 1, {64, 32}), {kind = "layer"})
  T.is(clean.precision.verdict, "ok", "centred data: precision ok")
end

-- ---- a transposed layout: channels last, audited as channels first
do
  local xt = g:normal(0, 1, {8, 5, 5, 6}) * ns.tensor{1, 3, 0.5, 2, 1, 4} +
    ns.tensor{2, -2, 0, 5, 1, -3}
  local q = ns.audit(xt, {kind = "batch"})
  T.is(q.axes.verdict, "warn", "channels last read as nchw: axes warn")
  T.ok(q.axes.detail:find("suggest nhwc", 1, true), "the statistics suggest nhwc", q.axes.detail)
  local ok = ns.audit(xt, {kind = "batch", layout = "nhwc"})
  T.is(ok.axes.verdict, "ok", "with layout nhwc: axes ok")
  T.ok(ok.axes.detail:find("{1,2,3}", 1, true), "nhwc batch norm reduces {1,2,3}", ok.axes.detail)
  -- along the wrong layout, the output's channel means are far from 0
  T.ok(ok.axes.detail:find("along nchw's axes", 1, true), "and reports the nchw reading",
    ok.axes.detail)
end

-- ---- running statistics from another distribution
do
  local xb = nchw(16, 3, 4, 4, {3, -2, 0.5}, {2, 1, 1})
  local other = ns.running{mean = {0, 0, 0}, var = {1, 1, 1}}
  local q = ns.audit(xb, {kind = "batch", running = other})
  T.is(q.train_eval_gap.verdict, "warn", "running state of N(0,1) for N(3,2) data: warn")
  -- reference: rms of y_eval - y_train per channel, from ns.normalize in both modes
  local ytr = ns.normalize(xb, {kind = "batch"})
  local yev = ns.normalize(xb, {kind = "batch", mode = "eval", running = other})
  local worst = 0
  for c = 1, 3 do
    local d = yev:slice(2, c, c) - ytr:slice(2, c, c)
    worst = math.max(worst, math.sqrt(d:square():mean()))
  end
  T.close(q.train_eval_gap.value, worst, 1e-9, "train_eval_gap value = worst rms gap (reference)")
  -- the running statistics of this very batch: no gap
  local m, v = {}, {}
  for c = 1, 3 do
    local xc = xb:slice(2, c, c)
    m[c], v[c] = xc:mean(), xc:var()
  end
  local same = ns.audit(xb, {kind = "batch", running = {mean = m, var = v}})
  T.is(same.train_eval_gap.verdict, "ok", "running = the batch's own statistics: ok")
  T.ok(same.train_eval_gap.value < 1e-9, "and the gap is 0 to rounding")
  local ok, err = pcall(ns.audit, xb, {kind = "batch", running = {mean = {0, 0}, var = {1, 1}}})
  T.ok(not ok and tostring(err):find("2 values", 1, true), "a wrong channel count is refused",
    tostring(err))
end

-- ---- a spike: outliers
do
  local s = g:normal(0, 1, {32, 64})
  local f = s:flat()
  f[5 * 64 + 7] = 1e3
  s = ns.tensor(f, {32, 64})
  local q = ns.audit(s, {kind = "layer"})
  T.is(q.outliers.verdict, "warn", "one value of 1e3: outliers warn")
  T.ok(math.abs(q.outliers.value - math.sqrt(63)) < 0.1, "its |z| nears sqrt(n-1) = 7.94...",
    tostring(q.outliers.value))
  T.is(q.near_zero_variance.verdict, "ok", "and nothing else is dead")
end

-- ---- option errors name the option
for _, bad in ipairs{
  {{kind = "nope"}, "opts.kind"}, {{layout = "nhwc"}, "layout nhwc is for rank 4"},
  {{kind = "group", groups = 5}, "groups"}, {{eps = -1}, "opts.eps"},
} do
  local ok, err = pcall(ns.audit, ns.zeros{2, 3, 4}, bad[1])
  T.ok(not ok and tostring(err):find(bad[2], 1, true), "refused: " .. bad[2], tostring(err))
end

T.done()
