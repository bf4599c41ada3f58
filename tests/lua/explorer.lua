-- explorer.lua: the headless explorer (ns.explorer) driven by the field table itself
-- (ns.fields): every field round-trips get -> set -> get and dump -> load bit for bit,
-- undo/redo step through changes, bad values change nothing, and a large x loaded from a
-- file is dumped as a reference checked by sha256.
local T = dofile((arg and arg[0] or "tests/lua/explorer.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

-- A value of each type that differs from the default (keyed by field name where the
-- type alone does not say what fits, as for the batch's rows).
local function other_value(f, cur)
  if f.type == "choice" then
    for _, c in ipairs(f.choices) do if c ~= cur then return c end end
  elseif f.type == "boolean" then return cur == true and false or true
  elseif f.type == "axes" then return {1}
  elseif f.type == "integer" then
    if f.name == "target" then return 2 end
    if f.name == "companion" then return 1 end
    return cur + 1 <= f.hi and cur + 1 or cur - 1
  elseif f.type == "number" then
    return f.lo == 0 and 0.1 + math.pi * 1e-3 or -(1 / 3)  -- also for "default" ones
  elseif f.type == "numbers" then return {0.25, -1 / 3} -- gamma/beta of 2 values, or baseline
  elseif f.type == "seed" then return "18446744073709551557"
  elseif f.type == "momentum" then return cur == false and 0.3 or false
  elseif f.type == "tensor" then
    if f.name == "x" then return ns.tensor({{1 / 3, 2, -7.25e-3}, {4, 0.1, 6}}, nil, "fp32") end
    if f.name == "W" then return ns.tensor{{0.5, -1 / 3}, {0.25, 2}} end    -- optional ones
    if f.name == "upstream" then return ns.tensor{1 / 7, -2, 3, 0.5} end
    if f.name == "mask" then return ns.tensor{1, 0, 1, 1} end -- 1 keeps, 0 leaves out
    return ns.tensor{{1, 2}, {3, 4}, {5, 6}}
  elseif f.type == "string" then return "somewhere.npy" end
  error("no test value for type " .. f.type)
end

-- Bitwise equality of two get() values (tensors by shape, dtype and every element).
local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) == "userdata" then
    if a:dtype() ~= b:dtype() or #a ~= #b then return false end
    for i = 1, #a do if string.pack("d", a[i]) ~= string.pack("d", b[i]) then return false end end
    return table.concat(a:shape(), ",") == table.concat(b:shape(), ",")
  elseif type(a) == "table" then
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  elseif type(a) == "number" then
    return string.pack("d", a) == string.pack("d", b)
  end
  return a == b
end

local fields = ns.fields()
T.ok(#fields >= 28, "ns.fields lists the state's fields (" .. #fields .. ")")
local e = ns.explorer()
local s0 = e:get()
local names = {}
for _, f in ipairs(fields) do names[#names + 1] = f.name end
local count = 0
for _ in pairs(s0) do count = count + 1 end
T.is(count, #fields, "get() has exactly the fields of the table")

local tmp = os.tmpname()
for _, f in ipairs(fields) do
  T.ok(s0[f.name] ~= nil, f.name .. ": get() has it (" .. f.doc .. ")")
  local ex = ns.explorer()
  local want = other_value(f, ex:get()[f.name])
  local pre = {}
  if f.name == "gamma" or f.name == "beta" then pre.x = {1, 2} end -- 2 values fit a 2-vector
  if f.name == "baseline" then pre.batch = {{1, 2}, {3, 4}} end
  if f.name == "groups" then pre.x = ns.zeros{1, 4, 3} pre.kind = "group" want = 2 end
  if f.name == "axes" then pre.kind = "layer" end
  if f.name == "target" then pre.companion = 3 pre.batch = {{1}, {2}, {3}} end
  if f.name == "companion" then pre.batch = {{1}, {2}, {3}} pre.companion = 3 pre.target = 2 end
  if next(pre) then ex:set(pre) end
  local ok, err = pcall(ex.set, ex, {[f.name] = want})
  T.ok(ok, f.name .. ": set{} takes a new value", tostring(err))
  local got = ex:get()
  local back = ns.explorer()
  back:set(got)
  T.ok(same(back:get(), got), f.name .. ": get -> set -> get is bit for bit")
  -- dump -> load, through a file
  local f2 = io.open(tmp, "w")
  f2:write(ex:dump())
  f2:close()
  local loaded = ns.explorer()
  local lok, lerr = pcall(loaded.load, loaded, tmp)
  T.ok(lok and same(loaded:get(), got), f.name .. ": dump -> load is bit for bit", tostring(lerr))
  T.ok(loaded:dump() == ex:dump(), f.name .. ": the dump of the loaded state is the same text")
end

-- numbers that print badly (NaN cannot be set; an odd double and -0 can) survive dump
local ex = ns.explorer{eps = 0.1 + 0.2, shift = -0.0, train_loc = 2 ^ -1074}
local fh = io.open(tmp, "w") fh:write(ex:dump()) fh:close()
local back = ns.explorer()
back:load(tmp)
T.ok(same(back:get(), ex:get()), "0.1+0.2, -0 and the smallest subnormal survive dump -> load")
T.ok(1 / back:get().shift == -math.huge, "  -0 stays -0")

-- undo / redo
local u = ns.explorer()
u:set{eps = 0}
u:set{kind = "rms"}
u:set{x = {1, 2, 3, 5}}
T.ok(u:undo() and same(u:get().x, ns.tensor{-2, -1, 1, 2}), "undo brings x back")
T.ok(u:undo() and u:get().kind == "layer", "undo brings the kind back")
T.ok(u:redo() and u:get().kind == "rms", "redo")
T.ok(u:undo() and u:undo() and u:get().eps == 1e-5, "undo to the start")
T.ok(not u:undo(), "nothing more to undo")
u:set{eps = 1e-5}
T.ok(not u:undo(), "setting a field to its current value is not a step")

-- bad values change nothing, and name the field
local b = ns.explorer()
local before = b:dump()
for _, case in ipairs{{{eps = -1}, "eps"}, {{kind = "bogus"}, "kind"}, {{nope = 1}, "nope"},
                      {{groups = 3, kind = "group", x = ns.zeros{2, 4, 2}}, "groups"},
                      {{momentum = 2}, "momentum"}, {{x = {file = "/nonexistent.npy"}}, "x"}} do
  local ok, err = pcall(b.set, b, case[1])
  T.ok(not ok and tostring(err):find(case[2], 1, true), "refused, naming " .. case[2] .. ": " ..
       tostring(err))
end
T.ok(b:dump() == before, "  ... and the state is as it was")
T.ok(not pcall(ns.explorer, {eps = "x"}), "ns.explorer{bad} is an error")

-- a large x from a file is referenced by name and sha256; a changed file is refused
local npy = tmp .. ".npy"
local big = ns.rng(5):normal(0, 1, {80, 64}):astype("fp32")
ns.save(npy, big)
local L = ns.explorer()
L:set{x = {file = npy}}
T.is(L:get().source, npy, "x = {file=} sets the source")
local d = L:dump()
T.ok(d:find("sha256", 1, true) and not d:find("ns.tensor({" .. tostring(big[1]), 1, true),
     "a large loaded x is dumped as a file reference")
local fh2 = io.open(tmp, "w") fh2:write(d) fh2:close()
local L2 = ns.explorer()
L2:load(tmp)
T.ok(same(L2:get().x, L:get().x), "the reference loads the same x")
ns.save(npy, big + 1)
local L3 = ns.explorer()
local ok3, err3 = pcall(L3.load, L3, tmp)
T.ok(not ok3 and tostring(err3):find("changed", 1, true), "a changed file is refused: " ..
     tostring(err3))
L:set{x = {1, 2}}
T.is(L:get().source, "", "x set otherwise clears the source")

-- a tensor of a .safetensors file with several is named, in the source and in the dump
local st = T.srcdir() .. "/tests/data/safetensors/torch.safetensors"
local S = ns.explorer()
S:set{x = {file = st, tensor = "x_bn"}}
T.is(S:get().source, st .. ":x_bn", "the source names the file and the tensor")
local sd = S:dump()
T.ok(sd:find('tensor = "x_bn"', 1, true), "the dump names the tensor")
local fh3 = io.open(tmp, "w") fh3:write(sd) fh3:close()
local S2 = ns.explorer()
S2:load(tmp)
T.ok(same(S2:get().x, S:get().x) and S2:get().source == S:get().source,
     "and loads the same tensor back")
T.ok(not pcall(S2.set, S2, {x = {file = st}}), "a file of several tensors needs a tensor name")

-- a state file is data: it cannot reach io or os
local evil = io.open(tmp, "w")
evil:write("os.execute('true') set{eps = 0}")
evil:close()
local ok4, err4 = pcall(ns.explorer().load, ns.explorer(), tmp)
T.ok(not ok4 and tostring(err4):find("os", 1, true), "a state file has no os: " .. tostring(err4))
local loop = io.open(tmp, "w") loop:write("while true do end") loop:close()
local ok5, err5 = pcall(ns.explorer().load, ns.explorer(), tmp)
T.ok(not ok5 and tostring(err5):find("too long", 1, true), "an endless state file is stopped")

os.remove(tmp)
os.remove(npy)
-- the display statistics read fp32 tensors straight from their storage: the same sums, bit
-- for bit, as the route through doubles that other dtypes take (1003 values: a partial
-- last group of eight)
do
  local v = {}
  for i = 1, 1003 do v[i] = math.sin(i) * 3 + 0.25 end
  local x32 = ns.tensor(v):astype("fp32")
  local a = ns.explorer{x = x32, dtype = "fp32"}:result()
  local b = ns.explorer{x = x32:astype("fp64"), dtype = "fp32"}:result()
  T.ok(a.x_mean == b.x_mean and a.x_std == b.x_std and a.x_rms == b.x_rms,
       "x statistics: fp32 storage = the same values in fp64 storage, bit for bit")
  T.ok(a.y_mean == b.y_mean and a.y_std == b.y_std,
       "y statistics: the fp32 route = the double route, bit for bit")
  v[5], v[700], v[701] = 0 / 0, math.huge, -math.huge
  local c = ns.explorer{x = ns.tensor(v):astype("fp32")}:result()
  local d = ns.explorer{x = ns.tensor(v)}:result()
  T.ok(c.cond == "x_nonfinite" and d.cond == "x_nonfinite", "NaN and Inf seen in both storages")
  T.ok(c.x_min == -math.huge and c.x_max == math.huge and d.x_min == -math.huge,
       "min and max see the infinities and leave the NaN out")
end

-- set{} and ns.normalize{} read the spec's scalar fields with one reader: a bad value gets
-- the same words from both ("set: <field>: ..." and "spec.<field>: ...").
do
  local bad = {{"kind", "weight"}, {"eps", -1}, {"eps", "small"}, {"eps_at", "sqrt"},
    {"ddof", 2}, {"ddof", 0.5}, {"groups", 0}, {"center", 1}, {"order", "random"},
    {"dtype", "fp8"}, {"acc", 3}, {"algo", "fast"}, {"mode", "test"}}
  for _, b in ipairs(bad) do
    local ok1, m1 = pcall(function() ns.explorer():set{[b[1]] = b[2]} end)
    local ok2, m2 = pcall(ns.normalize, ns.zeros{2, 4}, {[b[1]] = b[2]})
    local w1 = not ok1 and tostring(m1):match("set: (" .. b[1] .. ": .*)$")
    local w2 = not ok2 and tostring(m2):match("spec%.(" .. b[1] .. ": .*)%)$")
    T.ok(w1 and w1 == w2, b[1] .. " = " .. tostring(b[2]) .. ": one wording",
      tostring(m1) .. "\n" .. tostring(m2))
  end
end

-- ns.result_keys() is generated from the tables result() walks: each key result() returns
-- is listed, and each listed key shows up when its section's part was (or was not) done.
do
  local listed, sections = {}, {}
  for _, k in ipairs(ns.result_keys()) do
    listed[k.section .. "." .. k.key] = k
    if k.section ~= "" then sections[k.section] = true end
  end
  for _, st in ipairs({{}, {placement = "pre", mode = "eval", kind = "batch",
                           x = {{1, 2}, {3, 5}, {4, 4}}}}) do
    local e = ns.explorer(st)
    local r = e:result()
    local unlisted, missing = {}, {}
    local function walk(sec, t)
      for key in pairs(t) do
        if not (sec == "" and sections[key]) and not listed[sec .. "." .. key] then
          unlisted[#unlisted + 1] = sec .. "." .. key
        end
      end
    end
    walk("", r)
    for sec in pairs(sections) do walk(sec, r[sec]) end
    for name, k in pairs(listed) do
      local t = k.section == "" and r or r[k.section]
      local done = t.done == nil or t.done
      local expect = not k.type:find("(", 1, true) and
        (k.when == "always" or (k.when == "done") == done)
      if expect and t[k.key] == nil then missing[#missing + 1] = name end
    end
    table.sort(unlisted)
    table.sort(missing)
    T.ok(#unlisted == 0, "every key of result() is in ns.result_keys()", table.concat(unlisted, " "))
    T.ok(#missing == 0, "every key ns.result_keys() lists is in result()", table.concat(missing, " "))
  end
end

T.done()
