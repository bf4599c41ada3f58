-- torch_rng.lua: ns.torch_rng against values torch 1.13 itself produced
-- (tests/data/torch-rng-vectors.tsv), and chapter 002's printed "Mean output RMS"
-- (claim n-torch-rmsnorm-mean-rms) reproduced to the last float32 bit.
local T = dofile((arg and arg[0] or "tests/lua/torch_rng.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

-- float32 bit pattern of a number that is exactly a float32 (read back from string.pack)
local function bits(v) return string.unpack("<I4", string.pack("<f", v)) end

-- ---- the shared test vectors: every group, bit for bit ----------------------------------
local path = T.srcdir() .. "/tests/data/torch-rng-vectors.tsv"
local f = assert(io.open(path, "r"), "cannot open " .. path)
local groups, order = {}, {}
for line in f:lines() do
  if line:sub(1, 1) ~= "#" then
    local fn, seed, after, n, i, b = line:match("^(%a+)\t(%d+)\t([^\t]+)\t(%d+)\t(%d+)\t0x(%x+)$")
    if fn then
      local key = table.concat({fn, seed, after, n}, "|")
      if not groups[key] then
        groups[key] = {fn = fn, seed = tonumber(seed), after = after, n = tonumber(n), bits = {}}
        order[#order + 1] = key
      end
      groups[key].bits[tonumber(i) + 1] = tonumber(b, 16)
    end
  end
end
f:close()
local compared, mismatched, failed_groups = 0, 0, {}
for _, key in ipairs(order) do
  local gr = groups[key]
  local g = ns.torch_rng(gr.seed)
  if gr.after ~= "-" then
    for name, k in gr.after:gmatch("(%a+)%((%d+)%)") do g[name](g, tonumber(k)) end
  end
  local v = g[gr.fn](g, gr.n)
  local bad = 0
  for i = 1, gr.n do
    if bits(v[i]) ~= gr.bits[i] then bad = bad + 1 end
  end
  compared, mismatched = compared + gr.n, mismatched + bad
  if bad > 0 then failed_groups[#failed_groups + 1] = key .. ": " .. bad end
end
T.ok(#order >= 78 and compared == 10263,
  string.format("%d torch call groups, %d values read", #order, compared))
T.ok(mismatched == 0, string.format("every value bit for bit as torch made it (%d differ)", mismatched),
  #failed_groups > 0 and table.concat(failed_groups, "\n") or nil)

-- ---- the generator's behaviour ------------------------------------------------------------
local x = ns.torch_rng(12):randn{2, 5, 8}
T.is(x:dtype(), "fp32", "randn gives an fp32 tensor")
T.is(table.concat(x:shape(), ","), "2,5,8", "randn{2, 5, 8} has that shape")
local x2 = ns.torch_rng(12):randn(2, 5, 8)
T.ok(table.concat(x2:shape(), ",") == "2,5,8" and (x2 - x):abs():max() == 0,
  "randn(2, 5, 8) with separate sizes, as torch writes it")
local a, b = ns.torch_rng(12), ns.torch_rng(12)
T.is(a:randn(1)[1], b:randn(2)[1], "randn(1) and randn(2) start with the same value")
T.is(a:randn(1)[1], ns.torch_rng(12):randn(2)[2], "a second randn(1) returns the cached sine")
T.is(ns.torch_rng(12 + 2 ^ 32):rand(3)[3], ns.torch_rng(12):rand(3)[3], "seed is taken mod 2^32")
T.is(ns.torch_rng(-1):rand(1)[1], ns.torch_rng(2 ^ 32 - 1):rand(1)[1], "negative seed as torch reads it")
local u = ns.torch_rng(3):rand(1000)
T.ok(u:min() >= 0 and u:max() < 1, "rand in [0, 1)")
T.is(ns.torch_rng():rand(1)[1], ns.torch_rng(67280421310721):rand(1)[1],
  "no seed: torch's initial seed")

T.err("seed must be an integer", "fractional seed", ns.torch_rng, 1.5)
T.err("seed must be an integer", "string seed", ns.torch_rng, "12")
T.err("generator from ns.torch_rng expected", "method on a wrong object",
  function() return ns.torch_rng(1).randn(ns.rng(1), 3) end)
T.err("shape", "missing shape", function() return ns.torch_rng(1):randn() end)
T.err("positive integer", "zero size", function() return ns.torch_rng(1):rand(0) end)
T.err("at most 4 sizes", "five sizes", function() return ns.torch_rng(1):rand(1, 1, 1, 1, 1) end)

-- ---- chapter 002: ManualRMSNorm(8) on torch.randn(2, 5, 8) after torch.manual_seed(12) ----
-- torch computes, all in float32:
--   scale = rsqrt(mean(x^2 over the last axis) + 1e-6); out = x * scale * 1
--   print(out.pow(2).mean(dim=-1).sqrt().mean().item())
-- Each operation rounds to float32 (r below). A mean is a sum divided by the count.
-- torch's AVX2 sum of n >= 8 contiguous float32 values, n < 32 (its vectorised inner
-- reduction): one 8-lane vector holds the first 8 values, the values past them are added
-- one by one to 0 first, then the 8 lanes in order. For n = 8: 0 + v1 + ... + v8.
local function r(v) return ns.round(v, "fp32") end
local function torch_sum(v)
  local n, s = #v, 0.0
  for i = 9, n do s = r(s + v[i]) end
  for i = 1, 8 do s = r(s + v[i]) end
  return s
end
local xv = x:flat()
local rms = {}
for tok = 0, 9 do
  local row, sq = {}, {}
  for j = 1, 8 do
    row[j] = xv[tok * 8 + j]
    sq[j] = r(row[j] * row[j])
  end
  local scale = r(1 / r(math.sqrt(r(r(torch_sum(sq) / 8) + r(1e-6)))))
  local osq = {}
  for j = 1, 8 do
    local o = r(r(row[j] * scale) * 1)
    osq[j] = r(o * o)
  end
  rms[tok + 1] = r(math.sqrt(r(torch_sum(osq) / 8)))
end
local mean_rms = r(torch_sum(rms) / 10)
T.claim(claims, "n-torch-rmsnorm-mean-rms", mean_rms)
T.is(string.format("%.17g", mean_rms), "0.99999934434890747", "the printed 0.9999993443489075 exactly")
-- The same through ns.normalize in fp64 on the same float32 input: 0.99999929352 (the
-- claim's setup text), so the float32 rounding above is what moves the last digits.
local y = ns.normalize(x:astype("fp64"), {kind = "rms", eps = 1e-6})
T.close(y:square():mean({3}):sqrt():mean(), 0.99999929352, 5e-12, "fp64 arithmetic: 0.99999929352")

T.done()
