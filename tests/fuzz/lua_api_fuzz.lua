-- lua_api_fuzz.lua: a deterministic fuzz of the Lua API. Every ns function, tensor
-- method and metamethod, running-statistics and generator method is called many times
-- with wrong argument types, shapes and values (nil, strings, huge numbers, NaN,
-- negative sizes, nested garbage tables, tensors of the wrong rank, released tensors,
-- specs with garbage fields) inside pcall. The process must survive every call, and
-- every error must be a string that says which argument, field or operation was at
-- fault. Runs under `normscope run` and stock lua5.4 (tests/lua/run-lua.sh); bounded
-- to a few seconds. Set NS_FUZZ_ROUNDS to change the number of rounds, NS_FUZZ_SEED
-- the seed, NS_FUZZ_VERBOSE=1 to print every distinct error message.
local here = (arg and arg[0] or "tests/fuzz/lua_api_fuzz.lua"):gsub("[^/]*$", "")
local T = dofile(here .. "../lua/tap.lua")
local ns = T.ns

local ROUNDS = tonumber(os.getenv("NS_FUZZ_ROUNDS") or "") or 1500
local VERBOSE = os.getenv("NS_FUZZ_VERBOSE") == "1"
local TIME_LIMIT = 20 -- seconds of CPU; a safety net, the run normally takes about 2

-- A 64-bit LCG (Knuth's MMIX constants): the same sequence on every run and in
-- every interpreter, independent of the module's own generator.
local state = tonumber(os.getenv("NS_FUZZ_SEED") or "") or 20240611
local function rand(n) -- integer in 1..n
  state = state * 6364136223846793005 + 1442695040888963407
  return ((state >> 33) % n) + 1
end
local function pick(list) return list[rand(#list)] end

-- ---- the values thrown at the API ------------------------------------------------

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

local tmp = os.tmpname()
os.remove(tmp) -- only its name is used, with .npy / .csv appended
local released = ns.tensor{1, 2, 3}
getmetatable(released).__gc(released) -- frees the storage: a dangling tensor object

local tensors = {
  ns.tensor{-2, -1, 1, 2},
  ns.tensor{5},
  ns.tensor{{1, 2, 3}, {4, 5, 7}},
  ns.tensor{{1, 2}, {3, 4}},
  ns.tensor{{0, 1}, {-1, 0}},
  ns.tensor{{{1, 2}, {3, 4}}, {{5, 6}, {7, 9}}},
  ns.zeros{2, 2, 1, 2},
  ns.tensor({1, 2, 3, 4}, {2, 2}, "fp16"),
  ns.tensor({0.1, 0.2, 0.3}, nil, "bf16"),
  ns.tensor({1e300, -1e300, 0 / 0, 1 / 0}, nil, "fp32"),
  ns.full({3, 3}, 0 / 0),
  released,
}

local scalars = {
  0, 1, 2, 3, 4, -1, -2, 0.5, -0.0, 1e-300, 0 / 0, 1 / 0, -1 / 0,
  2 ^ 53, 2 ^ 63, 2 ^ 31 + 1, 1e300, -1e300, math.maxinteger, math.mininteger,
  "", "abc", "1", "-5", "fp32", "fp16", "layer", "rms", "batch", "group", "eval", "fd",
  "18446744073709551617", "x\0y", tmp .. ".npy", tmp .. ".csv", "/nonexistent/dir/a.npy",
  true, false,
}

local funcs = {
  function(v) return v end,
  function() return "not a number" end,
  function() error("raised inside a callback") end,
  function() return nil end,
}

local specfields = {
  "kind", "axes", "groups", "eps", "eps_at", "ddof", "center", "gamma", "beta", "dtype",
  "acc", "algo", "mode", "running", "momentum", "exact", "method", "h", "n", "mean", "var",
  "m2", "bogus", 1, 2,
}

local value -- forward: value(depth) returns one random thing

-- A table of random shape: arrays of numbers (possibly ragged), nested garbage, or a
-- record with known field names and garbage values.
local function garbage_table(depth)
  local kind = rand(6)
  if kind == 1 then return {} end
  if kind == 2 then -- an array
    local t = {}
    for i = 1, rand(5) - 1 do t[i] = depth < 3 and value(depth + 1) or pick(scalars) end
    return t
  end
  if kind == 3 then -- nested numbers, maybe ragged
    local rows, t = rand(3), {}
    for i = 1, rows do
      local r = {}
      for j = 1, rand(3) do r[j] = rand(7) - 3 end
      t[i] = r
    end
    return t
  end
  if kind == 4 then -- deep nesting
    local t = {1}
    for _ = 1, rand(7) do t = {t} end
    return t
  end
  local t = {} -- a record with known and unknown fields
  for _ = 1, rand(4) do
    t[pick(specfields)] = depth < 3 and value(depth + 1) or pick(scalars)
  end
  return t
end

local running_obj = ns.running{}
local rng_obj = ns.rng(1)

-- A spec (or options table) whose fields are real names with values that are
-- sometimes right and sometimes not, so the checks past the field names are reached.
local field_values = {
  kind = {"layer", "rms", "batch", "instance", "group", "Layer", 3},
  axes = {1, 2, 3, 4, 0, 5, -1, 1.5, {1, 2}, {2, 3, 4}, {1, 3}, {3, 4}, {}, {1, 1}, {"1"}, "1"},
  groups = {1, 2, 3, 4, 0, -1, 1.5, 2 ^ 40, "2"},
  eps = {0, 1e-5, 1, -1, 0 / 0, 1 / 0, "1e-5"},
  eps_at = {"var", "std", "mean"},
  ddof = {0, 1, 2, -1, 0.5, math.maxinteger},
  center = {true, false, 1, "yes"},
  gamma = {1, 2, 0 / 0, {1, 2}, {1, 2, 3}, {1, 2, 3, 4}, {{1, 2}}, "x"},
  beta = {0, -1, {1, 2}, {1, 2, 3, 4}, {}, true},
  dtype = {"fp64", "fp32", "fp16", "bf16", "fp8", 32},
  acc = {"fp64", "fp32", "fp16", "bf16", "int8"},
  algo = {"twopass", "welford", "raw", "kahan"},
  mode = {"train", "eval", "test"},
  running = {"running", {}, 1},
  method = {"analytic", "fd", "backward", 1},
  h = {1e-6, 1e-3, 0, -1, 0 / 0, 1 / 0, "h"},
  momentum = {0.1, 0, 1, false, true, 2, -0.5, 0 / 0, "0.1"},
  exact = {true, false, 0, "yes"},
}
local field_names = sorted_keys(field_values)
local function spec_table()
  local t = {}
  for _ = 1, rand(4) do
    local k = pick(field_names)
    local v = pick(field_values[k])
    if v == "running" then v = ns.running(pick{{}, {exact = true}, {momentum = false}}) end
    if type(v) == "table" and rand(4) == 1 then v = pick(tensors) end
    t[k] = v
  end
  return t
end

local extras = {
  spec_table, spec_table, spec_table,
  function() return running_obj end,
  function() return rng_obj end,
  function() return io.stdout end,
  function() return coroutine.create(print) end,
  function() return pick(funcs) end,
  function() return ns.moments{1, 2, 3} end,
  function() return {n = rand(5) - 2, mean = pick(scalars), m2 = pick(scalars)} end,
  function() return {{n = 2, mean = 1, m2 = 1}, {n = "x"}} end,
  function() return {kind = pick{"layer", "rms", "batch", "instance", "group"}, eps = 0} end,
}

value = function(depth)
  depth = depth or 0
  local r = rand(10)
  if r == 1 then return nil end
  if r <= 4 then return pick(scalars) end
  if r <= 6 then return pick(tensors) end
  if r <= 8 then return garbage_table(depth) end
  return pick(extras)()
end

-- ---- what is called ----------------------------------------------------------------


-- Methods from the objects' own metatables, so new methods are fuzzed without edits.
local function method_names(obj)
  local mt = getmetatable(obj)
  local idx = mt.__index
  if type(idx) == "function" then -- the method table is the closure's upvalue
    local _, up = debug.getupvalue(idx, 1)
    idx = up
  end
  return sorted_keys(idx), idx
end

local targets = {} -- {name=, fn=, self=function returning a typical first argument}
for _, k in ipairs(sorted_keys(ns)) do
  if type(ns[k]) == "function" then targets[#targets + 1] = {name = "ns." .. k, fn = ns[k]} end
end
-- selfs() gives a typical first argument; fresh() a new object, for __gc (which
-- would otherwise release the shared objects the other calls use).
local function add_methods(prefix, obj, selfs, fresh)
  local names, tbl = method_names(obj)
  for _, k in ipairs(names) do
    targets[#targets + 1] = {name = prefix .. k, fn = tbl[k], self = selfs}
  end
  local mt = getmetatable(obj)
  for _, k in ipairs(sorted_keys(mt)) do
    if type(mt[k]) == "function" and k ~= "__index" then
      targets[#targets + 1] = {name = prefix .. k, fn = mt[k], self = k == "__gc" and fresh or selfs}
    end
  end
  if type(mt.__index) == "function" then
    targets[#targets + 1] = {name = prefix .. "__index", fn = mt.__index, self = selfs}
  end
end
local function new_running()
  local r = ns.running(pick{{}, {momentum = false}, {exact = true}})
  if rand(2) == 1 then r:update(ns.tensor{{1, 2, 3}, {4, 5, 7}}) end
  return r
end
add_methods("tensor:", tensors[1], function() return pick(tensors) end,
  function() return ns.tensor{1, 2} end)
add_methods("running:", running_obj, new_running, new_running)
add_methods("rng:", rng_obj, function() return ns.rng(rand(100)) end,
  function() return ns.rng(rand(100)) end)
add_methods("torch_rng:", ns.torch_rng(1), function() return ns.torch_rng(rand(100)) end,
  function() return ns.torch_rng(rand(100)) end)

-- ---- checking what comes back ----------------------------------------------------------

-- An error message is clear when it names the argument ("bad argument #N to 'f' (...)")
-- or, for errors that are not about one argument, starts with the operation or file
-- it concerns. Each pattern here is one such family.
local clear_forms = {
  "^bad argument #%d+ to '[^']+' %(.+%)$",
  "^tensor [a-z]+: .+", -- arithmetic: "tensor add: shapes ... do not broadcast"
  "^attempt to [a-z]+ a [a-z]+ and a [a-z]+$", -- arithmetic with a non-number
  "^tensors are read%-only",
  "^running statistics change only through :update%(%)",
  "^map: the function returned a [a-z]+ for element %d+, expected a number$",
  "^tensor index must be an integer",
  "raised inside a callback$", -- the callback's own error, passed through
  "^[^:]+%.npy: .+", "^[^:]+%.csv: .+", -- file errors name the file
}

local function clear(msg)
  if type(msg) ~= "string" then return false end
  msg = msg:gsub("^[^:]*:%d+: ", "", 1) -- a position added by luaL_error
  for _, p in ipairs(clear_forms) do
    if msg:find(p) then return true end
  end
  return false
end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" and not getmetatable(v) then
    local parts = {}
    for k, x in pairs(v) do
      parts[#parts + 1] = tostring(k) .. "=" .. (type(x) == "table" and "{...}" or tostring(x))
      if #parts > 4 then break end
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  local ok, s = pcall(tostring, v)
  return ok and s or type(v)
end

local calls, errors, unclear, seen = 0, 0, {}, {}
local start = os.clock()
local out_of_time = false
local real_stdout = io.stdout

for round = 1, ROUNDS do
  for _, tg in ipairs(targets) do
    local nargs = rand(5) - 1
    local args = {}
    local first = 1
    if tg.self and rand(5) > 1 then
      args[1] = tg.self()
      first = 2
      nargs = nargs + 1
    end
    for i = first, nargs do args[i] = value() end
    if tg.name == "ns.stack" and type(args[1]) == "table" and not getmetatable(args[1]) then
      -- a default run is 20 layers of 512 x 256: keep the fuzzed ones small
      local t = {layers = 2, width = 4, batch = 4}
      for k, v in pairs(args[1]) do t[k] = v end
      args[1] = t
    end
    calls = calls + 1
    local ok, err = pcall(tg.fn, table.unpack(args, 1, nargs))
    if not ok then
      errors = errors + 1
      local key = tg.name .. ": " .. tostring(err)
      if not clear(err) and not unclear[key] then
        local shown = {}
        for i = 1, nargs do shown[i] = show(args[i]) end
        unclear[key] = tg.name .. "(" .. table.concat(shown, ", ") .. ") -> " .. show(err)
      end
      if VERBOSE and not seen[key] then
        seen[key] = true
        T.diag(key)
      end
    end
    if io.stdout ~= real_stdout then io.output(real_stdout) end
  end
  if round % 10 == 0 then collectgarbage() end
  if os.clock() - start > TIME_LIMIT then
    out_of_time = true
    break
  end
end
collectgarbage()

T.ok(calls > 0, string.format("%d calls to %d functions and methods survived (%d errors)",
  calls, #targets, errors))
T.ok(not out_of_time, string.format("the run stayed within %d s of CPU (took %.1f s)",
  TIME_LIMIT, os.clock() - start))
local bad = {}
for _, v in pairs(unclear) do bad[#bad + 1] = v end
table.sort(bad)
T.ok(#bad == 0, "every error names its argument, field, operation or file",
  #bad > 0 and table.concat(bad, "\n", 1, math.min(#bad, 40)) or nil)

-- every function and method of the API was reached
local names = {}
for _, tg in ipairs(targets) do names[tg.name] = true end
for _, want in ipairs{"ns.tensor", "ns.normalize", "ns.jacobian", "ns.spectrum", "ns.eigvals",
  "ns.svdvals", "ns.rank", "ns.moments", "ns.merge", "ns.round", "ns.running", "ns.rng",
  "ns.sha256", "ns.load", "ns.save", "ns.matmul", "ns.outer", "ns.zeros", "ns.full",
  "ns.eye", "ns.concat", "tensor:map", "tensor:reshape", "tensor:slice", "tensor:var",
  "tensor:__add", "running:update", "rng:normal", "rng:random", "ns.torch_rng", "ns.vjp",
  "ns.residual_jacobian", "ns.stack", "ns.c4", "ns.lgamma", "tensor:kurtosis", "tensor:sort",
  "tensor:quantile", "tensor:median", "torch_rng:randn", "torch_rng:rand"} do
  T.ok(names[want], "fuzzed " .. want)
end

os.remove(tmp .. ".npy")
os.remove(tmp .. ".csv")
T.done()
