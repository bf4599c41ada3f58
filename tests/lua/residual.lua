-- residual.lua: ns.residual_jacobian against central differences of the residual block
-- itself (x + W N(x), N(x + W x), x + W x) computed with ns.normalize and ns.matmul, for
-- W on all of x and W on the last axis; and chapter 000 section 15.4's claims
-- c15-pre-norm-smin and c15-post-norm-rank.
local T = dofile((arg and arg[0] or "tests/lua/residual.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

-- W applied as the residual branch: on the flat x (W n x n) or on each row of the last axis
local function apply(W, x)
  local n, w = #x, W:shape()[1]
  if w == n then return ns.matmul(W, x:reshape{n, 1}):reshape(x:shape()) end
  return ns.matmul(x:reshape{n // w, w}, W:T()):reshape(x:shape())
end
local function block(x, spec, W, placement)
  if placement == "none" then return x + apply(W, x) end
  if placement == "pre" then return x + apply(W, ns.normalize(x, spec)) end
  return ns.normalize(x + apply(W, x), spec)
end
local function fd_jacobian(x, spec, W, placement)
  local n, shape, xv, h = #x, x:shape(), x:flat(), 1e-6
  local J = {}
  for i = 1, n do J[i] = {} end
  for j = 1, n do
    local xp, xm = {}, {}
    for k = 1, n do xp[k], xm[k] = xv[k], xv[k] end
    xp[j], xm[j] = xv[j] + h, xv[j] - h
    local d = (block(ns.tensor(xp, shape), spec, W, placement)
      - block(ns.tensor(xm, shape), spec, W, placement)):flat()
    for i = 1, n do J[i][j] = d[i] / (2 * h) end
  end
  return ns.tensor(J)
end

local g = ns.rng(21)
local cases = {
  {"layer d=5", g:normal(0, 1, 5), {kind = "layer", eps = 1e-3, gamma = {1, 2, 0.5, 1, -1}}, 5},
  {"rms d=4", g:normal(1, 1, 4), {kind = "rms", eps = 1e-3}, 4},
  {"layer (3,4), W on rows", g:normal(0, 1, {3, 4}), {kind = "layer", eps = 1e-2, eps_at = "std"}, 4},
  {"batch (4,3), W on rows", g:normal(0, 1, {4, 3}), {kind = "batch", eps = 1e-3}, 3},
  {"batch (4,3), W on all 12", g:normal(0, 1, {4, 3}), {kind = "batch", eps = 1e-3}, 12},
}
for _, c in ipairs(cases) do
  local name, x, spec, w = c[1], c[2], c[3], c[4]
  local W = g:normal(0, 0.5, {w, w})
  for _, pl in ipairs{"none", "pre", "post"} do
    local J = ns.residual_jacobian(x, spec, W, pl)
    local d = (J - fd_jacobian(x, spec, W, pl)):abs():max()
    T.ok(d < 1e-7, string.format("%s, %s: J matches central differences of the block (%.1e)", name, pl, d))
  end
end

local x = ns.tensor{0.5, -1, 2, 0.25}
local spec = {kind = "layer", eps = 0}
local W = ns.tensor{{0.5, -0.2, 0.1, 0}, {0.3, 0.4, -0.1, 0.2}, {-0.2, 0.1, 0.6, -0.3}, {0, 0.2, 0.1, 0.5}}
T.ok((ns.residual_jacobian(x, spec, W, "none") - (ns.eye(4) + W)):abs():max() == 0, "none: I + W")
local Z = ns.zeros{4, 4}
T.ok((ns.residual_jacobian(x, spec, Z, "pre") - ns.eye(4)):abs():max() == 0, "pre with W = 0: I")
T.ok((ns.residual_jacobian(x, spec, Z, "post") - ns.jacobian(x, spec)):abs():max() < 1e-15,
  "post with W = 0: J_N(x)")
local pre, post = ns.residual_jacobian(x, spec, W, "pre"), ns.residual_jacobian(x, spec, W, "post")
local sv = ns.svdvals(pre)
T.claim(claims, "c15-pre-norm-smin", sv[#sv])
T.claim(claims, "c15-post-norm-rank", ns.rank(post))
T.is(ns.rank(pre), 4, "pre: the identity path keeps J_pre full rank")

T.err("W must be 4 x 4", "W of the wrong size", ns.residual_jacobian, x, spec, ns.eye(3), "pre")
T.err("placement must be one of", "unknown placement", ns.residual_jacobian, x, spec, W, "middle")
T.err("placement must be one of", "missing placement", ns.residual_jacobian, x, spec, W)
T.err("W must be square", "non-square W", ns.residual_jacobian, x, spec, ns.zeros{4, 3}, "pre")
T.err("non-finite", "NaN in W", ns.residual_jacobian, x, spec, ns.full({4, 4}, 0 / 0), "pre")
T.done()
