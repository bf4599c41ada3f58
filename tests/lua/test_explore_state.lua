-- test_explore_state.lua: the explorer state from Lua: get() lists every field, set(get())
-- changes nothing, bad fields raise errors that name them and change nothing, undo/redo.
-- Needs the explorer's globals (set/get/undo/redo/reset): run by tests/unit/test_explore_lua
-- (a C driver); under a plain `normscope run` without them it skips.
if type(set) ~= "function" or type(get) ~= "function" or type(result) ~= "function" then
  print("1..0 # SKIP set/get are not registered in this interpreter")
  return
end

local n, failed = 0, 0
local function ok(cond, name, extra)
  n = n + 1
  print((cond and "ok " or "not ok ") .. n .. " - " .. name)
  if not cond then
    failed = failed + 1
    if extra then print("#   " .. tostring(extra)) end
  end
end

local function is_tensor(v) return type(v) == "userdata" and v.flat ~= nil end

-- deep equality of two get() tables (tensors by shape, dtype and values)
local function same(a, b, path)
  path = path or "state"
  if is_tensor(a) and is_tensor(b) then
    if a:dtype() ~= b:dtype() then return false, path .. ": dtype" end
    local sa, sb = a:shape(), b:shape()
    if #sa ~= #sb then return false, path .. ": rank" end
    for i = 1, #sa do if sa[i] ~= sb[i] then return false, path .. ": shape" end end
    local fa, fb = a:flat(), b:flat()
    for i = 1, #fa do
      if fa[i] ~= fb[i] and not (fa[i] ~= fa[i] and fb[i] ~= fb[i]) then
        return false, path .. "[" .. i .. "]: " .. fa[i] .. " vs " .. fb[i]
      end
    end
    return true
  end
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) ~= "table" then
    if a == b or (a ~= a and b ~= b) then return true end
    return false, path .. ": " .. tostring(a) .. " vs " .. tostring(b)
  end
  for k, v in pairs(a) do
    local e, why = same(v, b[k], path .. "." .. tostring(k))
    if not e then return false, why end
  end
  for k in pairs(b) do
    if a[k] == nil then return false, path .. "." .. tostring(k) .. ": missing" end
  end
  return true
end

local function errs(t, pattern, name)
  local before = get()
  local good, msg = pcall(set, t)
  ok(not good and tostring(msg):find(pattern, 1, true) ~= nil, name .. ": " .. tostring(msg),
     "expected an error containing '" .. pattern .. "'")
  local e, why = same(get(), before)
  ok(e, "  ... and nothing changed", why)
end

-- get(): every field, default values
local s = get()
local fields = {"x", "source", "kind", "axes", "groups", "eps", "eps_at", "ddof", "center", "gamma",
  "beta", "dtype", "acc", "algo", "mode", "batch", "baseline", "target", "companion", "seed",
  "train_batches", "batch_size", "momentum", "train_source", "train_loc", "train_scale",
  "shift", "scale", "eval_loc", "eval_scale", "eval_size", "placement", "W", "upstream", "order",
  "w_seed", "mask"}
local missing = {}
for _, f in ipairs(fields) do if s[f] == nil then missing[#missing + 1] = f end end
ok(#missing == 0, "get() has every field", table.concat(missing, ", "))
local count = 0
for _ in pairs(s) do count = count + 1 end
ok(count == #fields, "get() has no other field (" .. count .. ")")
ok(is_tensor(s.x) and #s.x == 4 and s.x[1] == -2 and s.x[4] == 2, "x is the tensor (-2,-1,1,2)")
ok(s.kind == "layer" and s.eps == 1e-5 and s.eps_at == "var", "layer norm, eps 1e-5 in the sqrt")
ok(s.axes == "default" and s.center == "default" and s.acc == "default", "defaults spelled out")
ok(s.target == 1 and s.companion == 2 and s.baseline[1] == 2, "batch panel: target 1, companion 2")
ok(s.momentum == 0.1 and s.seed == 316832669 and s.train_batches == 8 and s.batch_size == 32,
   "train/eval settings")

-- round trip
local c0 = changes()
set(get())
local e, why = same(get(), s)
ok(e, "set(get()) changes nothing", why)
ok(changes() == c0 + 1, "a successful set notifies the screen once")

-- a very different state, and back
set{x = {{1, 2, 3}, {4, 5, 7}}, kind = "rms", eps = 0, axes = {2}, center = true,
    gamma = {1, 2, 3}, beta = 0.5, dtype = "fp16", acc = "fp32", algo = "welford",
    mode = "eval", batch = {{0}, {2}, {5}}, target = 3, companion = 1, seed = "18446744073709551615",
    train_batches = 3, batch_size = 5, momentum = false, train_source = "batch",
    train_loc = -1, train_scale = 0.5, shift = -3, scale = 0.25, focus = "batch", cursor = {2, 1}}
local t = get()
ok(t.kind == "rms" and t.eps == 0 and t.axes[1] == 2 and #t.axes == 1 and t.center == true,
   "set changed the spec")
ok(is_tensor(t.x) and t.x:shape()[1] == 2 and t.x:shape()[2] == 3, "x from a nested table")
ok(#t.gamma == 3 and t.gamma[3] == 3 and #t.beta == 1 and t.beta[1] == 0.5, "gamma array, beta number")
ok(t.dtype == "fp16" and t.acc == "fp32" and t.algo == "welford" and t.mode == "eval", "dtypes")
ok(t.seed == "18446744073709551615", "a seed above 2^63 comes back as a decimal string")
ok(t.momentum == false, "momentum = false: cumulative average")
ok(t.baseline[1] == 0, "new batch shape: baseline = the companion row (0)")
ok(t.cursor == nil and t.focus == nil, "view hints are accepted headless, and not part of the state")
set(s)
e, why = same(get(), s)
ok(e, "set(old get()) restores the default state", why)
set(t)
e, why = same(get(), t)
ok(e, "set(second get()) restores the changed state", why)
reset()
e, why = same(get(), s)
ok(e, "reset() gives the default state", why)

-- errors name the field and change nothing
errs({eps = -1}, "eps", "negative eps")
errs({eps = "small"}, "eps: expected a number", "eps of the wrong type")
errs({foo = 1}, "unknown field 'foo'", "unknown field")
errs({[1] = 5}, "field names must be strings", "array part")
errs({kind = "instance"}, "kind:", "instance norm of a vector")
errs({kind = "bogus"}, "unknown kind 'bogus'", "unknown kind")
errs({eps = 0.5, kind = "bogus"}, "kind", "a good eps with a bad kind is not half-applied")
errs({x = {1, {2, 3}}}, "x", "ragged x")
errs({x = "abc"}, "x", "x of the wrong type")
errs({gamma = {1, 2, 3}}, "gamma", "gamma of the wrong length")
errs({target = 2}, "target and companion must be different", "target == companion")
errs({companion = 9}, "outside the batch", "companion outside the batch")
errs({momentum = true}, "momentum", "momentum = true")
errs({momentum = 2}, "momentum", "momentum out of range")
errs({ddof = 2}, "ddof", "ddof 2")
errs({axes = {1, 1}}, "axis 1 given twice", "repeated axis")
errs({axes = {3}}, "axes", "axis beyond a vector")
errs({batch = {1, 2}}, "batch", "a vector as the batch")
errs({batch = {{1}}}, "at least 2 rows", "a one-row batch")
errs({seed = -1}, "seed", "negative seed")
errs({seed = "12x"}, "seed", "seed not a number")
errs({dtype = "fp8"}, "unknown dtype 'fp8'", "unknown dtype")
errs({eps = -1, focus = "batch"}, "eps: must be finite and >= 0", "a view hint beside a bad field")
errs({train_scale = -1}, "train_scale", "negative train_scale")
errs({baseline = {1, 2, 3}}, "baseline", "baseline of the wrong length")
local good, msg = pcall(set, 5)
ok(not good and tostring(msg):find("expected a table", 1, true), "set(5): " .. tostring(msg))

-- undo / redo
reset()
set{eps = 0.5}
set{kind = "rms"}
ok(undo() == true and get().kind == "layer" and get().eps == 0.5, "undo the kind")
ok(undo() == true and get().eps == 1e-5, "undo the eps")
ok(redo() == true and get().eps == 0.5, "redo the eps")
set{shift = 1}
ok(redo() == false, "a new change clears redo")

-- the r6 companion experiment through set{}
reset()
set{batch = {{0}, {2}}, target = 1, companion = 2}
ok(get().baseline[1] == 2, "baseline = companion value 2")
set{batch = {{0}, {-2}}}
ok(get().baseline[1] == 2 and get().batch[2] == -2, "companion edited, baseline kept at 2")
set{baseline = false}
ok(get().baseline[1] == -2, "baseline = false: reset to the companion row")

-- result(): the numbers the panels show, against hand values and claims.tsv
reset()
local function near(a, b, tol) return type(a) == "number" and math.abs(a - b) <= tol end
local r = result()
local s5 = math.sqrt(2.5 + 1e-5)
ok(near(r.y[1], -2 / s5, 1e-15) and near(r.y[4], 2 / s5, 1e-15), "result().y = x / sqrt(2.5 + eps)")
ok(near(r.x_std, math.sqrt(2.5), 1e-15) and near(r.x_mean, 0, 0), "input statistics")
ok(near(r.shift_dev, 0, 1e-12), "shift probe ~ 0 for layer norm")
local j = r.jacobian
ok(j.done and j.rank == 3 and #j.closed == 3, "Jacobian: rank 3, three closed-form entries")
ok(j.done and j.closed[1].label == "ones" and j.closed[2].label == "radial" and
   near(j.closed[2].value, 1e-5 / s5 ^ 3, 1e-15) and j.closed[3].mult == 2 and
   near(j.closed[3].value, 1 / s5, 1e-15), "closed form: 0 ones, eps/s^3 radial, 1/s bulk x2")
ok(near(r.train.exact.gap, 0.4480854174, 5e-6), "c15-max-discrepancy from result()")
ok(r.train.active == "momentum", "active estimator: momentum")
set{batch = {{0}, {2}}}
set{batch = {{0}, {-2}}}
r = result()
ok(near(r.batch.target_now[1], 2 / math.sqrt(4 + 4e-5), 1e-15) and
   near(r.batch.target_base[1], -2 / math.sqrt(4 + 4e-5), 1e-15) and r.batch.flip[1] == true,
   "r6: the unchanged target flips sign when the companion goes 2 -> -2")
set{x = {9998, 9999, 10001, 10002}, dtype = "fp32", acc = "fp32"}
r = result()
ok(r.precision.raw.var == 0 and r.precision.twopass.var == 2.5 and r.precision.raw.digits == 0,
   "c15-fp32-raw-var 0, c15-fp32-centered-var 2.5")
local big = {}
for i = 1, 1100 do big[i] = i % 7 end
set{x = big, dtype = "fp64", acc = "default"}
r = result()
ok(not r.jacobian.done and r.jacobian.skip:find("1100 elements", 1, true) ~= nil,
   "big x: " .. tostring(r.jacobian.skip))
-- the closed form at any size: ones 0, radial eps/s^3, bulk 1/s with s the population std
do
  local m, ss = 0, 0
  for i = 1, #big do m = m + big[i] end
  m = m / #big
  for i = 1, #big do ss = ss + (big[i] - m) ^ 2 end
  local s = math.sqrt(ss / #big + 1e-5)
  local c = r.jacobian.closed
  local byl = {}
  for _, e in ipairs(c) do byl[e.label] = e end
  ok(#c == 3 and byl.ones.value == 0 and byl.ones.mult == 1 and
     near(byl.radial.value, 1e-5 / s ^ 3, 1e-12) and near(byl.bulk.value, 1 / s, 1e-12) and
     byl.bulk.mult == 1098, "big x: closed form ones/radial/bulk at d = 1100")
  local labels = {}
  for _, k in ipairs(r.jacobian.check) do labels[#labels + 1] = k.label .. (k.fd <= k.fd_tol and "" or "!") end
  ok(r.jacobian.check_ok and table.concat(labels, " ") == "ones radial bulk",
     "big x: J v = lambda v along ones, radial, bulk (JVP and FD): " .. table.concat(labels, " "))
end

-- load: a state file when given one, Lua's own load for a chunk
ok(load("return 41 + 1")() == 42, "load(chunk) is still Lua's load")
local st = os.tmpname()
set{eps = 0.25}
ok(save(st) == true, "save(FILE)")
set{eps = 1e-5}
ok(load(st) == true and get().eps == 0.25, "load(FILE) applies the state file")
os.remove(st)

-- save(FILE) of a large x that no file holds (2^20 elements and more): its values go to
-- FILE.x.HEX12.npy beside the state, which names that file; load brings x back bit for bit
-- (bf16 too: written as its bits); a save of other values leaves one such file, the new one
local N = (1 << 20) + 3
for _, dt in ipairs({"fp32", "bf16"}) do
  local vals = {}
  for i = 1, N do vals[i] = math.sin(i * 0.37) * 3 + i * 1e-7 end
  set{x = ns.tensor(vals, {N}, dt), dtype = dt}
  local want = get().x
  local base = os.tmpname()
  local path = base .. ".lua"
  ok(save(path) == true, dt .. ": save(FILE) with a 2^20+3-element x")
  local f = io.open(path, "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  local npy = text:match('x = {file = "([^"]+)"')
  local g = npy and io.open(npy, "rb")
  ok(g and npy:sub(1, #base + 3) == base .. ".x." and npy:match("%.x%.%x+%.npy$") ~= nil,
     dt .. ": x went to FILE.x.HEX12.npy: " .. tostring(npy))
  if g then g:close() end
  ok(#text < 4000 and text:find("sha256 = \"%x+\"") ~= nil,
     dt .. ": the state names it and its sha256 instead of the values (" .. #text .. " bytes)")
  set{x = ns.tensor({1, 2, 3}, {3})}
  ok(load(path) == true, dt .. ": load(FILE) of that state")
  local got = get().x
  local gs, gv, wv = got:shape(), got:flat(), want:flat()
  local same = got:dtype() == want:dtype() and got:dtype() == dt and #gs == 1 and gs[1] == N
  for i = 1, N do
    if not same then break end
    same = gv[i] == wv[i]
  end
  ok(same, dt .. ": x is back bit for bit, dtype and shape")
  vals[1] = vals[1] + 1
  set{x = ns.tensor(vals, {N}, dt)}
  save(path)
  local g2 = io.open(npy, "rb")
  local f2 = io.open(path, "rb")
  local npy2 = f2 and f2:read("a"):match('x = {file = "([^"]+)"')
  if f2 then f2:close() end
  local h2 = npy2 and io.open(npy2, "rb")
  ok(g2 == nil and h2 ~= nil and npy2 ~= npy,
     dt .. ": saved again with other values: a new file, the old one gone")
  if g2 then g2:close() end
  if h2 then h2:close() end
  os.remove(path)
  if npy then os.remove(npy) end
  if npy2 then os.remove(npy2) end
  os.remove(base)
end
-- the sweep of earlier files keeps another state's: demo.b.lua's beside demo.lua's
if ns.explorer then
  local d = os.tmpname()
  os.remove(d)
  os.execute("mkdir '" .. d .. "'")
  local v = {}
  for i = 1, N do v[i] = i end
  local e = ns.explorer{x = ns.tensor(v)}
  e:save(d .. "/demo.b.lua")
  e:save(d .. "/demo.lua")
  local p = io.popen("ls '" .. d .. "'")
  local names = p:read("a")
  p:close()
  local nb = select(2, names:gsub("demo%.b%.x%.%x+%.npy", ""))
  local nd = select(2, names:gsub("\ndemo%.x%.%x+%.npy", ""))
  ok(nb == 1 and nd == 1, "two states' spilled files side by side, neither swept away: " ..
     names:gsub("\n", " "))
  os.execute("rm -rf '" .. d .. "'")
end
-- Every tensor field that can hold 2^20 elements (x, mask, W, upstream; the batch holds at
-- most 8192) at that size in one state: each goes to its own file, the state names all four,
-- and they load back bit for bit, with the batch written out beside them
if ns.explorer then
  local d = os.tmpname()
  os.remove(d)
  os.execute("mkdir '" .. d .. "'")
  local M = 1024
  local g = ns.rng(11)
  local want = {x = g:normal(0, 1, {M, M}), W = g:normal(0, 1 / 32, {M, M}),
                upstream = g:normal(0, 1, {M, M})}
  local mv = {}
  for i = 1, M * M do mv[i] = i % 10 == 3 and 0 or 1 end -- a tenth left out
  want.mask = ns.tensor(mv, {M, M})
  local batch = g:normal(0, 1, {64, 128})
  local e = ns.explorer(want)
  e:set{batch = batch}
  e:save(d .. "/five.lua")
  local f = io.open(d .. "/five.lua", "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  local files = 0
  for field in pairs(want) do
    local npy = text:match("  " .. field .. ' = {file = "([^"]+)"')
    local h = npy and io.open(npy, "rb")
    if h then files = files + 1; h:close() end
  end
  ok(files == 4 and #text < 300000, "four spilled fields: each named by its own file (" .. files ..
     " of 4, " .. #text .. " bytes of state with the batch's 8192 values)")
  local back = ns.explorer()
  back:load(d .. "/five.lua")
  local got = back:get()
  local good, why = true, nil
  want.batch = batch
  for field, t in pairs(want) do
    if good then good, why = same(t, got[field], field) end
  end
  ok(good, "  and each loads back bit for bit, the batch too", why)
  os.execute("rm -rf '" .. d .. "'")
end
set{x = ns.tensor({1, 2, 3}, {3}), dtype = "fp32"}

-- Every member of ns_result (result.h's NS_RESULT) is shown by result() or listed as not
-- shown, so a new member cannot be forgotten there.
if type(result_check) == "function" then
  local good, why = result_check()
  ok(good, "result() shows every ns_result member or says why not", why)
end

print("1.." .. n)
tap_failed = failed
