-- io.lua: ns.save / ns.load round trips (.npy keeps the dtype, .csv), a .npy file built
-- byte by byte here, and errors that name the path.
local T = dofile((arg and arg[0] or "tests/lua/io.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

local dir = os.tmpname()
os.remove(dir)
local base = dir .. "-nsl"
local function path(name) return base .. "-" .. name end
local made = {}
local function tmp(name) local p = path(name); made[#made + 1] = p; return p end

local t = ns.tensor{{1.5, -2, 3}, {4, 5e-300, 1 / 3}}
local p = tmp("a.npy")
T.is(ns.save(p, t), true, "save .npy")
local back = ns.load(p)
T.is(back:dtype(), "fp64", "fp64 stays fp64")
T.is(table.concat(back:shape(), ","), "2,3", "shape kept")
T.all_close(back, t:flat(), 0, "values bit-exact through .npy")

for _, dt in ipairs{"fp32", "fp16"} do
  local q = tmp(dt .. ".npy")
  local tt = t:astype(dt)
  ns.save(q, tt)
  local b2 = ns.load(q)
  T.is(b2:dtype(), dt, dt .. " file keeps its dtype")
  T.all_close(b2, tt:flat(), 0, dt .. " values exact")
end
local r4 = ns.tensor{{{{1, 2}}, {{3, 4}}}}
ns.save(tmp("r4.npy"), r4)
T.is(table.concat(ns.load(path("r4.npy")):shape(), ","), "1,2,1,2", "rank 4 round trip")

local c = tmp("a.csv")
ns.save(c, t)
local bc = ns.load(c)
T.all_close(bc, t:flat(), 0, "CSV round trip with %.17g is exact")
T.is(#bc:shape(), 2, "CSV loads rank 2")
local f = io.open(tmp("h.csv"), "w")
f:write("a,b\n1, 2\n# comment\n\n3,4\n")
f:close()
T.all_close(ns.load(path("h.csv")), {1, 2, 3, 4}, 0, "CSV with header, comments and blanks")
-- the skipped header is said, as the screen's file open says it (explorer review: ns.load
-- dropped it without a word): a second result, only when something was skipped
local _, note = ns.load(path("h.csv"))
T.is(note, path("h.csv") .. ": its line 1, a,b, is a header of names: skipped",
  "ns.load's second result names the header line it skipped")
T.is(select("#", ns.load(c)), 1, "a CSV without a header: the tensor alone")
T.is(select("#", ns.load(p)), 1, "a .npy file: the tensor alone")
f = io.open(tmp("h2.csv"), "w")
f:write("# units\n\nx,y\n1,2\n")
f:close()
_, note = ns.load(path("h2.csv"))
T.is(note, path("h2.csv") .. ": its line 3, x,y, is a header of names: skipped",
  "the note counts the file's lines (comments and blanks before the header)")
-- set{x = {file = ...}} says it too (it skipped the header without a word): its results,
-- a string per file that skipped something, with the field first
local ex = ns.explorer()
T.is(ex:set{x = {file = path("h.csv")}},
  "x: " .. path("h.csv") .. ": its line 1, a,b, is a header of names: skipped",
  "set{x = {file = CSV}} returns the note of the header it skipped")
T.all_close(ex:get().x, {1, 2, 3, 4}, 0, "  and x holds the numbers below it")
-- ns.audit of the same file says it too (it skipped the header without a word), as r.note
local au = ns.audit(path("h.csv"), {kind = "layer"})
T.is(au.note, path("h.csv") .. ": its line 1, a,b, is a header of names: skipped",
  "ns.audit(CSV) names the header it skipped in r.note")
T.is(ns.audit(c, {kind = "layer"}).note, nil, "  a CSV without a header: no note")
T.is(select("#", ex:set{x = {file = c}}), 0, "  a CSV without a header: no result")
T.is(select("#", ex:set{eps = 0}), 0, "  nor a set{} without a file")

-- a .npy v1 file written here from the format description: '<f4', shape (3,)
local header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
local total = 10 + #header + 1
local pad = (64 - total % 64) % 64
header = header .. string.rep(" ", pad) .. "\n"
local bytes = "\147NUMPY\1\0" .. string.pack("<I2", #header) .. header ..
  string.pack("<fff", 0.5, -1.25, 3)
f = io.open(tmp("hand.npy"), "wb")
f:write(bytes)
f:close()
local h = ns.load(path("hand.npy"))
T.is(h:dtype(), "fp32", "'<f4' file loads as fp32")
T.all_close(h, {0.5, -1.25, 3}, 0, "hand-made .npy values")
-- integer and boolean files load as fp64 and say so (explorer review: an int32 file opened
-- as fp64 without a word); a float file says nothing
local function npy_bytes(descr, data)
  local hd = "{'descr': '" .. descr .. "', 'fortran_order': False, 'shape': (3,), }"
  hd = hd .. string.rep(" ", (64 - (10 + #hd + 1) % 64) % 64) .. "\n"
  return "\147NUMPY\1\0" .. string.pack("<I2", #hd) .. hd .. data
end
for _, c in ipairs{{"<i4", string.pack("<i4i4i4", 7, -2, 5), "int32", {7, -2, 5}},
                   {"|u1", string.pack("BBB", 0, 200, 9), "uint8", {0, 200, 9}},
                   {"|b1", string.pack("BBB", 1, 0, 1), "bool", {1, 0, 1}}} do
  local q = tmp(c[3] .. ".npy")
  f = io.open(q, "wb")
  f:write(npy_bytes(c[1], c[2]))
  f:close()
  local v, why = ns.load(q)
  T.all_close(v, c[4], 0, "'" .. c[1] .. "' loads its values")
  T.ok(why and why:find(q .. ": its " .. c[3] .. " values are read as fp64", 1, true),
    "'" .. c[1] .. "': ns.load's note says the " .. c[3] .. " values are read as fp64", why)
end
T.is(select("#", ns.load(path("hand.npy"))), 1, "a float .npy file: no note")
f = io.open(tmp("trunc.npy"), "wb")
f:write(bytes:sub(1, #bytes - 2))
f:close()
T.err(path("trunc.npy"), "truncated file refused, naming the path", ns.load, path("trunc.npy"))
f = io.open(tmp("magic.npy"), "wb")
f:write("not a numpy file at all")
f:close()
T.err(path("magic.npy"), "bad magic refused, naming the path", ns.load, path("magic.npy"))
f = io.open(tmp("bad.csv"), "w")
f:write("1,2\n3\n")
f:close()
T.err(path("bad.csv"), "ragged CSV refused, naming the path", ns.load, path("bad.csv"))

T.err(path("missing.npy"), "missing file named", ns.load, path("missing.npy"))
T.err("No such file", "missing file reason", ns.load, path("missing.npy"))
T.err("must end in .npy, .csv or .safetensors", "unknown extension", ns.load, path("x.txt"))
T.err("path must be a string", "path of the wrong type", ns.load, 5)
T.err("rank 1 or 2", "CSV of rank 3 refused", ns.save, path("r3.csv"), ns.zeros{1, 1, 2})
T.err("/nonexistent-dir-nsl/x.npy", "unwritable path named", ns.save, "/nonexistent-dir-nsl/x.npy", t)
T.err("t must be a tensor", "save of a non-tensor", ns.save, path("y.npy"), "x")
-- a directory whose name ends in .npy: said plainly (not "file too large")
local d = path("dir.npy")
if os.execute("mkdir " .. d) then
  T.err(d .. ": is a directory", "a directory is not loaded", ns.load, d)
  os.remove(d)
else
  T.ok(true, "a directory is not loaded # SKIP mkdir failed")
end

for _, q in ipairs(made) do os.remove(q) end
T.done()
