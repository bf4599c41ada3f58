-- mask.lua: the spec's mask field (ns.normalize, ns.moments, ns.jacobian, ns.spectrum,
-- ns.vjp) against numpy 1.24: tests/data/mask.tsv, made by tests/data/make-mask-fixtures.py
-- with numpy masked arrays and explicit selection of the kept elements, including 002's
-- padding example (sequences of different lengths: masked, the real tokens' outputs are
-- each sequence normalized alone; unmasked they are not). Also: a mask of ones gives the
-- bits of no mask, and every bad mask is refused with a message naming it.
local T = dofile((arg and arg[0] or "tests/lua/mask.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

local fx = {}
local f = assert(io.open(T.srcdir() .. "/tests/data/mask.tsv", "r"))
for line in f:lines() do
  local name, vals = line:match("^([^#][^\t]*)\t(.*)$")
  if name then
    local t = {}
    for v in vals:gmatch("[^,]+") do t[#t + 1] = tonumber(v) end
    fx[name] = t
  end
end
f:close()

local function tensor(name)
  local shape = fx[name .. ".shape"]
  for i, v in ipairs(shape) do shape[i] = math.tointeger(v) end
  return ns.tensor(fx[name], shape)
end

-- the specs of the fixture cases (see make-mask-fixtures.py)
local cases = {
  pad = {kind = "batch", axes = {2}},
  padbt = {kind = "batch", axes = {1, 2}},
  ln = {kind = "layer", ddof = 1, eps_at = "std", eps = 1e-3, gamma = fx["ln.gamma"],
        beta = fx["ln.beta"]},
  rms = {kind = "rms"},
}
local TOL = 1e-13
for _, name in ipairs{"pad", "padbt", "ln", "rms"} do
  local x, m = tensor(name .. ".x"), tensor(name .. ".mask")
  local spec = {}
  for k, v in pairs(cases[name]) do spec[k] = v end
  spec.mask = m
  local y, st = ns.normalize(x, spec)
  T.all_close(y, fx[name .. ".y"], TOL, name .. ": masked output as numpy.ma")
  T.all_close(st.mean, fx[name .. ".mean"], TOL, name .. ": mean of the kept elements")
  T.all_close(st.var, fx[name .. ".var"], TOL, name .. ": var of the kept elements")
  T.all_close(st.n, fx[name .. ".n"], 0, name .. ": n counts the kept elements")
  local zero = true
  for i, k in ipairs(m:flat()) do if k == 0 and y[i] ~= 0 then zero = false end end
  T.ok(zero, name .. ": outputs at masked positions are 0")
  if fx[name .. ".y.unpadded"] then
    T.all_close(y, fx[name .. ".y.unpadded"], TOL,
                name .. ": the real tokens' outputs are the unpadded computation")
    spec.mask = nil
    local u = ns.normalize(x, spec)
    T.all_close(u, fx[name .. ".y.nomask"], TOL, name .. ": without the mask as numpy")
    local d = 0
    for i, k in ipairs(m:flat()) do
      if k == 1 then d = math.max(d, math.abs(u[i] - fx[name .. ".y.unpadded"][i])) end
    end
    T.ok(d > 0.1, name .. ": without the mask the padding moves the real tokens (" ..
         string.format("%.3g", d) .. ")")
  end
end

-- a small mask that broadcasts: (1, 6) over the rows of rms's (4, 6)
do
  local small = ns.tensor(fx["rms.mask.small"], {1, 6})
  local y = ns.normalize(tensor("rms.x"), {kind = "rms", mask = small})
  T.all_close(y, fx["rms.y"], TOL, "rms: a (1,6) mask broadcasts over the rows")
  local y2 = ns.normalize(tensor("rms.x"), {kind = "rms", mask = fx["rms.mask.small"]})
  T.all_close(y2, fx["rms.y"], TOL, "rms: the mask as a plain array (6) broadcasts too")
end

-- a mask of ones gives the bits of no mask
do
  local x = tensor("pad.x")
  for _, spec in ipairs{{kind = "layer"}, {kind = "batch", axes = {1, 2}, dtype = "fp32"},
                        {kind = "rms", dtype = "fp16", order = "pairwise"},
                        {kind = "group", groups = 5, algo = "welford"}} do
    local a, sa = ns.normalize(x, spec)
    spec.mask = ns.full({3, 5, 4}, 1)
    local b, sb = ns.normalize(x, spec)
    local same = #a == #b
    for i = 1, #a do
      if string.pack("d", a[i]) ~= string.pack("d", b[i]) then same = false end
    end
    for i = 1, #sa.var do
      if string.pack("d", sa.var[i]) ~= string.pack("d", sb.var[i]) then same = false end
    end
    T.ok(same, spec.kind .. ": a mask of ones gives the bits of no mask")
  end
end

-- ns.moments of the kept elements against numpy on the selection
do
  local x, m = ns.tensor(fx["mom.x"]), ns.tensor(fx["mom.mask"])
  local mo = ns.moments(x, {mask = m})
  T.is(mo.n, fx["mom.n"][1], "moments: n is the number kept")
  T.close(mo.mean, fx["mom.mean"][1], 1e-14, "moments: mean of the kept elements")
  T.close(mo.var, fx["mom.var"][1], 1e-14, "moments: var of the kept elements")
  T.close(ns.moments(x, {mask = m, ddof = 1}).var, fx["mom.var1"][1], 1e-14,
          "moments: ddof 1 divides by n - 1 of the kept")
  local all = ns.moments(x)
  T.ok(ns.moments(x, {mask = ns.full({12}, 1)}).var == all.var, "moments: ones keep the bits")
end

-- Jacobian, spectrum and vjp of the 002 padding example
do
  local x, m = tensor("pad.x"), tensor("pad.mask")
  local spec = {kind = "batch", axes = {2}, mask = m, eps = 1e-3}
  local J = ns.jacobian(x, spec)
  local F = ns.jacobian(x, spec, {method = "fd"})
  T.ok((J - F):abs():max() < 1e-7, "jacobian: analytic vs finite differences, masked")
  local n, mf, zero = #x, m:flat(), true
  local Jf = J:flat()
  for i = 1, n do
    if mf[i] == 0 then
      for j = 1, n do
        if Jf[(i - 1) * n + j] ~= 0 or Jf[(j - 1) * n + i] ~= 0 then zero = false end
      end
    end
  end
  T.ok(zero, "jacobian: masked rows and columns are 0")
  local sp, masked, total = ns.spectrum(x, spec), 0, 0
  for _, e in ipairs(sp) do
    total = total + e.mult
    if e.label == "masked" then masked = masked + e.mult end
  end
  T.is(total, n, "spectrum: accounts for every eigenvalue")
  T.is(masked, 20, "spectrum: one 'masked' zero per padded element (5 positions x 4)")
  local ev = ns.eigvals(J)
  local cl = {}
  for _, e in ipairs(sp) do for _ = 1, e.mult do cl[#cl + 1] = e.value end end
  table.sort(cl)
  T.all_close(ev, cl, 1e-12, "spectrum: closed form equals LAPACK's eigenvalues of J")
  local g = ns.rng(3):normal(0, 1, {3, 5, 4})
  local dx = ns.vjp(x, spec, g)
  local jtg = ns.matmul(J:T(), g:reshape{n, 1}):flat()
  T.all_close(dx, jtg, 1e-12, "vjp: dL/dx = J^T g with the mask")
  local z = true
  for i = 1, n do if mf[i] == 0 and dx[i] ~= 0 then z = false end end
  T.ok(z, "vjp: dL/dx is 0 at masked positions")
end

-- refusals name the mask
do
  local x = ns.tensor{{1, 2, 3}, {4, 5, 6}}
  T.err("spec.mask: shape (2) does not broadcast to x's shape (2, 3)", "a wrong shape",
        ns.normalize, x, {mask = {1, 0}})
  T.err("spec.mask: element 2 is 0.5", "a value other than 0 and 1",
        ns.normalize, x, {mask = {1, 0.5, 1}})
  T.err("nan; a mask holds only 1 (keep) and 0", "NaN", ns.normalize, x, {mask = {0 / 0, 1, 1}})
  T.err("spec.mask must be a tensor or nested array", "a string", ns.normalize, x,
        {mask = "pad"})
  T.err("spec.mask: shape (1, 2, 3)", "a higher rank", ns.normalize, x,
        {mask = ns.full({1, 2, 3}, 1)})
  T.err("spec.mask: element 1 is 2", "jacobian checks it", ns.jacobian, x, {mask = {2, 1, 1}})
  T.err("spec.mask: element 1 is 2", "spectrum checks it", ns.spectrum, x, {mask = {2, 1, 1}})
  T.err("opts.mask: shape (4)", "moments checks it", ns.moments, x, {mask = {1, 1, 1, 1}})
  T.err("order torch has no masked form", "torch's order refuses a mask (it would not be torch's)",
        ns.normalize, x, {kind = "layer", order = "torch", dtype = "fp32", mask = {1, 0, 1}})
  local y = ns.normalize(x, {mask = false})
  T.ok(y[1] == ns.normalize(x)[1], "mask = false is no mask")
  -- a row with nothing kept: degenerate, outputs 0
  local yy, st = ns.normalize(x, {mask = {{1, 1, 1}, {0, 0, 0}}})
  T.ok(st.degenerate and st.degenerate_stats[1] == 2 and yy[4] == 0 and yy[6] == 0 and
       st.n[2] == 0 and st.mean[2] ~= st.mean[2],
       "a statistic with nothing kept: flagged degenerate, n 0, mean NaN, outputs 0")
end

-- the explorer's mask field: the output follows it (stale parts), y's moments are over the
-- kept elements, and an x it no longer fits is refused, naming the mask
do
  local x, m = tensor("pad.x"), tensor("pad.mask")
  local e = ns.explorer()
  e:set{x = x, kind = "batch", axes = {2}}
  local before = e:result().y
  e:set{mask = m}
  local r = e:result()
  T.all_close(r.y, fx["pad.y"], TOL, "explorer: set{mask=} recomputes the output")
  T.ok(r.jacobian.done and r.backward.done, "explorer: the Jacobian and backward pass follow")
  local kept, sum = 0, 0
  for i, k in ipairs(m:flat()) do if k == 1 then kept, sum = kept + 1, sum + r.y[i] end end
  T.close(r.y_mean, sum / kept, 1e-15, "explorer: y_mean is over the kept elements")
  e:set{mask = false}
  T.all_close(e:result().y, before:flat(), 0, "explorer: mask = false gives the unmasked output")
  e:set{mask = m}
  T.err("does not fit the mask", "explorer: an x the mask does not fit is refused",
        e.set, e, {x = ns.zeros{3, 4, 4}})
  T.err("mask: element 1 is 3", "explorer: a bad mask value is refused", e.set, e, {mask = {3}})
  T.ok(e:get().mask ~= false and #e:get().mask == 60, "explorer: a refused set changes nothing")
  e:set{mask = ns.zeros{3, 5, 1}}
  T.is(e:result().cond, "mask_empty", "explorer: nothing kept is the condition mask_empty")
end

-- the explorer's spectrum of a masked x: the closed form with its masked zeros agrees with
-- LAPACK on the masked J, and the eigenvector checks (which would ignore the mask) stay off
do
  local e = ns.explorer{x = ns.tensor{1, 2, 3, 4, 5, 6, 7, 9}, kind = "layer",
                        mask = ns.tensor{1, 1, 1, 1, 1, 1, 0, 0}}
  local j = e:result().jacobian
  local masked
  for _, c in ipairs(j.closed) do if c.label == "masked" then masked = c end end
  T.is(masked and masked.mult, 2, "explorer: two masked zeros in the closed form")
  T.ok(j.closed_vs_numeric < 1e-12, "explorer: masked closed form = LAPACK on the masked J",
       j.closed_vs_numeric)
  T.is(#j.check, 0, "explorer: no J v = lambda v checks of a masked spec")
  T.is(j.closed_rank, 5, "explorer: rank of the masked layer norm of 6 kept values is 5")
end

T.done()
