-- vjp.lua: ns.vjp's closed-form backward pass against J^T g (ns.jacobian, analytic and
-- finite differences) and finite differences of L = sum(g * y) in x, gamma and beta, for
-- every kind; its three routes (direct, through the mean, through the variance) against
-- their formulas; the per-statistic identities sum(dx) = 0 and dx . xhat = 0; and the
-- chapter 003 backward-pass claims g-grad-*.
local T = dofile((arg and arg[0] or "tests/lua/vjp.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end
local function loss(x, spec, g) return (ns.normalize(x, spec) * g):sum() end
local function maxabs(a, b) return (a - b):abs():max() end

local g0 = ns.rng(11)
local cases = {
  {"layer (3,4)", {3, 4}, {kind = "layer", eps = 1e-3, gamma = {1.5, -0.5, 2, 0.7}, beta = {0.1, 0.2, 0.3, 0.4}}},
  {"layer eps_at std ddof 1", {3, 4}, {kind = "layer", eps = 1e-2, eps_at = "std", ddof = 1, gamma = 1.3, beta = -0.2}},
  {"rms (2,5)", {2, 5}, {kind = "rms", eps = 1e-3, gamma = {1, 2, 3, 4, 5}}},
  {"batch (6,3)", {6, 3}, {kind = "batch", eps = 1e-3, gamma = {0.5, 1.5, -1}, beta = {1, 2, 3}}},
  {"batch eps_at std", {5, 2}, {kind = "batch", eps = 1e-2, eps_at = "std"}},
  {"batch (2,3,4) rank 3", {2, 3, 4}, {kind = "batch", eps = 1e-3, gamma = {2, 1, 0.5}}},
  {"instance (2,3,4)", {2, 3, 4}, {kind = "instance", eps = 1e-3, gamma = {1, -2, 3}, beta = {0, 1, 0}}},
  {"group (2,4,3) groups 2", {2, 4, 3}, {kind = "group", groups = 2, eps = 1e-3, gamma = {1, 2, 3, 4}}},
  {"batch (2,2,2,2) rank 4", {2, 2, 2, 2}, {kind = "batch", eps = 1e-3, ddof = 1}},
  {"layer uncentered", {2, 4}, {kind = "layer", center = false, eps = 1e-3}},
}
for _, c in ipairs(cases) do
  local name, shape, spec = c[1], c[2], c[3]
  local x = g0:normal(1, 2, shape)
  local g = g0:normal(0, 1, shape)
  local n = #x
  local dx, dgamma, dbeta, paths = ns.vjp(x, spec, g)
  local gcol = g:reshape{n, 1}
  local JTg = ns.matmul(ns.jacobian(x, spec):T(), gcol):reshape(shape)
  T.ok(maxabs(dx, JTg) < 1e-12, string.format("%s: dx = J^T g (%.1e)", name, maxabs(dx, JTg)))
  local JfdTg = ns.matmul(ns.jacobian(x, spec, {method = "fd"}):T(), gcol):reshape(shape)
  T.ok(maxabs(dx, JfdTg) < 1e-7, string.format("%s: dx = J_fd^T g (%.1e)", name, maxabs(dx, JfdTg)))
  -- finite differences of L itself, a few coordinates
  local worst, h, xv = 0, 1e-6, x:flat()
  for _, j in ipairs{1, math.ceil(n / 2), n} do
    local xp, xm = copy(xv), copy(xv)
    xp[j], xm[j] = xv[j] + h, xv[j] - h
    local fd = (loss(ns.tensor(xp, shape), spec, g) - loss(ns.tensor(xm, shape), spec, g)) / (2 * h)
    worst = math.max(worst, math.abs(fd - dx[j]))
  end
  T.ok(worst < 1e-7, string.format("%s: dx = dL/dx by central differences (%.1e)", name, worst))
  T.ok(maxabs(paths.direct + paths.mean + paths.var, dx) < 1e-14, name .. ": the three routes sum to dx")
  -- dgamma and dbeta by central differences in each entry
  for _, which in ipairs{"gamma", "beta"} do
    local got = which == "gamma" and dgamma or dbeta
    local base = spec[which] or (which == "gamma" and 1 or 0)
    local w = 0
    if type(base) == "number" then
      local sp, sm = copy(spec), copy(spec)
      sp[which], sm[which] = base + h, base - h
      -- one number for every entry: its derivative is the sum of the per-entry ones
      local want = type(got) == "number" and got or got:sum()
      w = math.abs((loss(x, sp, g) - loss(x, sm, g)) / (2 * h) - want)
    elseif type(got) ~= "number" then
      for a = 1, #base do
        local bp, bm = copy(base), copy(base)
        bp[a], bm[a] = base[a] + h, base[a] - h
        local sp, sm = copy(spec), copy(spec)
        sp[which], sm[which] = bp, bm
        w = math.max(w, math.abs((loss(x, sp, g) - loss(x, sm, g)) / (2 * h) - got[a]))
      end
    end
    T.ok(w < 1e-7, string.format("%s: d%s by central differences (%.1e)", name, which, w))
  end
end

-- The routes against their formulas, and the identities, for batch norm of (B, D) = (8, 3)
local x = g0:normal(3, 2, {8, 3})
local g = g0:normal(0, 1, {8, 3})
local gam = {2, 0.5, -1}
local spec = {kind = "batch", eps = 0, gamma = gam}
local dx, dgamma, dbeta, paths = ns.vjp(x, spec, g)
local mu, sd = x:mean({1}), x:std({1})
local xhat = (x - mu) / sd
local u = g * ns.tensor(gam)
T.ok(maxabs(paths.direct, u / sd) < 1e-13, "batch: direct route = gamma g / s")
T.ok(maxabs(paths.mean, ns.zeros{8, 3} - u:mean({1}) / sd) < 1e-13, "batch: mean route = -mean(gamma g) / s")
T.ok(maxabs(paths.var, ns.zeros{8, 3} - xhat * (u * xhat):mean({1}) / sd) < 1e-13,
  "batch: variance route = -xhat mean(gamma g xhat) / s")
T.ok(dx:sum({1}):abs():max() < 1e-13, "batch, eps 0: dx sums to 0 in each feature")
T.ok((dx * xhat):sum({1}):abs():max() < 1e-13, "batch, eps 0: dx is orthogonal to x_hat in each feature")
T.ok(maxabs(dgamma, (g * xhat):sum({1}):reshape{3}) < 1e-13, "dgamma = sum(g xhat) per feature")
T.ok(maxabs(dbeta, g:sum({1}):reshape{3}) < 1e-13, "dbeta = sum(g) per feature")
local lx = g0:normal(0, 1, {4, 6})
local ldx = ns.vjp(lx, {kind = "layer", eps = 0}, g0:normal(0, 1, {4, 6}))
local lxhat = ns.normalize(lx, {kind = "layer", eps = 0})
T.ok(ldx:sum({2}):abs():max() < 1e-13 and (ldx * lxhat):sum({2}):abs():max() < 1e-13,
  "layer, eps 0: dx sums to 0 and is orthogonal to x_hat in each row")
local gx = g0:normal(0, 1, {2, 4, 3})
local gdx = ns.vjp(gx, {kind = "group", groups = 2, eps = 0}, g0:normal(0, 1, {2, 4, 3}))
local gsum = gdx:reshape{2, 2, 6}:sum({3})
T.ok(gsum:abs():max() < 1e-13, "group, eps 0: dx sums to 0 in each group")

-- eval mode: the running statistics are constants, dx = gamma g / sqrt(var + eps)
local run = ns.running{momentum = 0.5}
run:update(g0:normal(1, 3, {16, 3}))
local ex = g0:normal(0, 1, {5, 3})
local eg = g0:normal(0, 1, {5, 3})
local edx, _, _, ep = ns.vjp(ex, {kind = "batch", mode = "eval", running = run, eps = 1e-5}, eg)
local rv = ns.tensor(run.var)
T.ok(maxabs(edx, eg / (rv + 1e-5):sqrt()) < 1e-14, "eval: dx = g / sqrt(running var + eps)")
T.ok(ep.mean:abs():max() == 0 and ep.var:abs():max() == 0, "eval: no route through the statistics")

-- chapter 003: x = (2,4,6,8), eps 0, upstream (1,-2,0.5,3)
local cx, cg = ns.tensor{2, 4, 6, 8}, ns.tensor{1, -2, 0.5, 3}
local cdx = ns.vjp(cx, {kind = "batch", eps = 0}, cg)
local cxhat = ns.normalize(cx, {kind = "batch", eps = 0})
T.claim(claims, "g-grad-sum", math.abs(cdx:sum()))
T.claim(claims, "g-grad-dot-xhat", math.abs((cdx * cxhat):sum()))
T.claim(claims, "g-grad-first", cdx[1])

T.err("g must have x's shape", "g of another shape", ns.vjp, ns.tensor{1, 2, 3}, {}, ns.tensor{1, 2})
T.err("g has a non-finite element", "NaN in g", ns.vjp, ns.tensor{1, 2, 3}, {}, {1, 0 / 0, 1})
T.err("unknown", "bad spec field", ns.vjp, ns.tensor{1, 2, 3}, {kindd = "layer"}, {1, 1, 1})
T.err("g", "missing g", ns.vjp, ns.tensor{1, 2, 3}, {})
T.done()
