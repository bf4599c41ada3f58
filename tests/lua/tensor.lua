-- tensor.lua: tensors from Lua: construction, reads, printing, arithmetic with
-- broadcasting, elementwise maps, reductions, shape changes, matmul; argument errors.
local T = dofile((arg and arg[0] or "tests/lua/tensor.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

-- construction and reads
local t = ns.tensor{{1, 2, 3}, {4, 5, 6}}
T.is(table.concat(t:shape(), ","), "2,3", "nested values give shape (2, 3)")
T.is(t:dtype(), "fp64", "default dtype fp64")
T.is(#t, 6, "#t is the element count")
T.is(t[1], 1, "t[1] is the first element")
T.is(t[5], 5, "t[5] is row-major flat")
T.is(t[7], nil, "t[#t+1] is nil")
T.is(t[0], nil, "t[0] is nil")
T.all_close(t:flat(), {1, 2, 3, 4, 5, 6}, 0, "flat is row-major")
local nested = t:totable()
T.ok(#nested == 2 and nested[2][3] == 6, "totable nests by rows")
T.all_close(ns.tensor({1, 2, 3, 4}, {2, 2}):flat(), {1, 2, 3, 4}, 0, "flat values with a shape")
T.is(table.concat(ns.tensor({1, 2, 3, 4}, {2, 2}):shape(), ","), "2,2", "shape argument applies")
T.is(ns.tensor({1, 2}, nil, "fp32"):dtype(), "fp32", "dtype argument applies")
T.is(ns.tensor({1 + 2 ^ -30}, nil, "fp32")[1], 1, "fp32 storage rounds on construction")
T.is(ns.tensor({{{{1}}}}):shape()[4], 1, "rank 4 accepted")
local s = tostring(t)
T.ok(s:find("shape=(2, 3)", 1, true) and s:find("fp64", 1, true) and s:find("6", 1, true),
  "tostring shows values, shape and dtype", s)
T.ok(tostring(ns.zeros(5000)):find("...", 1, true), "large tensors print summarized")
T.ok(tostring(ns.tensor{0 / 0, 1 / 0}):find("nan", 1, true), "NaN prints as nan")

T.err("ragged", "ragged input refused", ns.tensor, {{1, 2}, {3}})
T.err("values[2] is a string", "non-number named", ns.tensor, {1, "x"})
T.err("deeper than rank 4", "rank 5 refused", ns.tensor, {{{{{1}}}}})
T.err("empty", "empty array refused", ns.tensor, {})
T.err("shape has 3 elements but values has 4", "shape/count mismatch", ns.tensor, {1, 2, 3, 4}, {3})
T.err("dtype must be one of", "unknown dtype", ns.tensor, {1}, nil, "fp8")
T.err("bad argument #1", "non-table values", ns.tensor, 5)
T.err("too many elements", "huge shape refused", ns.zeros, {100000, 100000, 100000})
T.err("positive integer", "zero size refused", ns.zeros, {2, 0})
T.err("1 to 4 sizes", "shape of rank 5 refused", ns.zeros, {1, 1, 1, 1, 1})
T.err("read-only", "element writes refused", function() t[1] = 5 end)

-- constructors
T.all_close(ns.zeros{2, 2}:flat(), {0, 0, 0, 0}, 0, "zeros")
T.all_close(ns.full(3, 7.5):flat(), {7.5, 7.5, 7.5}, 0, "full")
T.all_close(ns.eye(3):flat(), {1, 0, 0, 0, 1, 0, 0, 0, 1}, 0, "eye")
T.is(ns.eye(2, "bf16"):dtype(), "bf16", "eye with dtype")
T.err("value must be a number", "full needs a number", ns.full, 3, "x")

-- arithmetic and broadcasting
T.all_close((t + 1):flat(), {2, 3, 4, 5, 6, 7}, 0, "t + number")
T.all_close((10 - t):flat(), {9, 8, 7, 6, 5, 4}, 0, "number - t")
T.all_close((t * t):flat(), {1, 4, 9, 16, 25, 36}, 0, "t * t")
T.all_close((t / 2):flat(), {0.5, 1, 1.5, 2, 2.5, 3}, 0, "t / number")
T.all_close((2 / ns.tensor{1, 4}):flat(), {2, 0.5}, 0, "number / t")
T.all_close((-t):flat(), {-1, -2, -3, -4, -5, -6}, 0, "-t")
T.all_close((t + ns.tensor{10, 20, 30}):flat(), {11, 22, 33, 14, 25, 36}, 0,
  "trailing-shape operand broadcasts over rows")
T.all_close((t - t:mean(2)):flat(), {-1, 0, 1, -1, 0, 1}, 0, "kept axes broadcast back")
T.all_close((t + {1, 1, 1}):flat(), {2, 3, 4, 5, 6, 7}, 0, "plain array operand")
local q = ns.tensor{1, 0, -1} / 0
T.ok(q[1] == math.huge and q[2] ~= q[2] and q[3] == -math.huge, "division by zero follows IEEE")
T.err("do not broadcast", "incompatible shapes", function() return t + ns.tensor{1, 2} end)
T.err("attempt to add", "tensor + string", function() return t + "x" end)
T.is((ns.tensor({1}, nil, "fp32") + ns.tensor{1}):dtype(), "fp64", "fp32 + fp64 is fp64")
T.is((ns.tensor({1}, nil, "fp16") + ns.tensor({1}, nil, "bf16")):dtype(), "fp32",
  "fp16 + bf16 is fp32")
T.is((ns.tensor({1}, nil, "fp32") * 3):dtype(), "fp32", "tensor * number keeps dtype")

-- elementwise functions
local x = ns.tensor{-1, 0, 4}
T.all_close(x:relu():flat(), {0, 0, 4}, 0, "relu")
T.all_close(x:abs():flat(), {1, 0, 4}, 0, "abs")
T.all_close(x:square():flat(), {1, 0, 16}, 0, "square")
T.all_close(x:exp():flat(), {math.exp(-1), 1, math.exp(4)}, 1e-15 * math.exp(4), "exp")
local l = x:log()
T.ok(l[1] ~= l[1] and l[2] == -math.huge and math.abs(l[3] - math.log(4)) < 1e-15,
  "log: NaN for negatives, -inf at 0")
local r = x:sqrt()
T.ok(r[1] ~= r[1] and r[3] == 2, "sqrt: NaN for negatives")
T.close(ns.tensor{0.5}:tanh()[1], 0.46211715726000974, 1e-16, "tanh")
T.all_close(x:map(function(v) return 2 * v + 1 end):flat(), {-1, 1, 9}, 0, "map")
T.err("expected a number", "map result must be a number", function()
  return x:map(function() return "no" end)
end)
T.err("bad argument #1 to 'map'", "map needs a function", function() return x:map(5) end)

-- reductions: hand-computed for {{1,2,3},{4,5,6}}
T.is(t:sum(), 21, "sum")
T.is(t:mean(), 3.5, "mean")
T.close(t:var(), 17.5 / 6, 1e-15, "population var")
T.close(t:var(nil, 1), 3.5, 1e-15, "sample var (ddof 1)")
T.close(t:std(), math.sqrt(17.5 / 6), 1e-15, "std")
T.is(t:min(), 1, "min")
T.is(t:max(), 6, "max")
local cs = t:sum(1)
T.is(table.concat(cs:shape(), ","), "1,3", "sum over axis 1 keeps it as size 1")
T.all_close(cs:flat(), {5, 7, 9}, 0, "column sums")
T.all_close(t:mean(2):flat(), {2, 5}, 0, "row means")
T.all_close(t:var(2):flat(), {2 / 3, 2 / 3}, 1e-15, "row variances")
T.all_close(t:std(1, 1):flat(), {math.sqrt(4.5), math.sqrt(4.5), math.sqrt(4.5)}, 1e-15,
  "column std with ddof 1")
T.all_close(t:max(2):flat(), {3, 6}, 0, "row max")
T.all_close(t:min({1, 2}):flat(), {1}, 0, "min over both axes")
T.ok(ns.tensor{1, 0 / 0, 3}:max() ~= ns.tensor{1, 0 / 0, 3}:max(), "max propagates NaN")
T.ok(ns.tensor{5}:var(nil, 1) ~= ns.tensor{5}:var(nil, 1), "var with count <= ddof is NaN")
T.err("out of range 1..2", "axis out of range", function() return t:sum(3) end)
T.err("twice", "repeated axis", function() return t:sum({1, 1}) end)
T.err("ddof must be >= 0", "negative ddof", function() return t:var(nil, -1) end)

-- shape changes
T.all_close(t:reshape{3, 2}:flat(), {1, 2, 3, 4, 5, 6}, 0, "reshape keeps order")
T.is(table.concat(t:reshape(3, -1):shape(), ","), "3,2", "reshape infers -1")
T.err("cannot reshape", "reshape count mismatch", function() return t:reshape{4, 2} end)
T.err("only one size may be -1", "two -1", function() return t:reshape(-1, -1) end)
T.all_close(t:slice(2, 2, 3):flat(), {2, 3, 5, 6}, 0, "slice columns 2..3")
T.all_close(t:slice(1, -1):flat(), {4, 5, 6}, 0, "slice from the end")
T.err("out of range", "slice index out of range", function() return t:slice(2, 1, 4) end)
T.err("before from", "empty slice refused", function() return t:slice(2, 3, 2) end)
T.all_close(ns.concat({t, t}, 1):flat(), {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, 0, "concat rows")
T.all_close(ns.concat({ns.tensor{{1}, {2}}, ns.tensor{{3, 4}, {5, 6}}}, 2):flat(),
  {1, 3, 4, 2, 5, 6}, 0, "concat columns of different widths")
T.err("tensor 2 has rank 1", "concat rank mismatch", ns.concat, {t, ns.tensor{1, 2}})
T.err("tensor 2 has size 1 on axis 1", "concat size mismatch", ns.concat, {t, ns.tensor{{1, 2}}}, 2)
T.err("at least one", "concat of nothing", ns.concat, {})
T.all_close(t:T():flat(), {1, 4, 2, 5, 3, 6}, 0, "transpose")
T.err("rank-2", "transpose of a vector", function() return x:T() end)
local c = t:copy()
T.ok(c ~= t and c[6] == 6, "copy")
local h = ns.tensor{1.00390625 + 1e-12, 70000}:astype("fp16")
T.is(h:dtype(), "fp16", "astype changes dtype")
T.ok(h[1] == 1.00390625 and h[2] == math.huge, "astype fp16 rounds once, overflows to inf")
T.is(ns.tensor{1.00390625 + 1e-12}:astype("bf16")[1], 1.0078125, "astype bf16 single rounding")

-- products
T.all_close(ns.matmul(t, t:T()):flat(), {14, 32, 32, 77}, 0, "matmul (dgemm)")
local f32 = ns.tensor({{1, 2}, {3, 4}}, nil, "fp32")
local p32 = ns.matmul(f32, f32)
T.ok(p32:dtype() == "fp32", "fp32 matmul stays fp32 (sgemm)")
T.all_close(p32:flat(), {7, 10, 15, 22}, 0, "fp32 matmul values")
T.all_close(ns.outer({1, 2}, {3, 4, 5}):flat(), {3, 4, 5, 6, 8, 10}, 0, "outer")
T.err("b has 2 rows but a has 3 columns", "matmul shape mismatch", ns.matmul, t, t)
T.err("rank-2", "matmul of a vector", ns.matmul, x, t)

-- 20-layer tanh stack stays finite and bounded
local v = ns.tensor{0.5, -1, 2}
local W = ns.tensor{{0.5, -0.2, 0.1}, {0.3, 0.4, -0.1}, {-0.2, 0.1, 0.6}}
for _ = 1, 20 do v = ns.matmul(W, v:reshape(3, 1)):reshape(3):tanh() end
T.ok(v:abs():max() < 1, "tanh stack stays in (-1, 1)")

-- messages name the argument and describe what came, briefly
local m = ns.tensor{{1, 2}, {3, 4}}
T.err("shape[1] must be a positive integer or -1, got tensor)", "reshape by a tensor: type, not its text",
  function() return m:reshape(m) end)
T.err("from must be an integer index, got 'a'", "slice names from", function() return m:slice(1, "a") end)
T.err("to must be an integer index, got 1.5", "slice names to", function() return m:slice(1, 1, 1.5) end)
T.err("ddof must be >= 0, got 0.5", "fractional ddof named", function() return m:var(1, 0.5) end)
T.err("bad argument #1 to 'map' (f must be a function, got no value)", "map names f",
  function() return m:map() end)
T.err("list must be an array of tensors, got tensor", "concat names list",
  function() return ns.concat(m) end)
-- a tensor whose storage was released (its __gc called by hand) is refused by name
local gone = ns.tensor{1, 2}
getmetatable(gone).__gc(gone)
T.err("left operand has been released", "arithmetic on a released tensor", function() return gone + 1 end)
T.err("right operand has been released", "released right operand", function() return m + gone end)
T.err("tensor has been released", "method of a released tensor", function() return gone:sum() end)
T.is(tostring(gone), "tensor(released)", "a released tensor prints as such")

-- the collector learns of a tensor's data, not only its box: a loop that drops 40 copies
-- of an 8 MB tensor keeps few of them alive (told nothing, it keeps every one: 320 MB)
do
  local big = ns.zeros({1024, 1024})
  local seen = setmetatable({}, {__mode = "k"})
  for _ = 1, 40 do seen[big:copy()] = true end
  local live = 0
  for _ in pairs(seen) do live = live + 1 end
  T.ok(live <= 8, ("dropped tensors are collected as their bytes add up (%d of 40 alive)"):format(live))
end

T.done()
