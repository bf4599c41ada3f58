-- torch_norms.lua: BatchNorm, GroupNorm, InstanceNorm and LayerNorm against torch 1.13's own
-- CPU outputs and running buffers (tests/data/make-torch-norms.py writes them; cases.tsv
-- lists the cases). order = "torch" (core/torchorder.h) must reproduce every output bit and
-- every running buffer bit; on a difference the check prints the largest distance in units
-- in the last place of the case's dtype. The default accumulation is measured too, so that
-- each case shows it is not torch's order by accident.
local T = dofile((arg and arg[0] or "tests/audit/torch_norms.lua"):gsub("[^/]*$", "") ..
  "../lua/tap.lua")
local ns = T.ns
local top = os.getenv("top_srcdir") or "."
local dir = top .. "/tests/data/torch-norms/"

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function load(case, what, dtype)
  local path = dir .. case .. "." .. what .. ".npy"
  if not exists(path) then return nil end
  return ns.load(path, dtype == "bf16" and {bf16 = true} or nil)
end

-- the bit pattern of v in dtype as an integer ordered like the values (for ulp distances)
local fmt = {fp64 = "<d", fp32 = "<f"}
local function ordered(v, dtype)
  if dtype == "fp16" or dtype == "bf16" then v = ns.round(v, "fp32") end -- exact in fp32
  local f = fmt[dtype] or "<f"
  local u = string.unpack(f == "<d" and "<i8" or "<i4", string.pack(f, v))
  if u < 0 then u = math.mininteger - u end -- sign-magnitude to two's complement order
  return u
end
-- 16-bit values are compared through their fp32 patterns, so their ulp is the dtype's
local ulp_of = {fp64 = 1, fp32 = 1, fp16 = 1 << 13, bf16 = 1 << 16}

-- bits(got) == bits(want) for every element; else the largest ulp distance
local function compare(got, want, dtype)
  if type(got) == "number" then got = {got} end -- a running object of one statistic
  local g = type(got) == "table" and got or got:flat()
  local w = type(want) == "table" and want or want:flat()
  if #g ~= #w then return false, string.format("%d values against %d", #g, #w) end
  local worst, at, bad = 0, 0, 0
  for i = 1, #w do
    local a, b = ordered(g[i], dtype), ordered(w[i], dtype)
    if a ~= b then
      bad = bad + 1
      local d = math.abs(a - b) / ulp_of[dtype]
      if d > worst then worst, at = d, i end
    end
  end
  if bad == 0 then return true, "0 ulp" end
  return false, string.format("%d of %d differ, max %.4g ulp at element %d (got %.9g, torch %.9g)",
    bad, #w, worst, at, g[at], w[at])
end

local cases = {}
for line in io.lines(dir .. "cases.tsv") do
  if line:sub(1, 1) ~= "#" then
    local f = {}
    for v in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = v end
    cases[#cases + 1] = {name = f[1], kind = f[2], dtype = f[3], mode = f[4],
      groups = tonumber(f[5]), dims = tonumber(f[6]), eps = tonumber(f[7]),
      momentum = f[8], count = tonumber(f[9]), what = f[10]}
  end
end
T.ok(#cases >= 25, string.format("cases.tsv lists %d cases", #cases))

local default_far = 0 -- cases where the default accumulation is not torch's bits
for _, c in ipairs(cases) do
  local x, y = load(c.name, "x", c.dtype), load(c.name, "y", c.dtype)
  local spec = {kind = c.kind, dtype = c.dtype, eps = c.eps, mode = c.mode,
    gamma = load(c.name, "gamma", "fp32"), beta = load(c.name, "beta", "fp32"),
    groups = c.groups, order = "torch"}
  if c.dtype == "fp64" then spec.gamma, spec.beta = load(c.name, "gamma", "fp64"),
    load(c.name, "beta", "fp64") end
  if c.name:find("_nhwc", 1, true) then spec.axes = {1, 2, 3} end -- channels_last memory
  if c.dims then
    local ax = {}
    for a = #x:shape() - c.dims + 1, #x:shape() do ax[#ax + 1] = a end
    spec.axes = ax
  end
  local rm0 = load(c.name, "rm0", c.dtype == "fp64" and "fp64" or "fp32")
  local function running()
    if not rm0 then return nil end
    local mom = tonumber(c.momentum) -- "none": the cumulative average (momentum = false)
    if c.momentum == "none" then mom = false end
    return ns.running{momentum = mom,
      mean = rm0, var = load(c.name, "rv0", c.dtype == "fp64" and "fp64" or "fp32"),
      count = c.count}
  end
  local r = running()
  spec.running = r
  local ok, got = pcall(ns.normalize, x, spec)
  if not ok then
    T.ok(false, c.name .. ": " .. c.what, tostring(got))
  else
    local same, how = compare(got, y, c.dtype)
    T.ok(same, string.format("%s: order=torch equals torch bit for bit (%s): %s", c.name, how,
      c.what), how)
    if r and c.mode == "train" then
      local bdt = c.dtype == "fp64" and "fp64" or "fp32"
      local sm, hm = compare(r.mean, load(c.name, "rm1", bdt), bdt)
      local sv, hv = compare(r.var, load(c.name, "rv1", bdt), bdt)
      T.ok(sm and sv, string.format("%s: running mean and var as torch updates them (%s, %s)",
        c.name, hm, hv), "mean: " .. hm .. "; var: " .. hv)
      local want = c.kind == "instance" and c.count or c.count + 1
      T.is(r.count, want, c.name .. ": the count follows num_batches_tracked")
    end
    -- the same call in the default order, to show the vector tells the orders apart
    local sd = {}
    for k, v in pairs(spec) do sd[k] = v end
    sd.order, sd.running = nil, running()
    local same_d = compare(ns.normalize(x, sd), y, c.dtype)
    if not same_d then default_far = default_far + 1 end
  end
end
T.ok(default_far >= #cases // 2, string.format(
  "the default order differs from torch on %d of %d cases (the vectors are not trivial)",
  default_far, #cases))

-- numpy: a user's float32 (x - x.mean(axes)) / np.sqrt(x.var(axes) + eps) (numpy.tsv),
-- against order = "numpy" (numpy's iteration order) and order = "pairwise" (one pairwise
-- sum per statistic, right only when the statistic is one contiguous run)
local npc, np_pairwise_off = 0, 0
for line in io.lines(dir .. "numpy.tsv") do
  if line:sub(1, 1) ~= "#" then
    local f = {}
    for v in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = v end
    local case, kind, what = f[1], f[2], f[7]
    local spec = {kind = kind, dtype = "fp32", order = "numpy", eps = 1e-5,
      groups = tonumber(f[4]), center = f[5] == "1", gamma = load(case, "gamma", "fp32"),
      beta = load(case, "beta", "fp32")}
    if f[3] ~= "-" and kind ~= "batch" and kind ~= "instance" then
      local ax = {}
      for a in f[3]:gmatch("%d+") do ax[#ax + 1] = tonumber(a) end
      spec.axes = ax
    end
    local x, y = load(case, "x", "fp32"), load(case, "y", "fp32")
    local same, how = compare(ns.normalize(x, spec), y, "fp32")
    T.ok(same, string.format("%s: order=numpy equals numpy float32 bit for bit (%s): %s", case,
      how, what), how)
    spec.order = "pairwise"
    if not compare(ns.normalize(x, spec), y, "fp32") then np_pairwise_off = np_pairwise_off + 1 end
    npc = npc + 1
  end
end
T.ok(npc >= 10 and np_pairwise_off >= 3, string.format(
  "numpy.tsv: %d cases; order=pairwise misses numpy on %d (the multi-axis and strided ones)",
  npc, np_pairwise_off))

-- The channel at mean 300, std 0.05 (bn2d_train channel 4): torch's x*alpha + beta cancels
-- there; order torch follows it, the fp64 answer does not.
do
  local x = load("bn2d_train", "x", "fp32")
  local spec = {kind = "batch", dtype = "fp32", gamma = load("bn2d_train", "gamma", "fp32"),
    beta = load("bn2d_train", "beta", "fp32")}
  local function maxerr(s)
    local y64 = ns.normalize(x, {kind = "batch", gamma = spec.gamma, beta = spec.beta})
    local y = ns.normalize(x, s)
    local a, b, d = y:flat(), y64:flat(), 0
    for i = 1, #a do d = math.max(d, math.abs(a[i] - b[i])) end
    return d
  end
  local s1 = {}
  for k, v in pairs(spec) do s1[k] = v end
  s1.order = "torch"
  local s2 = {}
  for k, v in pairs(spec) do s2[k] = v end
  s2.acc = "fp64"
  local dt, d64 = maxerr(s1), maxerr(s2)
  T.ok(dt > 20 * d64, string.format(
    "bn2d_train: torch's x*alpha + beta is %.3g from fp64, acc=fp64 only %.3g", dt, d64))
end

-- I64 buffers: num_batches_tracked from safetensors (0-d I64) and .npy (0-d int64) becomes
-- ns.running{count=}; an 8-byte integer a double cannot hold is refused
do
  local st = dir .. "buffers.safetensors"
  local list = ns.tensors(st)
  T.is(list["bn.num_batches_tracked"].loadable, true, "an I64 buffer is loadable")
  local nbt = ns.load(st, "bn.num_batches_tracked")
  T.ok(#nbt:flat() == 1 and nbt:flat()[1] == 3, "the 0-d I64 num_batches_tracked loads as one value")
  local nbt2 = ns.load(dir .. "count.npy")
  T.ok(#nbt2:flat() == 1 and nbt2:flat()[1] == 3, "the same count from .npy (a 0-d int64)")
  local r = ns.running{momentum = false, mean = ns.load(st, "bn.running_mean"),
    var = ns.load(st, "bn.running_var"), count = nbt}
  T.is(r.count, 3, "ns.running{count = the loaded tensor}")
  ns.normalize(load("bn2d_cma", "x", "fp32"), {kind = "batch", dtype = "fp32", order = "torch",
    running = r})
  local sm = compare(r.mean, load("bn2d_cma", "rm1", "fp32"), "fp32")
  local sv = compare(r.var, load("bn2d_cma", "rv1", "fp32"), "fp32")
  T.ok(sm and sv and r.count == 4,
    "momentum=None from the file's buffers and count: torch's cumulative update, bit for bit")
  local ex = ns.load(st, "exact"):flat()
  T.ok(ex[1] == 2 ^ 53 and ex[2] == -2 ^ 53 and ex[3] == -5, "I64 values a double holds load exactly")
  T.err("cannot hold exactly", "an I64 past 2^53 that a double would round is refused",
    ns.load, st, "inexact")
  T.err("cannot hold exactly", "so is an int64 .npy element -(2^53)-1",
    ns.load, dir .. "inexact_i8.npy")
  T.err("cannot hold exactly", "and a uint64 2^64-1", ns.load, dir .. "inexact_u8.npy")
  local eu = ns.load(dir .. "exact_u8.npy"):flat()
  T.ok(eu[1] == 2 ^ 63 and eu[2] == 2 ^ 53, "uint64 powers of two past 2^53 load exactly")
  T.err("one integer >= 0", "count refuses a tensor of several values",
    ns.running, {count = ns.load(st, "exact")})
end

-- the audit's precision check runs torch's and numpy's own orders: its "torch float32" and
-- "numpy float32" figures are the distances of torch's and numpy's real outputs from fp64
do
  local x = load("audit_bn_hard", "x", "fp32")
  local ref = ns.normalize(x, {kind = "batch"}) -- fp64 on the file's values, the audit's reference
  local function maxd(a, b)
    local fa, fb, d = a:flat(), b:flat(), 0
    for i = 1, #fa do d = math.max(d, math.abs(fa[i] - fb[i])) end
    return d
  end
  local dt = maxd(load("audit_bn_hard", "y", "fp32"), ref)
  local dn = maxd(load("audit_bn_hard", "y_numpy", "fp32"), ref)
  local det = ns.audit(dir .. "audit_bn_hard.x.npy", {kind = "batch"}).precision.detail
  T.ok(det:find(string.format("torch float32 %.2g (", dt), 1, true), string.format(
    "audit: torch float32 is torch's own BatchNorm error, %.2g, on a channel at mean 300", dt), det)
  T.ok(det:find(string.format("numpy float32 %.2g (", dn), 1, true), string.format(
    "audit: numpy float32 is numpy's own error over (N, H, W), %.2g", dn), det)
  local d64 = maxd(ns.normalize(x, {kind = "batch", dtype = "fp32", acc = "fp64"}), ref)
  T.ok(dt > 10 * d64, string.format(
    "and torch's %.2g is far from the acc=fp64 model's %.2g (the column's old stand-in)", dt, d64))
end

-- what a kind cannot use is an error
local x = load("in_track_train", "x", "fp32")
T.err("running statistics are for batch and instance norm", "running with kind layer is refused",
  ns.normalize, x, {kind = "layer", running = ns.running{}})
T.err("running statistics are for batch and instance norm", "running with kind group is refused",
  ns.normalize, x, {kind = "group", groups = 5, running = ns.running{}})
T.err("no cumulative average", "instance norm refuses momentum=false",
  ns.normalize, x, {kind = "instance", running = ns.running{momentum = false}})
T.err("torch 1.13 has no RMSNorm", "order=torch refuses rms",
  ns.normalize, x, {kind = "rms", order = "torch"})
T.err("default axes only", "order=torch refuses explicit batch axes",
  ns.normalize, x, {kind = "batch", axes = {1, 3}, order = "torch"})
-- instance eval without running statistics: torch's InstanceNorm without track_running_stats
-- uses the input's statistics in both modes
local yt = ns.normalize(x, {kind = "instance"})
local ye = ns.normalize(x, {kind = "instance", mode = "eval"})
T.ok(compare(yt, ye, "fp64"), "instance eval without running = train (no buffers to use)")

-- the kernels and the reference path agree on instance norm's running statistics (the
-- default order: the kernels take it)
do
  local xi = load("in_track_train", "x", "fp32")
  local m0, v0 = load("in_track_train", "rm0", "fp32"), load("in_track_train", "rv0", "fp32")
  local r = ns.running{momentum = 0.1, mean = m0, var = v0}
  ns.normalize(xi, {kind = "instance", running = r})
  local ok = true
  -- torch's update in double: per example, then averaged over the 3 examples
  local _, st = ns.normalize(xi, {kind = "instance"})
  local m0f, v0f = m0:flat(), v0:flat()
  local stm = st.mean:flat()
  local n = 64
  for c = 1, 5 do
    local sm, sv = 0, 0
    for e = 0, 2 do
      local s = e * 5 + c
      sm = sm + (0.9 * m0f[c] + 0.1 * stm[s])
      sv = sv + (0.9 * v0f[c] + 0.1 * st.var:flat()[s] * n / (n - 1))
    end
    if math.abs(r.mean[c] - sm / 3) > 1e-12 * (1 + math.abs(sm)) or
      math.abs(r.var[c] - sv / 3) > 1e-12 * (1 + math.abs(sv)) then ok = false end
  end
  T.ok(ok, "instance running update (default order): per-example updates averaged over N")
  local re = ns.running{momentum = 0.1, mean = m0, var = v0}
  local y1 = ns.normalize(xi, {kind = "instance", mode = "eval", running = re})
  local y2 = ns.normalize(xi, {kind = "batch", mode = "eval", running = re})
  T.ok(compare(y1, y2, "fp64"), "instance eval with running = batch eval with the same buffers")
  T.is(re.count, 0, "eval leaves the count alone")
end
T.done()
