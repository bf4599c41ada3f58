-- estimators.lua: t:kurtosis, t:sort, t:quantile, t:median against numpy 1.24
-- (tests/data/estimators.tsv, made by tests/data/make-estimator-fixtures.py on the same
-- default_rng draws), ns.c4 against exact factorial arithmetic, ns.lgamma against closed
-- forms, and the chapter 004 claims these make computable (e-std-bias-*, e-std-spread-*,
-- e-ddof1-bias-8, e-approx-err-2-*, and e-kurtosis-* by simulation).
local T = dofile((arg and arg[0] or "tests/lua/estimators.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

local fx = {}
local f = assert(io.open(T.srcdir() .. "/tests/data/estimators.tsv", "r"))
for line in f:lines() do
  local name, vals = line:match("^([^#][^\t]*)\t(.*)$")
  if name then
    local t = {}
    for v in vals:gmatch("[^,]+") do t[#t + 1] = tonumber(v) end
    fx[name] = t
  end
end
f:close()

local qs = {0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 0.99, 1}
for _, c in ipairs{{7, {5, 6}}, {8, {7}}, {9, {2, 3, 4}}} do
  local seed, shape = c[1], c[2]
  local a = ns.rng(seed):normal(0, 1, shape)
  local tag = "rng" .. seed
  T.all_close(a:quantile(qs), fx[tag .. ".quantile"], 0, tag .. ": quantile as numpy, bit for bit")
  T.is(a:median(), fx[tag .. ".median"][1], tag .. ": median as numpy")
  T.close(a:kurtosis(), fx[tag .. ".kurtosis"][1], 1e-13, tag .. ": kurtosis of all elements")
  T.all_close(a:sort(), fx[tag .. ".sort"], 0, tag .. ": sort along the last axis")
  for ax = 1, #shape do
    T.all_close(a:kurtosis({ax}), fx[tag .. ".kurtosis.axis" .. ax], 1e-13, tag .. ": kurtosis over axis " .. ax)
    T.all_close(a:sort(ax), fx[tag .. ".sort.axis" .. ax], 0, tag .. ": sort along axis " .. ax)
  end
end
local ties = ns.tensor{3, 1, 2, 2, 5, 1}
T.all_close(ties:quantile(qs), fx["ties.quantile"], 0, "quantile with ties")
T.is(ties:median(), fx["ties.median"][1], "median of an even count: mean of the middle two")
T.is(ns.tensor{4, 1, 3}:median(), 3, "median of an odd count: the middle value")
T.is(ns.tensor{0.5, 0.25}:quantile(0.5), 0.375, "quantile of two values interpolates")
T.all_close(ties:quantile(ns.tensor(qs)), fx["ties.quantile"], 0, "q as a tensor")
T.ok(ns.tensor{1, 0 / 0, 2}:median() ~= ns.tensor{1, 0 / 0, 2}:median(), "median with a NaN is NaN")
local s = ns.tensor{2, 0 / 0, 1}:sort():flat()
T.ok(s[1] == 1 and s[2] == 2 and s[3] ~= s[3], "sort puts NaN last")
T.is(ns.tensor{1, 2, 3}:sort():dtype(), "fp64", "sort keeps the dtype")
T.is(ns.tensor({3, 1}, {2}, "fp32"):sort():dtype(), "fp32", "sort keeps fp32")
T.ok(ns.tensor{2, 2, 2}:kurtosis() ~= ns.tensor{2, 2, 2}:kurtosis(), "kurtosis of a constant is NaN")
-- Pearson, not the excess: two equal point masses at -+1 have m4 = m2 = 1, so 1 (excess -2)
T.is(ns.tensor{-1, 1, -1, 1}:kurtosis(), 1, "kurtosis is Pearson's m4/m2^2 (symmetric two-point: 1)")

-- c4 against exact arithmetic (factorials, 60-digit pi)
local n, c4 = fx["c4.n"], fx["c4"]
local worst = 0
for i = 1, #n do worst = math.max(worst, math.abs(ns.c4(n[i]) - c4[i]) / c4[i]) end
T.ok(worst < 1e-15, string.format("c4 at %d sizes (2 .. 100001) within %.2g relative of exact", #n, worst))
T.close(ns.c4(2), math.sqrt(2 / math.pi), 1e-16, "c4(2) = sqrt(2/pi)")
T.close(ns.c4(3), math.sqrt(math.pi) / 2, 2e-16, "c4(3) = sqrt(pi)/2")
local big = 1e8
T.close(ns.c4(big), 1 - 1 / (4 * big) - 7 / (32 * big ^ 2), 2e-16, "c4(1e8) = 1 - 1/(4n) - 7/(32n^2) + O(n^-3)")
T.close(ns.lgamma(0.5), math.log(math.sqrt(math.pi)), 1e-15, "lgamma(1/2) = log sqrt(pi)")
T.close(ns.lgamma(11), math.log(3628800), 1e-13, "lgamma(11) = log 10!")
T.is(ns.lgamma(1), 0.0, "lgamma(1) = 0")
T.close(ns.lgamma(-0.5), math.log(2 * math.sqrt(math.pi)), 1e-15, "lgamma(-1/2) = log |-2 sqrt(pi)|")

-- chapter 004, the estimator table: E[std_ddof0] = sqrt((n-1)/n) c4(n)
local function Es(k) return math.sqrt((k - 1) / k) * ns.c4(k) end
local function spread(k) return math.sqrt((k - 1) / k - Es(k) ^ 2) end
for _, k in ipairs{2, 4, 8, 32, 256} do T.claim(claims, "e-std-bias-" .. k, Es(k) - 1) end
for _, k in ipairs{2, 4, 8, 32, 256} do T.claim(claims, "e-std-spread-" .. k, spread(k)) end
T.claim(claims, "e-ddof1-bias-8", ns.c4(8) - 1)
T.claim(claims, "e-approx-err-2-bias", math.abs(-3 / 8 - (Es(2) - 1)) / math.abs(Es(2) - 1))
T.claim(claims, "e-approx-err-2-spread", math.abs(1 / math.sqrt(4) - spread(2)) / spread(2))
-- the same bias by simulation: 20000 normal batches of 8, mean of their std_ddof1
local b8 = ns.rng(3):normal(0, 1, {20000, 8})
T.close(b8:std({2}, 1):mean(), ns.c4(8), 0.003, "simulated E[std_ddof1] at n=8 is c4(8) (to sampling error)")
-- e-kurtosis-*: 3(n-1)/(n+1) is the mean of Pearson's kurtosis of normal batches of n
for _, k in ipairs{4, 512} do
  local rows = k == 4 and 40000 or 400
  local kb = ns.rng(k):normal(0, 1, {rows, k}):kurtosis({2}):mean()
  T.close(kb, claims["e-kurtosis-" .. k].expected, k == 4 and 0.01 or 0.03,
    string.format("simulated mean kurtosis of normal batches of %d: %.4f", k, kb))
  T.claim(claims, "e-kurtosis-" .. k, 3 * (k - 1) / (k + 1))
end

T.err("q must be in [0, 1]", "q above 1", function() return ties:quantile(1.5) end)
T.err("q must be a number or an array", "q a string", function() return ties:quantile("a") end)
T.err("q[2] must be a number in [0, 1]", "a bad q in an array", function() return ties:quantile({0.5, -1}) end)
T.err("axis", "sort axis out of range", function() return ties:sort(2) end)
T.err("n must be a finite number > 1", "c4(1)", ns.c4, 1)
T.err("n must be a number", "c4 of a string", ns.c4, "8")
T.err("x must be a number", "lgamma of a table", ns.lgamma, {})
T.err("unexpected extra argument", "median with an argument", function() return ties:median(1) end)
T.done()
