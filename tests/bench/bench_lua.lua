-- bench_lua.lua: ns.normalize called from Lua in a loop, as a script or a lesson calls it,
-- beside numpy and torch (one thread). Run by `make bench`:
--   normscope run tests/bench/bench_lua.lua CASES.tsv REFS.tsv
-- CASES.tsv is `bench_norm --cases` (the one list of cases), REFS.tsv ref_timings.py's
-- output (either may be empty). Only the fp32 cases, best of 9 calls after 2 warm-up
-- calls. From the third call on, each output is written into the memory of one the loop
-- dropped (the Lua module's spare), so no fresh pages are faulted in and zeroed: the
-- steady state of a loop. Timings are printed, never checked.
local cases_path, refs_path = arg[1], arg[2]
local refs = {}
local f = refs_path and io.open(refs_path, "r")
if f then
  for line in f:lines() do
    local i, np, th = line:match("^(%d+)\t([^\t]+)\t([^\t]+)")
    if i then refs[tonumber(i)] = {tonumber(np), tonumber(th)} end
    local norm, cmin, cmed = line:match("^stack\t(%a+)\t([^\t]+)\t([^\t]+)")
    if norm then refs["stack-" .. norm] = {tonumber(cmin), tonumber(cmed)} end
  end
  f:close()
end
local cases = {}
f = assert(io.open(cases_path, "r"), "bench_lua: no case list")
for line in f:lines() do
  local i, kind, shape, groups, dtype = line:match("^(%d+)\t(%a+)\t%(([%d,]+)%)\t(%d+)\t(%w+)")
  if i and dtype == "fp32" then
    local sh = {}
    for d in shape:gmatch("%d+") do sh[#sh + 1] = tonumber(d) end
    cases[#cases + 1] = {i = tonumber(i), kind = kind, shape = sh, groups = tonumber(groups), label = shape}
  end
end
f:close()

local function ratio(ref, t)
  return ref and ("%7.1fx"):format(ref / t) or "       "
end
print("ns.normalize in a Lua loop (the steady state: outputs into dropped outputs' memory), " ..
  "fp32, 1 thread, CPU ms")
print(("%-9s %-16s %10s %9s %9s %8s %8s"):format("case", "shape", "normscope", "numpy", "torch",
  "x numpy", "x torch"))
local g = ns.rng(1)
for _, c in ipairs(cases) do
  local x = g:standard_normal(c.shape):astype("fp32")
  local spec = {kind = c.kind, groups = c.groups, dtype = "fp32"}
  local best = math.huge
  for k = 1, 11 do
    local t0 = os.clock()
    local y = ns.normalize(x, spec)
    local dt = (os.clock() - t0) * 1e3
    if k > 2 and dt < best then best = dt end
    y = nil
  end
  local r = refs[c.i] or {}
  print(("%-9s %-16s %7.1f ms %6s ms %6s ms %8s %8s"):format(c.kind, "(" .. c.label .. ")", best,
    r[1] and ("%.1f"):format(r[1]) or "-", r[2] and ("%.1f"):format(r[2]) or "-",
    ratio(r[1], best), ratio(r[2], best)))
  x = nil
  collectgarbage()
end

-- chapter 004's stack at ns.stack's defaults (20 layers, width 256, batch 512), against the
-- numpy loop doing the same draws, products, normalization, statistics and tanh
-- (ref_timings.py's np_stack). CPU time of the process (BLAS threads included) on both
-- sides, 9 runs each, min and median. tanh "libm" is the C library's tanh, the bits of the
-- loop over the module's primitives; "fast" (the default) the vectorized one.
local function minmed(t)
  table.sort(t)
  return t[1], t[(#t + 1) // 2]
end
print("\nns.stack (20 layers, width 256, batch 512), CPU ms of the process, 9 runs: min / median")
print(("%-6s %-5s %17s %17s %9s"):format("norm", "tanh", "ns.stack", "numpy", "x numpy"))
for _, norm in ipairs{"none", "batch", "layer"} do
  for _, th in ipairs{"fast", "libm"} do
    local ts = {}
    for k = 1, 10 do
      local t0 = os.clock()
      ns.stack{norm = norm, tanh = th}
      local dt = (os.clock() - t0) * 1e3
      if k > 1 then ts[#ts + 1] = dt end
    end
    local a, b = minmed(ts)
    local r = refs["stack-" .. norm]
    print(("%-6s %-5s %7.1f / %5.1f ms %17s %9s"):format(norm, th, a, b,
      r and ("%7.1f / %5.1f ms"):format(r[1], r[2]) or "-", r and ("%8.2fx"):format(r[1] / a) or "-"))
  end
end

-- ns.spectrum of a 1e6-element layer norm from Lua: the closed form alone (check = false)
-- and with its checks along the ones, radial and a bulk eigenvector (JVP and central
-- differences of the map, O(n) each). CPU ms, 9 runs after one warm-up: min / median.
do
  local x = ns.rng(3):standard_normal({1000000})
  print("\nns.spectrum of a 1e6-element vector (layer norm), CPU ms, 9 runs: min / median")
  for _, chk in ipairs{false, true} do
    local ts = {}
    for k = 1, 10 do
      local t0 = os.clock()
      ns.spectrum(x, {kind = "layer"}, {check = chk})
      local dt = (os.clock() - t0) * 1e3
      if k > 1 then ts[#ts + 1] = dt end
    end
    local a, b = minmed(ts)
    print(("%-22s %7.2f / %7.2f ms"):format(chk and "closed form + checks" or "closed form only", a, b))
  end
end
