-- normalize.lua: ns.normalize and its spec, ns.jacobian, ns.eigvals/svdvals/rank and
-- ns.spectrum, against hand-computed values, finite differences and claims.tsv.
local T = dofile((arg and arg[0] or "tests/lua/normalize.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

local x = ns.tensor{-2, -1, 1, 2}
local s0 = math.sqrt(2.5)

-- layer norm: mean 0, population variance 2.5
local y, st = ns.normalize(x, {eps = 0})
T.all_close(y:flat(), {-2 / s0, -1 / s0, 1 / s0, 2 / s0}, 1e-15, "layer norm, eps 0")
T.all_close(st.mean:flat(), {0}, 0, "st.mean")
T.all_close(st.var:flat(), {2.5}, 1e-15, "st.var")
T.all_close(st.denom:flat(), {s0}, 1e-15, "st.denom")
T.is(st.degenerate, false, "not degenerate")
T.is(table.concat(st.axes, ","), "1", "st.axes lists the reduced axes")
local s5 = math.sqrt(2.5 + 1e-5)
T.close(ns.normalize(x)[4], 2 / s5, 1e-15, "default eps 1e-5 inside the sqrt")
T.close(ns.normalize(x, {eps = 0.1, eps_at = "std"})[4], 2 / (s0 + 0.1), 1e-15, "eps_at std")
T.close(ns.normalize(x, {eps = 0, ddof = 1})[4], 2 / math.sqrt(10 / 3), 1e-15, "ddof 1")
T.close(ns.normalize({1, 2, 3}, {eps = 0, center = false})[3],
  3 / math.sqrt(14 / 3), 1e-15, "center = false divides by the rms")
local ya = ns.normalize(x, {eps = 0, gamma = {1, 2, 3, 4}, beta = 0.5})
T.close(ya[4], 4 * 2 / s0 + 0.5, 1e-14, "gamma per element, scalar beta")
local yt = ns.normalize(x, {eps = 0, gamma = ns.tensor{2, 2, 2, 2}})
T.close(yt[1], -4 / s0, 1e-15, "gamma as a tensor")

-- rms: divides by sqrt(mean(x^2) + eps), no centering
T.close(ns.normalize({3, 4}, {kind = "rms", eps = 0})[2], 4 / math.sqrt(12.5), 1e-15, "rms norm")
local shifted = ns.normalize(x + 10, {kind = "rms", eps = 0}) - ns.normalize(x, {kind = "rms", eps = 0})
T.claim(claims, "c15-rms-shift-maxdiff", shifted:abs():max())
local cshift = ns.normalize(x + 10, {eps = 0}) - ns.normalize(x, {eps = 0})
T.ok(cshift:abs():max() <= claims["c15-centered-shift-dev"].tol, "centered map is shift invariant")

-- batch norm over the batch axis of a (3, 2) input: columns (1,2,3) and (10,20,60)
local b = ns.tensor{{1, 10}, {2, 20}, {3, 60}}
local yb, sb = ns.normalize(b, {kind = "batch", eps = 0})
T.all_close(sb.mean:flat(), {2, 30}, 1e-14, "batch means per channel")
T.is(table.concat(sb.mean:shape(), ","), "1,2", "statistics keep the batch axis as 1")
T.all_close(sb.var:flat(), {2 / 3, (400 + 100 + 900) / 3}, 1e-12, "batch variances")
T.close(yb[6], 30 / math.sqrt(1400 / 3), 1e-14, "batch norm output")

-- group norm: (1, 4, 2) with 2 groups of 2 channels
local g = ns.tensor{{{1, 2}, {3, 4}, {10, 10}, {10, 30}}}
local yg, sg = ns.normalize(g, {kind = "group", groups = 2, eps = 0})
T.all_close(sg.mean:flat(), {2.5, 15}, 1e-14, "group means")
T.close(yg[1], -1.5 / math.sqrt(1.25), 1e-14, "group norm output")
-- instance norm on (1, 2, 2): per channel
local yi = ns.normalize({{{1, 3}, {5, 5}}}, {kind = "instance", eps = 0})
T.all_close(yi:slice(2, 1, 1):flat(), {-1, 1}, 1e-15, "instance norm per channel")
-- explicit axes override the kind's
local yx, sx = ns.normalize(b, {axes = {1}, eps = 0})
T.all_close(sx.mean:flat(), {2, 30}, 1e-14, "explicit axes")

-- degenerate input: zero variance with eps 0
local yd, sd = ns.normalize({1, 1, 1}, {eps = 0})
T.is(sd.degenerate, true, "zero variance with eps 0 is degenerate")
T.ok(yd[1] ~= yd[1], "degenerate output is NaN (0/0)")
T.is(sd.degenerate_stats[1], 1, "degenerate_stats lists the statistic")
local yn, sn = ns.normalize({1, 0 / 0, 2}, {eps = 0})
T.ok(yn[1] ~= yn[1] and sn.degenerate, "NaN input accepted and flagged")

-- fp32 storage: outputs rounded to fp32
local y32 = ns.normalize(x, {dtype = "fp32"})
T.is(y32:dtype(), "fp32", "dtype fp32 output")
T.is(y32[4], ns.round(y32[4], "fp32"), "fp32 output values are fp32")

-- train and eval with a running object
local run = ns.running{momentum = 0.1}
ns.normalize({1, 2, 3, 6}, {kind = "batch", running = run})
T.close(run.mean, 0.9 * 0 + 0.1 * 3, 1e-15, "train mode updates the running mean")
T.close(run.var, 0.9 * 1 + 0.1 * (14 / 3), 1e-15, "running var uses the unbiased batch variance")
local ye = ns.normalize({3.3}, {kind = "batch", mode = "eval", running = run, eps = 0})
T.close(ye[1], (3.3 - run.mean) / math.sqrt(run.var), 1e-15, "eval mode uses running statistics")
T.is(run.count, 1, "eval mode does not update")

-- spec errors
T.err("spec.eps: must be finite and >= 0, got -1", "negative eps", ns.normalize, x, {eps = -1})
T.err("bad argument #2", "spec errors blame argument 2", ns.normalize, x, {eps = -1})
T.err("unknown spec field 'epsilon'", "unknown field named", ns.normalize, x, {epsilon = 1})
T.err("spec.kind: unknown kind 'weight' (layer, rms", "bad kind", ns.normalize, x, {kind = "weight"})
T.err("spec.ddof: must be 0 or 1, got 2", "bad ddof", ns.normalize, x, {ddof = 2})
T.err("spec.eps_at: unknown choice 'sqrt' (var, std)", "bad eps_at", ns.normalize, x, {eps_at = "sqrt"})
T.err("spec.algo: unknown choice 'fast'", "bad algo", ns.normalize, x, {algo = "fast"})
T.err("spec.mode: unknown choice 'test' (train, eval)", "bad mode", ns.normalize, x, {mode = "test"})
T.err('spec.center: expected true, false or "default", got number', "bad center", ns.normalize, x, {center = 1})
T.err("spec.dtype: unknown dtype 'fp8'", "bad dtype", ns.normalize, x, {dtype = "fp8"})
T.err("spec.acc: expected one of fp64, fp32, fp16, bf16, default, got number", "bad acc", ns.normalize, x, {acc = 3})
T.err("spec.groups: must be >= 1, got 0", "bad groups", ns.normalize, g, {kind = "group", groups = 0})
T.err("must divide", "groups not dividing the channels", ns.normalize, g, {kind = "group", groups = 3})
T.err("out of range 1..1", "axis out of range", ns.normalize, x, {axes = {2}})
T.err("spec.axes lists axis 1 twice", "repeated axis", ns.normalize, b, {axes = {1, 1}})
T.err("gamma", "gamma of the wrong length", ns.normalize, x, {gamma = {1, 2}})
T.err("spec.running must be an object from ns.running", "bad running", ns.normalize, x, {running = {}})
T.err("running", "eval batch norm without running statistics", ns.normalize, b, {kind = "batch", mode = "eval"})
T.err("instance", "instance norm of a vector", ns.normalize, x, {kind = "instance"})
T.err("spec must be a table", "spec of the wrong type", ns.normalize, x, "layer")
T.err("x must be a tensor or an array of numbers", "x of the wrong type", ns.normalize, "x")

-- Jacobian: analytic against central differences, J 1 = 0, J c = eps/s^3 c
local xj = ns.tensor{0.5, -1, 2, 0.25}
local Ja = ns.jacobian(xj, {eps = 1e-3})
local Jf = ns.jacobian(xj, {eps = 1e-3}, {method = "fd", h = 1e-6})
T.is(table.concat(Ja:shape(), ","), "4,4", "Jacobian is n x n")
T.ok((Ja - Jf):abs():max() < 1e-8, "analytic Jacobian matches finite differences",
  "max diff " .. (Ja - Jf):abs():max())
T.ok(ns.matmul(Ja, ns.full({4, 1}, 1)):abs():max() < 1e-14, "J 1 = 0 for layer norm")
local c = xj - xj:mean()
local sj = math.sqrt(c:square():mean() + 1e-3)
local Jc = ns.matmul(Ja, c:reshape(4, 1)):reshape(4)
T.all_close(Jc:flat(), (c * (1e-3 / sj ^ 3)):flat(), 1e-13, "J c = eps/s^3 c")
local Jb = ns.jacobian(b, {kind = "batch"})
T.ok(Jb[3] ~= 0, "batch Jacobian couples examples (dy_1/dx_3 nonzero)")
T.close(Jb[2], 0, 0, "batch Jacobian does not couple channels")
T.err("opts.method must be one of 'analytic', 'fd', got 'exact'", "bad method", ns.jacobian, x, {}, {method = "exact"})
T.err("opts.h must be a finite number > 0", "bad h", ns.jacobian, x, {}, {h = 0})
T.err("unknown option 'step'", "unknown option", ns.jacobian, x, {}, {step = 1})
T.err("limited to", "too many elements", ns.jacobian, ns.zeros(5000), {})
T.err("bad argument #3 to 'jacobian' (opts must be a table, got 'fd')", "opts of the wrong type",
  function() return ns.jacobian(x, {}, "fd") end)
-- spec.axes follows the rules of reduction axes
T.err("spec.axes lists 3 axes but the tensor has rank 2", "more spec axes than the rank",
  ns.normalize, ns.zeros{2, 2}, {axes = {1, 2, 3}})
T.err("spec.axes[2] must be an integer axis, got 1.5", "fractional spec axis",
  ns.normalize, ns.zeros{2, 2}, {axes = {1, 1.5}})
T.err("spec.groups: expected an integer, got string", "a spec value of the wrong type",
  ns.normalize, ns.zeros{2, 2}, {kind = "group", groups = "two"})
T.err("unknown spec field 'epsilon' (known: 'kind', 'axes'", "unknown field lists the known ones",
  ns.normalize, ns.zeros{2, 2}, {epsilon = 1})

-- ranks of the zero-eps Jacobians (claims)
T.claim(claims, "c15-rank-centered", ns.rank(ns.jacobian(x, {eps = 0})))
T.claim(claims, "c15-rank-rms", ns.rank(ns.jacobian(x, {kind = "rms", eps = 0})))

-- eigenvalues, singular values, rank
T.all_close(ns.eigvals{{2, 1}, {1, 2}}, {1, 3}, 1e-14, "symmetric eigenvalues ascending")
local re, im = ns.eigvals{{0, 1}, {-1, 0}}
T.ok(re and im and math.abs(re[1]) < 1e-15 and math.abs(math.abs(im[1]) - 1) < 1e-15,
  "rotation has eigenvalues +-i")
T.all_close(ns.svdvals{{3, 0}, {0, -4}, {0, 0}}, {4, 3}, 1e-14, "singular values descending")
T.is(ns.rank{{1, 2}, {2, 4}}, 1, "rank of a rank-1 matrix")
T.is(ns.rank({{1, 0}, {0, 1e-3}}, 1e-2), 1, "rank with a tolerance")
T.err("must be square", "eigvals of a non-square matrix", ns.eigvals, {{1, 2}})
T.err("must be a matrix", "svdvals of a vector", ns.svdvals, {1, 2})
T.err("non-finite", "NaN refused by LAPACK wrappers", ns.svdvals, {{0 / 0}})
T.err("tol must be >= 0", "negative tol", ns.rank, {{1}}, -1)

-- labelled spectrum of layer norm in closed form
local spec, how = ns.spectrum(x, {eps = 1e-5})
T.is(how, "closed", "layer norm spectrum in closed form")
local byl = {}
for _, e in ipairs(spec) do byl[e.label] = e end
T.ok(byl.ones and byl.ones.value == 0 and byl.ones.mult == 1, "ones: 0 once")
T.close(byl.radial and byl.radial.value, 1e-5 / s5 ^ 3, 1e-18, "radial: eps/s^3")
T.close(byl.bulk and byl.bulk.value, 1 / s5, 1e-14, "bulk: 1/s")
T.is(byl.bulk and byl.bulk.mult, 2, "bulk multiplicity d - 2")
local total = 0
for _, e in ipairs(spec) do total = total + e.mult end
T.is(total, 4, "multiplicities add up to n")
-- numeric spectrum agrees with eigenvalues of the Jacobian
local ev = ns.eigvals(ns.jacobian(x, {eps = 1e-5}))
T.close(ev[4], 1 / s5, 1e-12, "largest Jacobian eigenvalue is the bulk value")

-- a loop's dropped outputs lend their memory to the next output of their size (the
-- spare): every element is written over what it held, so each result is its own input's
do
  local g = ns.rng(7)
  local xa = g:standard_normal({64, 64, 8, 8}):astype("fp32") -- 1 MB: large enough to keep
  local xb = g:standard_normal({64, 64, 8, 8}):astype("fp32") * 3 + 1
  local spec = {kind = "batch", dtype = "fp32"}
  local ra, rb = ns.normalize(xa, spec):copy(), ns.normalize(xb, spec):copy()
  local worst = 0
  for i = 1, 8 do
    collectgarbage() -- the last output goes to the spare, the next takes it
    local y = ns.normalize(i % 2 == 1 and xa or xb, spec)
    local d = (y - (i % 2 == 1 and ra or rb)):abs():max()
    if d ~= d or d > worst then worst = d end
  end
  T.ok(worst == 0, "outputs written into a dropped output's memory are exact (max diff " .. worst .. ")")
  local r = ns.normalize(xa:reshape({64, 4096}), {kind = "layer", dtype = "fp32"})
  T.ok(r:shape()[1] == 64 and r:shape()[2] == 4096 and #r:shape() == 2,
    "a spare of another shape but as many values comes back in the output's shape")
end

T.done()
