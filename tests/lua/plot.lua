-- plot.lua: ns.plot from Lua: the argument forms (tensors and arrays give the same
-- figure), every option, argument errors that name what was wrong, degenerate data in
-- words, and random properties (the box, pure ASCII, no escapes without color, the
-- legend names every series, the blank braille cell never printed).
local T = dofile((arg and arg[0] or "tests/lua/plot.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local P = ns.plot

T.ok(type(P) == "table", "ns.plot is a table")
for _, k in ipairs{"heatmap", "lines", "scatter", "bars", "box", "hist"} do
  T.ok(type(P[k]) == "function", "ns.plot." .. k .. " is a function")
end

local function lines_of(s)
  local t = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do t[#t + 1] = l end
  return t
end

-- rows and widest row in code points (each one terminal column: C tests check wcwidth)
local function box_of(s)
  local rows, w = 0, 0
  for _, l in ipairs(lines_of(s)) do
    rows = rows + 1
    local n = utf8.len(l)
    if not n then return rows, math.huge end
    if n > w then w = n end
  end
  return rows, w
end

local function has(s, words) return s:find(words, 1, true) ~= nil end
local function flat(s) return (s:gsub("\n", " ")) end

-- ---- forms of the arguments ----------------------------------------------------------
local M = {{1, -2, 3}, {-4, 5, -6}}
T.is(P.heatmap(ns.tensor(M)), P.heatmap(M), "heatmap: tensor and nested array draw alike")
T.is(P.heatmap({1, 2, 3}), P.heatmap({{1, 2, 3}}), "heatmap: a vector is one row")
T.is(P.bars(ns.tensor{1, -2, 3}), P.bars({1, -2, 3}), "bars: tensor and array")
T.is(P.lines({1, 4, 9}), P.lines({{y = {1, 4, 9}}}), "lines: a y array is one series")
T.is(P.lines({1, 4, 9}), P.lines({y = {1, 4, 9}, x = {1, 2, 3}}),
  "lines: one {x=, y=} table; x defaults to 1..n")
T.is(P.lines(ns.tensor{{1, 3}, {2, 2}, {3, 1}}), P.lines({{1, 2, 3}, {3, 2, 1}}),
  "lines: a rank-2 tensor is one series per column")
T.is(P.lines({{y = {1, 2}, label = "a"}}), P.lines({{1, 2}}, {labels = {"a"}}),
  "lines: label= and opts.labels agree")
T.is(P.scatter(ns.tensor{1, 2, 3}, ns.tensor{3, 1, 2}), P.scatter({1, 2, 3}, {3, 1, 2}),
  "scatter: tensors and arrays")
T.is(P.scatter({1, 2, 3}, {{3, 1, 2}, {1, 1, 1}}),
  P.scatter({{1, 2, 3}, {1, 2, 3}}, {{3, 1, 2}, {1, 1, 1}}),
  "scatter: one xs for all series, or one per series")
T.is(P.box(ns.tensor{{1, 4}, {2, 5}, {3, 6}}), P.box({{1, 2, 3}, {4, 5, 6}}),
  "box: a rank-2 tensor is one group per column")
T.is(P.box({1, 2, 3}), P.box({{1, 2, 3}}), "box: a flat array is one group")
T.is(P.hist({ns.tensor{1, 2, 2}, {3, 3}}), P.hist({{1, 2, 2}, {3, 3}}),
  "hist: sets as tensors or arrays")
T.is(P.hist(ns.tensor{{1, 3}, {2, 4}}), P.hist({{1, 2}, {3, 4}}),
  "hist: a rank-2 tensor is one set per column")
T.err("t:reshape{#t} makes one set", "hist: too many columns says how to plot all values",
  P.hist, ns.zeros{2, 7})
T.err("a tensor must have rank 1 or 2, got rank 3", "box: rank 3 refused", P.box, ns.zeros{2, 2, 2})
T.err("a tensor must have rank 1 or 2, got rank 3", "lines: rank 3 refused", P.lines,
  ns.zeros{2, 2, 2})
local s = P.bars({1, 2})
T.ok(s:sub(-1) ~= "\n", "the text has no final newline")

-- ---- options -------------------------------------------------------------------------
local up = {}
for i = 1, 40 do up[i] = i * i end
local txt = P.lines(up, {width = 50, height = 12, title = "squares", xlabel = "i", ylabel = "i^2"})
local r, w = box_of(txt)
T.ok(r <= 12 and w <= 50, "lines: within width and height", txt)
T.ok(has(txt, "squares") and has(txt, "i^2") and has(txt, " i"), "title, xlabel, ylabel shown")
T.ok(txt:find("[\128-\255]") ~= nil, "blocks use Unicode by default")
local a = P.lines(up, {ascii = true})
T.ok(not a:find("[\128-\255]"), "ascii=true is pure ASCII", a)
T.is(P.lines(up, {glyphs = "ascii"}), a, "glyphs='ascii' is ascii=true")
local b = P.lines(up, {glyphs = "braille"})
T.ok(b:find("\226[\160-\163]") ~= nil, "braille uses the braille block", b)
T.ok(not b:find("\226\160\128", 1, true), "the blank braille cell is never printed")
local c = P.bars({1, -2}, {color = true})
T.ok(c:find("\27[", 1, true) ~= nil, "color=true adds ANSI escapes")
T.is((c:gsub("\27%[[%d;]*m", ""):gsub(" +\n", "\n"):gsub(" +$", "")), P.bars({1, -2}),
  "color=true is the plain text plus escapes")
T.ok(not P.bars({1, -2}):find("\27", 1, true), "no escapes by default")
local two = P.lines({{1, 2, 3}, {3, 2, 1}}, {labels = {"rise", "fall"}})
T.ok(has(two, "rise") and has(two, "fall"), "the legend names both series", two)
T.ok(not has(P.lines({{1, 2, 3}, {3, 2, 1}}, {labels = {"rise", "fall"}, legend = false}), "rise"),
  "legend=false hides it")
T.ok(has(P.lines({1, 2, 3}, {labels = {"only"}}), "only"), "a labelled single series has a legend")
T.ok(has(P.bars({1, 2}, {range = {0, 10}}), "10"), "range fixes the value axis")
local lg = {}
for i = 1, 30 do lg[i] = 10 ^ (-4 + 4 * (i - 1) / 29) end
local logt = P.lines({{x = lg, y = lg}}, {log = "xy", width = 60})
T.ok(has(logt, "1e-4") and has(logt, "0.001") and has(logt, "0.01"), "log axes tick at decades", logt)
T.ok(has(P.hist({1, 1, 2, 2, 3}, {bins = 3, density = true}), "0.5"), "hist: density heights")
T.ok(has(P.heatmap(M, {labels = {rows = {"r1", "r2"}, cols = {"c1", "c2", "c3"}}}), "r2"),
  "heatmap: row and column labels")
T.ok(has(P.heatmap(M, {values = false, width = 40}), "sign"), "heatmap: values=false draws glyphs")
T.ok(has(P.box({{1, 2, 3, 4, 50}}, {labels = {"g"}}), "outliers"), "box: a legend of its glyphs")
-- the reference line: the same picture as the C golden (1..9 and 2,3,4,5,20, ref 6)
do
  local want = table.concat({
    "a   ├───▒▒▒█▒┊▒▒───┤",
    "b     ├─▒█▒▒ ┊                         •",
    "  ┬────────┬─────────┬────────┬────────┬",
    "  0        5        10       15       20",
    "├─┤ whiskers (1.5 IQR)  ▒ quartiles",
    "█ median  • outliers  ┊ population 6"}, "\n")
  local groups = {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 3, 4, 5, 20}}
  T.is(P.box(groups, {labels = {"a", "b"}, width = 40, height = 8, ref = {6, "population 6"}}),
    want, "box: opts.ref = {value, label} draws the line and names it")
  local plain = P.box(groups, {width = 40, height = 8, ref = 6})
  T.ok(has(plain, "reference 6") and has(plain, "┊"), "box: opts.ref = value: 'reference 6'",
    plain)
  T.ok(has(P.box(groups, {width = 40, ascii = true, ref = 6}), ": reference 6"),
    "box: the ASCII reference line is ':'")
  T.ok(has(P.box(groups, {width = 40, ref = 50}), " 60"), "box: a far reference (50) widens the axis (to 60)")
  T.ok(not has(P.box(groups, {width = 40}), "┊"), "box: no reference without opts.ref")
end

-- ---- degenerate data: never an error, always words ---------------------------------
local nan, inf = 0 / 0, 1 / 0
local cases = {
  {"heatmap", {{}}, "nothing to plot"}, {"heatmap", {{nan, 1}}, "1 NaN value shown as ?"},
  {"heatmap", {{0, 0}}, "every value is 0"},
  {"lines", {{}}, "nothing to plot"}, {"lines", {{nan, nan}}, "2 NaN points left out"},
  {"lines", {{1, inf, 3}}, "1 Inf point left out"}, {"lines", {{5, 5, 5}}, "every y is 5"},
  {"lines", {{7}}, "7"}, {"lines", {{-1, 1, 10}, {log = "y"}}, "1 point <= 0 left out"},
  {"scatter", {{}, {}}, "nothing to plot"}, {"scatter", {{1, 2}, {nan, 1}}, "1 NaN point"},
  {"bars", {{}}, "nothing to plot"}, {"bars", {{nan}}, "every value is NaN"},
  {"bars", {{0, 0}}, "every value is 0"}, {"bars", {{1, -inf}}, "1 Inf value cut at the edge"},
  {"box", {{}}, "nothing to plot"}, {"box", {{{nan, 1, 2}}}, "1 NaN value left out"},
  {"box", {{{}, {1}}}, "(no values)"},
  {"box", {{{1, 2}}, {ref = 5, range = {0, 3}}}, "reference line (5) lies outside the range"},
  {"box", {{{1, 2}}, {ref = -1, log = true}}, "left out: <= 0 on a log axis"},
  {"hist", {{}}, "nothing to plot"}, {"hist", {{2, 2, 2}}, "every value is 2"},
  {"hist", {{1, nan, inf}}, "1 NaN value left out; 1 Inf value left out"},
  {"hist", {{1, 2, 30}, {range = {0, 10}}}, "1 value outside the range left out"},
}
for _, k in ipairs(cases) do
  local ok, out = pcall(P[k[1]], table.unpack(k[2]))
  T.ok(ok and has(flat(out), k[3]), k[1] .. ": says '" .. k[3] .. "'", tostring(out))
end

-- ---- argument errors name what was wrong ----------------------------------------------
local errs = {
  {"unknown option 'widht'", P.bars, {1}, {widht = 3}},
  {"opts.width must be an integer from 10 to 1000", P.bars, {1}, {width = 5}},
  {"opts.height must be an integer from 3 to 500", P.bars, {1}, {height = 1.5}},
  {"opts.ascii must be a boolean", P.bars, {1}, {ascii = 1}},
  {"opts.color must be a boolean", P.bars, {1}, {color = "yes"}},
  {"opts.glyphs must be one of", P.lines, {1}, {glyphs = "dots"}},
  {"disagree", P.lines, {1}, {ascii = true, glyphs = "braille"}},
  {"opts.title must be a string", P.bars, {1}, {title = 3}},
  {"opts.labels[2] must be a string", P.bars, {1, 2}, {labels = {"a", {}}}},
  {"opts.labels must be an array of strings", P.bars, {1}, {labels = "a"}},
  {"opts.legend must be a boolean", P.bars, {1}, {legend = 1}},
  {"opts.labels must be an array of strings, got a key 'rows'", P.bars, {1},
   {labels = {rows = {"a"}}}},
  {"opts.range must be {lo, hi}", P.bars, {1}, {range = {1}}},
  {"opts.range must be two finite numbers lo < hi", P.bars, {1}, {range = {2, 1}}},
  {"opts.range on a log axis must be positive", P.hist, {1}, {range = {0, 1}, log = true}},
  {"opts.log does not apply to bars", P.bars, {1}, {log = true}},
  {"opts.log must be true, false or 'x'", P.hist, {1}, {log = "y"}},
  {"opts.bins does not apply to lines", P.lines, {1}, {bins = 3}},
  {"opts.bins must be an integer from 1 to 1000", P.hist, {1}, {bins = 0}},
  {"opts.values does not apply to bars", P.bars, {1}, {values = true}},
  {"opts must be a table", P.bars, {1}, 5},
  {"t must be a matrix (rank 1 or 2), got rank 3", P.heatmap, ns.zeros{2, 2, 2}},
  {"series: at most 6 series, got 7", P.lines, {{1}, {1}, {1}, {1}, {1}, {1}, {1}}},
  {"series[1] has an unknown field", P.lines, {{y = {1}, z = 2}}},
  {"series[1].x has 2 values but y has 1", P.lines, {{y = {1}, x = {1, 2}}}},
  {"series[2].label must be a string", P.lines, {{1}, {y = {1}, label = 3}}},
  {"series must be an array", P.lines, "abc"},
  {"ys has 2 values but xs has 3", P.scatter, {1, 2, 3}, {1, 2}},
  {"xs has 1 arrays but ys has 2", P.scatter, {{1}}, {{1}, {2}}},
  {"values must be", P.bars, "x"},
  {"groups must be an array", P.box, 3},
  {"opts.ref must be a number or {value, label}", P.box, {1}, {ref = "3"}},
  {"opts.ref[1] must be a number", P.box, {1}, {ref = {"a"}}},
  {"opts.ref[2] must be a string", P.box, {1}, {ref = {1, 2}}},
  {"opts.ref must be finite", P.box, {1}, {ref = 0 / 0}},
  {"opts.ref does not apply to bars", P.bars, {1}, {ref = 1}},
  {"values: at most 6 sets, got 7", P.hist, {{1}, {1}, {1}, {1}, {1}, {1}, {1}}},
  {"opts.labels has an unknown field", P.heatmap, {1}, {labels = {row = {"a"}}}},
}
for _, e in ipairs(errs) do
  T.err(e[1], "error: " .. e[1], e[2], table.unpack(e, 3))
end
T.err("normscope.plot.bars", "errors name the function", P.bars, {1}, {width = 1})

-- a small fuzz: garbage in every position must give an error message, never a crash
local junk = {nil, true, 0, -1, 1e308, 0 / 0, "", "x", {}, {{}}, {1, "a"}, {{1}, 2},
  ns.tensor{1, 2}, ns.zeros{2, 2, 2, 2}, {width = "w"}, {range = {0 / 0, 1}}, print}
local state = 7
local function pick()
  state = (state * 1103515245 + 12345) % 2147483648
  return junk[state % #junk + 1]
end
local bad = 0
for i = 1, 600 do
  local names = {"heatmap", "lines", "scatter", "bars", "box", "hist"}
  local f = P[names[i % 6 + 1]]
  local ok, msg = pcall(f, pick(), pick(), pick())
  if not ok and (type(msg) ~= "string" or not msg:find("bad argument", 1, true)) then
    bad = bad + 1
    if bad == 1 then T.diag("unexpected error: " .. tostring(msg)) end
  elseif ok and type(msg) ~= "string" then
    bad = bad + 1
  end
end
T.is(bad, 0, "600 calls with garbage: a string or an argument error each time")

-- ---- random properties ---------------------------------------------------------------
math.randomseed(20261201)
local kinds = {"heatmap", "lines", "scatter", "bars", "box", "hist"}
local fails = {box = 0, ascii = 0, esc = 0, legend = 0, braille = 0}
local N = 300
for t = 1, N do
  local kind = kinds[math.random(#kinds)]
  local opts = {width = math.random(10, 120), height = math.random(3, 40)}
  local g = math.random(3)
  if g == 1 then opts.ascii = true elseif g == 2 then opts.glyphs = "braille" end
  local nser = math.random(1, kind == "bars" and 1 or 6)
  local n = math.random(0, 200)
  local function data()
    local v = {}
    for i = 1, n do
      local r = math.random(30)
      v[i] = r == 1 and 0 / 0 or r == 2 and 1 / 0 or (math.random() - 0.4) * 10 ^ math.random(-3, 3)
    end
    return v
  end
  local sets, labels = {}, {}
  for k = 1, nser do
    sets[k] = data()
    labels[k] = "name" .. k
  end
  opts.labels = labels
  local out
  if kind == "heatmap" then
    out = P.heatmap(n > 0 and sets or {}, opts)
  elseif kind == "lines" then
    out = P.lines(sets, opts)
  elseif kind == "scatter" then
    local xs = {}
    for i = 1, n do xs[i] = i end
    out = P.scatter(xs, sets, opts)
  elseif kind == "bars" then
    out = P.bars(sets[1], opts)
  elseif kind == "box" then
    out = P.box(sets, opts)
  else
    out = P.hist(sets, opts)
  end
  local rows, width = box_of(out)
  if rows > opts.height or width > opts.width then
    fails.box = fails.box + 1
    if fails.box == 1 then T.diag(kind .. " exceeds " .. opts.width .. "x" .. opts.height .. ":\n" .. out) end
  end
  if opts.ascii and out:find("[\128-\255]") then fails.ascii = fails.ascii + 1 end
  if out:find("[%c]", 1) and out:gsub("\n", ""):find("%c") then fails.esc = fails.esc + 1 end
  if out:find("\226\160\128", 1, true) then fails.braille = fails.braille + 1 end
  local f = flat(out)
  if (kind == "lines" or kind == "scatter" or kind == "hist") and opts.height >= 16 and
    opts.width >= 40 and not has(f, "nothing to plot") and not has(f, "too small") then
    for k = 1, nser do
      if not has(out, labels[k]) then
        fails.legend = fails.legend + 1
        if fails.legend == 1 then T.diag("legend lacks " .. labels[k] .. ":\n" .. out) end
        break
      end
    end
  end
end
T.is(fails.box, 0, "random figures stay within width x height (" .. N .. ")")
T.is(fails.ascii, 0, "random ASCII figures are pure ASCII")
T.is(fails.esc, 0, "random figures without color have no control bytes")
T.is(fails.braille, 0, "the blank braille cell never appears")
T.is(fails.legend, 0, "the legend names every series")

T.done()
