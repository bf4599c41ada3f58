-- stack.lua: the 20-layer tanh stack of chapter 004 ("normalisation erases the
-- initialisation"), end to end through the module: the numpy-compatible stream
-- (h first, then W_1..W_20), BLAS matmul, batch and layer norm with eps added to the
-- std, tanh, and the population std of the last layer, against claims.tsv.
local T = dofile((arg and arg[0] or "tests/lua/stack.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

-- std of layer-20 activations; norm: nil, "batch", "layer"; act: "tanh" or "linear"
local function stack(B, init, norm, act)
  local g = ns.rng(0)
  local h = g:normal(0, 1, {B, 256})
  for _ = 1, 20 do
    local W = g:normal(0, 1, {256, 256})
    local z = ns.matmul(h, W * init)
    if norm then z = ns.normalize(z, {kind = norm, eps = 1e-5, eps_at = "std"}) end
    h = act == "linear" and z or z:tanh()
  end
  return h:std()
end

T.claim(claims, "e-none-l20-001", stack(512, 0.01))
T.claim(claims, "e-none-l20-1", stack(512, 1.0))
T.claim(claims, "e-none-l20-xavier", stack(512, 1 / 16))
local bn = {}
for _, init in ipairs{0.01, 1.0, 1 / 16} do bn[init] = stack(512, init, "batch") end
T.claim(claims, "e-bn-l20-512", bn[1 / 16])
local hi, lo = -math.huge, math.huge
for _, v in pairs(bn) do hi, lo = math.max(hi, v), math.min(lo, v) end
T.claim(claims, "e-bn-init-spread", hi - lo)
for _, B in ipairs{4, 8, 32, 256} do
  T.claim(claims, "e-bn-l20-batch" .. B, stack(B, 1 / 16, "batch"))
end
for _, B in ipairs{4, 8, 32, 256, 512} do
  T.claim(claims, "e-ln-l20-batch" .. B, stack(B, 1 / 16, "layer"))
end
T.claim(claims, "e-linear-l20", stack(4, 1 / 16, "batch", "linear"))

-- one batch of 4 standardized by its own statistics: std just below 1 (eps)
local z = ns.normalize(ns.rng(0):normal(0, 1, {4, 256}), {kind = "batch", eps = 1e-5, eps_at = "std"})
T.claim(claims, "e-bnout-std-4", z:std())
-- the largest |z| a self-standardized batch of 4 can hold, sqrt(n-1), at one outlier
local zb = ns.normalize(ns.tensor{1, 0, 0, 0}, {kind = "batch", eps = 0})
T.claim(claims, "e-zbound-4", zb:abs():max())
T.done()
