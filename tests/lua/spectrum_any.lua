-- spectrum_any.lua: ns.spectrum at any size (issue 24): the closed form above the 4096
-- elements LAPACK is limited to, checked along its eigenvectors (the third result), equal
-- to LAPACK on the analytic Jacobian where both run, and the options' errors.
local T = dofile((arg and arg[0] or "tests/lua/spectrum_any.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

local function vec(n, f)
  local t = {}
  for i = 1, n do t[i] = f(i) end
  return ns.tensor(t)
end

-- 5000 elements: the closed form, with three checks that pass
local x = vec(5000, function(i) return math.sin(i) * 3 + 1 end)
local e, how, ck = ns.spectrum(x, {kind = "layer", eps = 1e-3})
T.is(how, "closed", "5000 elements: the closed form")
T.is(#ck, 3, "  three checks (ones, radial, bulk)")
for _, c in ipairs(ck) do
  T.ok(c.ok and c.jvp_res <= c.jvp_tol and c.fd_res <= c.fd_tol, "  " .. c.label .. " check passes",
       ("jvp %g/%g fd %g/%g"):format(c.jvp_res, c.jvp_tol, c.fd_res, c.fd_tol))
end
-- the closed form's values, from the formulas: radial eps/s^3, bulk 1/s (s^2 = var + eps)
local n, mean, m2 = 5000, 0, 0
for i = 1, n do mean = mean + x[i] end
mean = mean / n
for i = 1, n do m2 = m2 + (x[i] - mean) ^ 2 end
local s = math.sqrt(m2 / n + 1e-3)
local got = {}
for _, v in ipairs(e) do got[v.label] = v end
T.close(got.radial.value, 1e-3 / s ^ 3, 1e-12, "  radial = eps/s^3")
T.close(got.bulk.value, 1 / s, 1e-12, "  bulk = 1/s")
T.is(got.bulk.mult, n - 2, "  bulk multiplicity n - 2")
local e2, how2, ck2 = ns.spectrum(x, {kind = "layer", eps = 1e-3}, {check = false})
T.ok(how2 == "closed" and ck2 == nil and #e2 == #e, "check = false: no checks, the same spectrum")

-- where both run, the closed form equals LAPACK on J
local y = vec(40, function(i) return (i * 37 % 11) - 5 end)
local c = ns.spectrum(y, {kind = "layer", eps = 0.01})
local l, howl = ns.spectrum(y, {kind = "layer", eps = 0.01}, {method = "lapack"})
T.is(howl, "numeric", "method = lapack: the numeric spectrum")
local byl = {}
for _, v in ipairs(l) do byl[v.label] = v end
for _, v in ipairs(c) do
  T.close(byl[v.label].value, v.value, 1e-9, "  closed " .. v.label .. " = LAPACK's")
end

-- the options' errors
T.err("LAPACK forms the n x n Jacobian, limited to 4096", "lapack above the limit",
      ns.spectrum, x, {kind = "layer"}, {method = "lapack"})
T.err("opts.method must be one of", "an unknown method", ns.spectrum, y, {}, {method = "x"})
T.err("unknown option 'nope'", "an unknown option", ns.spectrum, y, {}, {nope = 1})
T.err("no closed form here", "method = closed where gamma varies",
      ns.spectrum, y, {kind = "layer", gamma = vec(40, function(i) return i end)}, {method = "closed"})
T.done()
