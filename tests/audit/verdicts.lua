-- verdicts.lua: the audit's verdicts on the planted faults of the PyTorch review (issue 22,
-- section 3), each against a reference computed here, and the clean controls that must not
-- warn. Every case failed before the audit's streaming rewrite: fp16 overflow read ok, bf16
-- damage and 16-bit granularity read ok, every clean batch-norm input warned from
-- normscope's own sequential fp32 column, a dead channel picked the raw-moment worst case,
-- NaN statistics read "ok -nan", batch_dependence said "no" when one example filled the
-- in-memory slice, channels-last bytes under an NCHW shape were sent to --layout nhwc, the
-- RMS bound was sqrt(n-1), instance norm ignored --running, and indices were 0-based.
local T = dofile((arg and arg[0] or "tests/audit/verdicts.lua"):gsub("[^/]*$", "") ..
  "../lua/tap.lua")
local ns = T.ns
local g = ns.rng(20261222)

local function find(s, pat) return s:find(pat, 1, true) ~= nil end

-- (N, C, H, W) with channel c ~ normal(loc[c], scale[c])
local function nchw(N, C, H, W, loc, scale)
  local x = g:normal(0, 1, {N, C, H, W})
  return x * ns.tensor(scale):reshape{1, C, 1, 1} + ns.tensor(loc):reshape{1, C, 1, 1}
end

-- ---- fp16 overflow: a feature at ~1e5 in fp32 activations
do
  local f = g:normal(0, 1, {8, 16, 32}):flat()
  local over = 0
  for i = 1, #f do
    if (i - 1) % 32 == 5 then f[i] = 1e5 + f[i]; over = over + 1 end
  end
  local q = ns.audit(ns.tensor(f, {8, 16, 32}), {kind = "layer"})
  T.is(q.precision.verdict, "warn", "fp16 overflow: precision warns")
  T.ok(find(q.precision.detail, over .. " values overflow fp16 (|x| > 65504)"),
    "and says how many values overflow fp16 (" .. over .. ")", q.precision.detail)
  T.ok(q.precision.detail:find("^" .. over .. " values overflow fp16"),
    "the warning leads with the number that tripped it", q.precision.detail)
end

-- ---- bf16 damage: offset 64, std 2 (LayerNorm over 64 features)
local offs = g:normal(64, 2, {16, 8, 64})
do
  local q = ns.audit(offs, {kind = "layer"})
  -- the reference: y of the bf16-rounded input against y of the input, in fp64
  local y = ns.normalize(offs, {kind = "layer"}):flat()
  local yb = ns.normalize(offs:astype("bf16"):astype("fp64"), {kind = "layer"}):flat()
  local d = 0
  for i = 1, #y do d = math.max(d, math.abs(yb[i] - y[i]) / math.max(1, math.abs(y[i]))) end
  T.ok(d > 0.05, string.format("the planted damage: bf16 storage moves y by %.3g", d))
  T.is(q.precision.verdict, "warn", "bf16 storage damage: precision warns")
  T.ok(find(q.precision.detail, string.format("storing x in bf16 moves y by %.2g (> 0.05", d)),
    "naming the damage and the threshold", q.precision.detail)
end

-- ---- the same values already stored in bf16: only their granularity shows it
do
  local b = offs:astype("bf16")
  local q = ns.audit(b, {kind = "layer"})
  T.is(q.precision.verdict, "warn", "bf16 data at offset 64: precision warns on the step")
  T.ok(find(q.precision.detail, "the file's bf16 values are coarse"), "it names the step",
    q.precision.detail)
  -- the step at 64 is 0.5: a row of 64 values holds few distinct ones
  local n = tonumber(q.precision.detail:match("a statistic with (%d+) distinct values of 64"))
  T.ok(n and n < 40, "a statistic with few distinct values (" .. tostring(n) .. " of 64)",
    q.precision.detail)
  local clean = ns.audit(g:normal(0, 1, {16, 8, 64}):astype("bf16"), {kind = "layer"})
  T.is(clean.precision.verdict, "ok", "control: centred bf16 data, precision ok")
end

-- ---- no warning from the program's own sequential fp32 column (clean batch-norm input)
do
  local x = nchw(32, 2, 64, 64, {10, -10}, {1, 1})
  local q = ns.audit(x, {kind = "batch"})
  local seq = tonumber(q.precision.detail:match("and fp32 summed in index order ([%d%.e%-+]+)"))
  T.ok(seq and seq > 1e-4, "the sequential fp32 column exceeds 1e-4 here (" .. tostring(seq) .. ")",
    q.precision.detail)
  T.is(q.precision.verdict, "ok", "and precision is ok: no framework sums that way")
  local numpy = tonumber(q.precision.detail:match("numpy float32 ([%d%.e%-+]+)"))
  T.ok(numpy and numpy <= 1e-4, "numpy's float32 within 1e-4 (" .. tostring(numpy) .. ")")
end

-- ---- a dead channel does not pick the raw-moment worst case; a nearly dead one does
do
  local x = nchw(8, 4, 16, 16, {0, 1, 0, -1}, {1, 1, 0, 2})       -- channel 3 constant 0
  local f = x:flat()
  for n = 0, 7 do -- channel 2: mean 1, std 2e-3 (mean^2/var 2.5e5: 5.4 digits)
    for j = 1, 256 do
      local i = (n * 4 + 1) * 256 + j
      f[i] = 1 + (f[i] - 1) * 2e-3
    end
  end
  x = ns.tensor(f, {8, 4, 16, 16})
  local q = ns.audit(x, {kind = "batch"})
  local xc = x:slice(2, 2, 2)
  local m, v = xc:mean(), xc:var()
  local want = math.log(1 + m * m / v, 10)
  T.close(q.precision.value, want, 1e-9, "raw-moment digits from the nearly dead channel 2, not "
    .. "the dead channel 3 (" .. string.format("%.3g", want) .. ")")
  T.is(q.precision.verdict, "warn", "5.4 digits lost: precision warns")
  T.ok(find(q.precision.detail, "at statistic 2)"), "it names statistic 2 (1-based)",
    q.precision.detail)
  -- a constant channel at 5: variance 0, nothing to cancel; no 17-digit warning
  local c = nchw(8, 3, 8, 8, {0, 5, 1}, {1, 0, 2})
  local qc = ns.audit(c, {kind = "batch"})
  T.ok(qc.precision.value < 1, "a constant channel at 5 loses no digits (" ..
    qc.precision.value .. ")")
  T.is(qc.precision.verdict, "ok", "and precision is ok")
  -- near_zero_variance on the constant channel: no "shrunk by 0", and its log10 0 left out
  T.ok(not find(qc.near_zero_variance.detail, "shrunk by 0"), "no 'shrunk by 0'",
    qc.near_zero_variance.detail)
  T.ok(find(qc.near_zero_variance.detail, "1-based 2)") and
    find(qc.near_zero_variance.detail, "whatever eps"), "the constant channel 2 is named",
    qc.near_zero_variance.detail)
  T.ok(not qc.text:find("%-300"), "the variance figure has no log10(0) clamped to -300")
end

-- ---- NaN statistics are a warning that lists them, never "ok -nan"
do
  local f = g:normal(0, 1, {8, 4, 6, 6}):flat()
  f[3 * 36 + 5] = 1 / 0 -- channel 4 of example 1
  f[(4 + 1) * 36 + 2] = 0 / 0 -- channel 2 of example 2
  local q = ns.audit(ns.tensor(f, {8, 4, 6, 6}), {kind = "batch"})
  T.is(q.near_zero_variance.verdict, "warn", "statistics that are not finite: near_zero warns")
  T.ok(find(q.near_zero_variance.detail, "2 of 4 statistics are not finite") and
    find(q.near_zero_variance.detail, "1-based 2, 4)"), "listing channels 2 and 4",
    q.near_zero_variance.detail)
  for _, fd in ipairs(q) do
    T.ok(not find(fd.detail, "-nan") and not find(fd.detail, " nan%"), fd.check .. ": no -nan",
      fd.detail)
  end
  T.is(q.precision.verdict, "warn", "precision warns on values that are not finite")
end

-- ---- batch_dependence when one example fills the in-memory slice (2^18 elements)
do
  local x = nchw(3, 16, 128, 128, {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3},
    {1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2})
  local q = ns.audit(x, {kind = "batch"})
  T.is(q.batch_dependence.verdict, "yes", "an example of 2^18 elements: batch_dependence yes")
  local y0 = ns.normalize(x, {kind = "batch"})
  local x2 = ns.concat({x:slice(1, 1, 1), x:slice(1, 2, 2) * 3 + 1, x:slice(1, 3, 3)}, 1)
  local y1 = ns.normalize(x2, {kind = "batch"})
  local d = (y1:slice(1, 1, 1) - y0:slice(1, 1, 1)):abs():max()
  T.close(q.batch_dependence.value, d, 1e-9 * d, "its value = |dy| of example 1 in the full batch")
  local one = ns.audit(x:slice(1, 1, 1), {kind = "batch"})
  T.is(one.batch_dependence.verdict, "n/a", "one example in the file: n/a, not no")
  T.ok(find(one.batch_dependence.detail, "not measured"), "saying it cannot be measured",
    one.batch_dependence.detail)
  local v = ns.audit(g:normal(0, 1, {40}), {kind = "layer"})
  T.is(v.batch_dependence.verdict, "n/a", "a rank-1 layer-norm input is one example: n/a")
end

-- ---- channels-last bytes under an NCHW shape (C = 16, a 12 x 12 crop)
do
  local loc, scale = {}, {}
  for c = 1, 16 do loc[c], scale[c] = (c % 5) - 2, 0.5 + (c % 3) end
  local nhwc = g:normal(0, 1, {8, 12, 12, 16}) * ns.tensor(scale) + ns.tensor(loc)
  local x = ns.tensor(nhwc:flat(), {8, 16, 12, 12}) -- the bytes, read as NCHW
  local q = ns.audit(x, {kind = "batch"})
  T.is(q.axes.verdict, "warn", "channels-last bytes as NCHW: axes warns")
  T.ok(find(q.axes.detail, "channels-last bytes under a channels-first shape") and
    find(q.axes.detail, "i mod 16"), "naming the bytes' layout", q.axes.detail)
  T.ok(not find(q.axes.detail, "try --layout nhwc"), "not recommending --layout nhwc",
    q.axes.detail)
  local qn = ns.audit(x, {kind = "batch", layout = "nhwc"})
  T.is(qn.axes.verdict, "warn", "with --layout nhwc (no axis is the channel axis): still warn")
  -- control: the same values with their true shape and layout
  local ok = ns.audit(nhwc, {kind = "batch", layout = "nhwc"})
  T.is(ok.axes.verdict, "ok", "control: the true shape with layout nhwc, axes ok")
end

-- ---- RMS: the outlier bound is sqrt(n)
do
  local x = g:normal(0, 1, {8, 100})
  local q = ns.audit(x, {kind = "rms"})
  T.ok(find(q.outliers.detail, "sqrt(n) = 10 for n = 100"), "rms: bound sqrt(n) = 10",
    q.outliers.detail)
  local l = ns.audit(x, {kind = "layer"})
  T.ok(find(l.outliers.detail, "sqrt(n-1) = 9.95 for n = 100"), "layer: bound sqrt(n-1)",
    l.outliers.detail)
end

-- ---- InstanceNorm with running statistics (track_running_stats): train_eval_gap
do
  local x = nchw(6, 3, 8, 8, {1, -2, 0.5}, {2, 1, 0.5})
  local run = ns.running{mean = {0.2, -1.5, 0.5}, var = {3, 1, 0.3}}
  local q = ns.audit(x, {kind = "instance", running = run})
  local ytr = ns.normalize(x, {kind = "instance"})
  local yev = ns.normalize(x, {kind = "batch", mode = "eval", running = run}) -- per channel
  local worst = 0
  for c = 1, 3 do
    local d = yev:slice(2, c, c) - ytr:slice(2, c, c)
    worst = math.max(worst, math.sqrt(d:square():mean()))
  end
  T.ok(q.train_eval_gap.verdict ~= "no", "instance norm with --running: the gap is measured (" ..
    q.train_eval_gap.verdict .. ")", q.train_eval_gap.detail)
  T.close(q.train_eval_gap.value, worst, 1e-9, "train_eval_gap = worst channel's rms of " ..
    "y_eval - y_train (reference)")
  T.err("instance norm's axis 2 has 3 channels", "a running count other than C is refused",
    ns.audit, x, {kind = "instance", running = {mean = {0, 0}, var = {1, 1}}})
end

-- ---- indices are 1-based everywhere (N9)
do
  local x = nchw(8, 5, 4, 4, {0, 1, 2, 3, 4}, {1, 1, 1, 1, 50})
  local r = ns.running{mean = {0, 1, 2, 3, 40}, var = {1, 1, 1, 1, 1}}
  local q = ns.audit(x, {kind = "batch", running = r})
  T.ok(find(q.train_eval_gap.detail, "worst channel 5 (1-based)"), "train_eval_gap: channel 5",
    q.train_eval_gap.detail)
  T.ok(find(q.outliers.detail, "in statistic "), "outliers names a statistic")
  local z = tonumber(q.outliers.detail:match("in statistic (%d+)"))
  T.ok(z and z >= 1 and z <= 5, "a 1-based statistic (" .. tostring(z) .. ")")
end

T.done()
