-- kernels.lua: the fast kernels at the Lua surface: ns.moments' var rounded to acc,
-- the order field (spec and moments), and the kernels agreeing with the kept reference.
local T = dofile((arg and arg[0] or "tests/lua/kernels.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

-- numpy: np.array([1, 2, 4], np.float32).var() -> 1.5555557012557983 (var in fp32, not
-- the double quotient of the fp32 m2)
T.is(ns.moments(ns.tensor{1, 2, 4}, {dtype = "fp32"}).var, 1.5555557012557983,
  "moments var is rounded to acc (numpy float32)")
T.is(ns.moments(ns.tensor{1, 2, 4}, {dtype = "fp32", ddof = 1}).var, 2.3333334922790527,
  "ddof 1 var rounded to acc (numpy float32 var(ddof=1))")
T.close(ns.moments(ns.tensor{1, 2, 4}).var, 14 / 9, 1e-15, "fp64 var")

-- order: v = float32(1000 + (k % 17) * 0.37), k = 0..999. numpy 1.24: v.mean() (pairwise)
-- is 1002.9522705078125; the sequential float32 sum np.cumsum(v)[-1] is 1002954.125.
local v = {}
for k = 0, 999 do v[#v + 1] = 1000.0 + (k % 17) * 0.37 end
local pw = ns.moments(v, {dtype = "fp32", order = "pairwise"})
local seq = ns.moments(v, {dtype = "fp32"})
T.is(pw.mean, 1002.9522705078125, "pairwise fp32 mean equals numpy's")
T.is(seq.mean, ns.round(1002954.125 / 1000, "fp32"), "sequential fp32 mean: the in-order sum / n")
T.is(ns.moments({1, 2, 3}, {order = "pairwise"}).mean, 2, "fewer than 8 values: in order")
T.err("opts.order must be", "bad moments order", ns.moments, {1}, {order = "tree"})

local x = ns.tensor({{1, 2, 3, 4.5}, {-1, 0, 7, 2}}, nil, "fp32")
local y1 = ns.normalize(x, {dtype = "fp32"})
local y2 = ns.normalize(x, {dtype = "fp32", order = "pairwise"})
T.all_close(y2:flat(), y1:flat(), 0, "rows of 4: pairwise is sequential")
T.err("spec.order: unknown choice 'random'", "bad spec order", ns.normalize, x, {order = "random"})

T.done()
