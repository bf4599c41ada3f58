-- torch_layernorm.lua: LayerNorm against torch 1.13's own CPU outputs
-- (tests/data/make-torch-layernorm.py). order = "torch" (core/torchorder.h: torch's 8-lane
-- Welford cascade and fused output) must reproduce torch bit for bit; the other
-- accumulations are measured and printed, so the report's figures come from here.
local T = dofile((arg and arg[0] or "tests/audit/torch_layernorm.lua"):gsub("[^/]*$", "") ..
  "../lua/tap.lua")
local ns = T.ns
local top = os.getenv("top_srcdir") or "."
local dir = top .. "/tests/data/torch-layernorm/"

local function maxdiff(a, b)
  local fa, fb = a:flat(), b:flat()
  if #fa ~= #fb then return math.huge end
  local d = 0
  for i = 1, #fa do d = math.max(d, math.abs(fa[i] - fb[i])) end
  return d
end

local x, y = ns.load(dir .. "x.npy"), ns.load(dir .. "y.npy")
local gamma, beta = ns.load(dir .. "gamma.npy"), ns.load(dir .. "beta.npy")
T.is(x:dtype(), "fp32", "the fixture's input is float32")
local base = {kind = "layer", dtype = "fp32", gamma = gamma, beta = beta}
local function with(t)
  local s = {}
  for k, v in pairs(base) do s[k] = v end
  for k, v in pairs(t) do s[k] = v end
  return s
end

-- torch's order: every output bit
local d = maxdiff(ns.normalize(x, with {order = "torch"}), y)
T.ok(d == 0, string.format(
  "order=torch: (4,32,768) with outlier features equals torch's LayerNorm (max diff %.3g)", d))
d = maxdiff(ns.normalize(x, {kind = "layer", dtype = "fp32", order = "torch"}),
  ns.load(dir .. "y_plain.npy"))
T.ok(d == 0, string.format(
  "order=torch without weights equals torch's (elementwise_affine=False) (%.3g)", d))

-- the other accumulations, measured (these are the figures, not thresholds of the code)
local figures = {}
for _, c in ipairs{{"acc fp32 sequential", {acc = "fp32"}},
                   {"acc fp32 welford", {acc = "fp32", algo = "welford"}},
                   {"acc fp32 pairwise", {acc = "fp32", order = "pairwise"}},
                   {"acc fp64", {acc = "fp64"}},
                   {"order=torch in fp64 (torch's double kernel)",
                    {acc = "fp64", order = "torch"}}} do
  local dd = maxdiff(ns.normalize(x, with(c[2])), y)
  figures[#figures + 1] = string.format("%s %.3g", c[1], dd)
  T.ok(dd > 0, string.format("%s is %.3g away from torch: not torch's order", c[1], dd))
end
T.diag("LayerNorm(768) vs torch 1.13, max |y - y_torch|: order=torch 0; " ..
  table.concat(figures, "; "))

-- torch's own float32 moments: the mean and rstd of the (8,128,768) randn input, every row
local xb = ns.torch_rng(0):randn({8, 128, 768})
local yb, st = ns.normalize(xb, with {order = "torch"})
local tm, tr = ns.load(dir .. "big_mean.npy"):flat(), ns.load(dir .. "big_rstd.npy"):flat()
local m, den = st.mean:flat(), st.denom:flat()
local bad = 0
for i = 1, #tm do
  local rstd = ns.round(1 / den[i], "fp32")
  if m[i] ~= tm[i] or rstd ~= tr[i] then bad = bad + 1 end
end
T.is(bad, 0, "order=torch: all 1024 row means and rstds of (8,128,768) equal torch's bit for bit")
local want
for line in io.lines(dir .. "big.tsv") do
  local k, h = line:match("^(%w+)\t(%x+)$")
  if k == "y" then want = h end
end
local parts, fl = {}, yb:flat()
for i = 1, #fl, 4096 do
  local chunk = {}
  for j = i, math.min(i + 4095, #fl) do chunk[#chunk + 1] = string.pack("<f", fl[j]) end
  parts[#parts + 1] = table.concat(chunk)
end
T.is(ns.sha256(table.concat(parts)), want,
  "order=torch: the (8,128,768) output's bytes hash as torch's")
local d64 = maxdiff(ns.normalize(xb, with {acc = "fp64"}), yb)
T.diag(string.format("(8,128,768) randn: acc fp64 is %.3g from torch's output", d64))

-- the audit's precision check: what numpy and torch would give, measured against their own
-- outputs (numpy's float32 layer norm and torch's LayerNorm without weights, both fixtures)
do
  local r = ns.audit(dir .. "x.npy", {kind = "layer"})
  local det = r.precision.detail
  local ref = ns.normalize(x, {kind = "layer"}) -- fp64 on the file's values, the audit's reference
  T.ok(det:find("all 4 examples", 1, true), "the precision check renormalizes all of x", det)
  local dn = maxdiff(ns.load(dir .. "y_numpy.npy"), ref)
  local dt = maxdiff(ns.load(dir .. "y_plain.npy"), ref)
  T.ok(det:find(string.format("numpy float32 %.2g (np.mean and np.var in float32", dn), 1, true),
    string.format("precision: numpy's float32 drift is numpy's own (%.2g)", dn), det)
  T.ok(det:find(string.format("torch float32 %.2g (its LayerNorm", dt), 1, true),
    string.format("precision: torch's float32 drift is torch's own (%.2g)", dt), det)
  local rb = ns.audit(dir .. "x.npy", {kind = "batch", axes = {1, 2}})
  T.ok(rb.precision.detail:find("x*alpha + beta in float32: order=torch", 1, true),
    "precision: batch norm runs torch's own BatchNorm arithmetic", rb.precision.detail)
  local rr = ns.audit(dir .. "x.npy", {kind = "rms"})
  T.ok(rr.precision.detail:find("no such module", 1, true),
    "precision: rms norm has no torch module")
end

-- what the order refuses
local ok, err = pcall(ns.normalize, x, {kind = "rms", dtype = "fp32", order = "torch"})
T.ok(not ok and tostring(err):find("LayerNorm", 1, true),
  "order=torch refuses rms: " .. tostring(err))
ok, err = pcall(ns.normalize, x, {kind = "layer", dtype = "fp16", acc = "fp16", order = "torch"})
T.ok(not ok and tostring(err):find("acc fp32 or fp64", 1, true), "order=torch refuses acc fp16")
T.done()
