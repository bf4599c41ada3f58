-- stack.lua: the 20-layer tanh stack of chapter 004 ("normalisation erases the
-- initialisation") through ns.stack: the numpy-compatible stream (h first, then
-- W_1..W_20), BLAS matmul, batch and layer norm with eps added to the std, tanh, and the
-- population std of the last layer, against claims.tsv. A straightforward Lua loop over
-- the module's primitives is kept as an independent reference for the smaller runs.
local T = dofile((arg and arg[0] or "tests/lua/stack.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

-- The reference: the essay's loop written out. Returns h and per-layer std(h), and the
-- kurtosis and max |z| of the normalized pre-activation z.
local function lua_stack(B, init, norm, act, layers)
  local g = ns.rng(0)
  local h = g:normal(0, 1, {B, 256})
  local std, kurt, maxabs = {}, {}, {}
  for k = 1, layers or 20 do
    local W = g:normal(0, 1, {256, 256})
    local z = ns.matmul(h, W * init)
    if norm ~= "none" then z = ns.normalize(z, {kind = norm, eps = 1e-5, eps_at = "std"}) end
    kurt[k], maxabs[k] = z:kurtosis(), z:abs():max()
    h = act == "linear" and z or z:tanh()
    std[k] = h:std()
  end
  return h, std, kurt, maxabs
end

local function stack(B, init, norm, act)
  return ns.stack{batch = B, init = init, norm = norm or "none", act = act or "tanh"}
end
local function l20(B, init, norm, act) return stack(B, init, norm, act).std[20] end

-- ns.stack with the C library's tanh against the reference loop (whose z:tanh() is that
-- tanh), bit for bit; the default vectorized tanh (within 4 ulps, test_kernels) close to it
for _, c in ipairs{{4, 1 / 16, "batch", "tanh"}, {8, 1 / 16, "layer", "tanh"},
  {4, 1 / 16, "batch", "linear"}, {16, 0.01, "none", "tanh"}, {32, 1.0, "none", "tanh"}} do
  local B, init, norm, act = c[1], c[2], c[3], c[4]
  local r = ns.stack{batch = B, init = init, norm = norm, act = act, tanh = "libm"}
  local h, std, kurt, maxabs = lua_stack(B, init, norm, act)
  local same = (r.h - h):abs():max() == 0
  for k = 1, 20 do
    same = same and r.std[k] == std[k] and r.kurtosis[k] == kurt[k] and r.maxabs[k] == maxabs[k]
  end
  T.ok(same, string.format("ns.stack = the Lua loop, every layer (B=%d, init %g, %s, %s)", B, init, norm, act))
end
for _, c in ipairs{{512, 1 / 16, "batch"}, {512, 1 / 16, "layer"}, {512, 1.0, "none"},
  {512, 0.01, "none"}, {4, 1 / 16, "batch"}} do
  local B, init, norm = c[1], c[2], c[3]
  local f = ns.stack{batch = B, init = init, norm = norm}
  local l = ns.stack{batch = B, init = init, norm = norm, tanh = "libm"}
  local worst = 0
  for k = 1, 20 do worst = math.max(worst, math.abs(f.std[k] - l.std[k]) / l.std[k]) end
  T.ok(worst < 1e-9 and worst == worst, string.format(
    "fast tanh: every layer's std within 1e-9 of the C library's (B=%d, init %g, %s: %.3g)", B,
    init, norm, worst))
end
local r512 = ns.stack{norm = "layer", layers = 3, tanh = "libm"}
local h3, std3 = lua_stack(512, 1 / 16, "layer", "tanh", 3)
T.ok((r512.h - h3):abs():max() == 0 and r512.std[3] == std3[3], "ns.stack = the Lua loop at B=512 (3 layers)")
T.is(table.concat(r512.h:shape(), ","), "512,256", "h is the last layer's batch x width")
T.is(#r512.std, 3, "one statistic per layer")

T.claim(claims, "e-none-l20-001", l20(512, 0.01))
T.claim(claims, "e-none-l20-1", l20(512, 1.0))
T.claim(claims, "e-none-l20-xavier", l20(512, 1 / 16))
local bn = {}
for _, init in ipairs{0.01, 1.0, 1 / 16} do bn[init] = l20(512, init, "batch") end
T.claim(claims, "e-bn-l20-512", bn[1 / 16])
local hi, lo = -math.huge, math.huge
for _, v in pairs(bn) do hi, lo = math.max(hi, v), math.min(lo, v) end
T.claim(claims, "e-bn-init-spread", hi - lo)
for _, B in ipairs{4, 8, 32, 256} do
  T.claim(claims, "e-bn-l20-batch" .. B, l20(B, 1 / 16, "batch"))
end
for _, B in ipairs{4, 8, 32, 256, 512} do
  T.claim(claims, "e-ln-l20-batch" .. B, l20(B, 1 / 16, "layer"))
end
T.claim(claims, "e-linear-l20", l20(4, 1 / 16, "batch", "linear"))
T.claim(claims, "e-linear-l20-512", l20(512, 1 / 16, "batch", "linear"))

-- the clipped tails at batch 4: |z| <= sqrt(3) and the kurtosis near 3(n-1)/(n+1) = 1.8
local b4 = stack(4, 1 / 16, "batch")
local zmax, kmean = 0, 0
for k = 1, 20 do
  zmax = math.max(zmax, b4.maxabs[k])
  kmean = kmean + b4.kurtosis[k] / 20
end
T.ok(zmax <= math.sqrt(3), string.format("batch 4: max |z| over 20 layers %.6f <= sqrt(3)", zmax))
T.close(kmean, claims["e-kurtosis-4"].expected, 0.05, "batch 4: mean kurtosis of z near 3(n-1)/(n+1)")

-- one batch of 4 standardized by its own statistics: std just below 1 (eps)
local z = ns.normalize(ns.rng(0):normal(0, 1, {4, 256}), {kind = "batch", eps = 1e-5, eps_at = "std"})
T.claim(claims, "e-bnout-std-4", z:std())
-- the largest |z| a self-standardized batch of 4 can hold, sqrt(n-1), at one outlier
local zb = ns.normalize(ns.tensor{1, 0, 0, 0}, {kind = "batch", eps = 0})
T.claim(claims, "e-zbound-4", zb:abs():max())

T.err("unknown option", "unknown option", ns.stack, {layer = 3})
T.err("opts.layers must be an integer", "zero layers", ns.stack, {layers = 0})
T.err("opts.width must be an integer", "huge width", ns.stack, {width = 1e6})
T.err("opts.batch must be an integer", "batch too large for the width", ns.stack, {batch = 2 ^ 30})
T.err("opts.norm must be one of", "unknown norm", ns.stack, {norm = "group"})
T.err("opts.act must be one of", "unknown act", ns.stack, {act = "relu"})
T.err("opts.tanh must be one of", "unknown tanh", ns.stack, {tanh = "exact"})
T.err("opts.init must be a finite number", "NaN init", ns.stack, {init = 0 / 0})
T.err("opts.eps must be finite and >= 0", "negative eps", ns.stack, {eps = -1})
T.err("opts must be a table", "no options", ns.stack)
T.done()
