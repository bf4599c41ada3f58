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
