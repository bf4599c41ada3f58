-- panelfig.lua: plot(panel) of a headless explorer, the figure view's cells as text.
-- Every panel the error message lists draws in its box (exactly height lines, none wider
-- than width, pure ASCII with ascii=true, ANSI only with color=true); the spectrum's
-- titles and legends follow the state live; the batch and output figures equal the same
-- parts drawn by ns.plot from result()'s numbers and placed where the view puts them (a
-- reference path that does not go through the panel-figure code); the cursor option
-- brings its channel into the input's histograms; bad arguments are named.
local T = dofile((arg and arg[0] or "tests/lua/panelfig.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do t[#t + 1] = l end
  return t
end
-- cells i .. j (1-based, code points) of a line, trailing spaces removed
local function cells(l, i, j)
  local n = utf8.len(l)
  if i > n then return "" end
  local a = utf8.offset(l, i)
  local b = j < n and utf8.offset(l, j + 1) - 1 or #l
  return (l:sub(a, b):gsub(" +$", ""))
end

local e = ns.explorer()

-- the panel names, as the error for an unknown one lists them
local ok, msg = pcall(e.plot, e, "nope")
T.ok(not ok and msg:find("panel must be one of ", 1, true), "an unknown panel is an error", msg)
local names = {}
for nm in (msg:match("one of (.-), got") or ""):gmatch("[^, ]+") do names[#names + 1] = nm end
T.is(table.concat(names, " "), "input settings output spectrum batch train precision",
  "the error names every panel, in screen order")
T.ok(msg:find("got 'nope'", 1, true), "and what it got", msg)

for _, size in ipairs{{100, 30}, {78, 22}, {118, 38}} do
  local w, h = size[1], size[2]
  for _, p in ipairs(names) do
    local t = e:plot(p, {width = w, height = h})
    local ls = lines(t)
    local widest = 0
    for _, l in ipairs(ls) do widest = math.max(widest, utf8.len(l)) end
    T.ok(#ls <= h and widest <= w and ls[#ls] ~= "",
      string.format("%s at %dx%d: at most %d lines, none wider, no empty one last", p, w, h, h),
      string.format("%d lines, widest %d", #ls, widest))
    T.ok(widest > w / 2, string.format("%s at %dx%d draws across the box", p, w, h), t)
    local a = e:plot(p, {width = w, height = h, ascii = true})
    T.ok(not a:find("[\128-\255]"), string.format("%s at %dx%d: ascii=true is pure ASCII", p, w, h))
    T.is(#lines(a), #ls, string.format("%s at %dx%d: ASCII takes the same rows", p, w, h))
    T.ok(not t:find("\27", 1, true), p .. ": no escapes without color")
  end
end
T.ok(e:plot("batch", {color = true}):find("\27[", 1, true), "color=true adds ANSI colours")
T.is(e:plot(), e:plot("input"), "no panel: the default focus, input (as the screen starts)")
T.is(e:plot{width = 60, height = 12}, e:plot("input", {width = 60, height = 12}),
  "plot(opts) alone takes the options")
T.is(e:plot("settings"), e:plot("output"), "settings shows the output's figure")
local b = e:plot("output", {glyphs = "braille", width = 60, height = 14})
T.ok(#lines(b) > 8 and #lines(b) <= 14, "braille glyphs draw too", b)

-- the spectrum: the screen's titles and legends, live with the state
local s = e:plot("spectrum")
T.ok(s:find("eigenvalues of J against eps (closed form)", 1, true), "spectrum: the eigenvalue title")
-- narrow: the title drops its parenthesis rather than being cut inside it
local s80 = e:plot("spectrum", {width = 80})
T.ok(s80:find("eigenvalues of J against eps", 1, true) and not s80:find("(closed f", 1, true),
  "spectrum at width 80: the eigenvalue title whole, without '(closed form)'", s80)
T.ok(s:find("amplitude RMS N(a x) against a", 1, true), "spectrum: the amplitude title")
T.ok(s:find("eps = 1e-05 (now)", 1, true), "spectrum: the current eps marked in the legend")
T.ok(s:find("● eps 1e-05 (now)  ○ eps 0.001 (100x)", 1, true), "spectrum: the amplitude's two eps")
e:set{eps = 1e-6}
s = e:plot("spectrum")
T.ok(s:find("eps = 1e-06 (now)", 1, true) and s:find("○ eps 0.0001 (100x)", 1, true),
  "spectrum follows set{eps=}")
e:set{eps = 1e-5}
-- above the full Jacobian's limit the left half draws one statistic's closed form (it drew
-- nothing but "the spectrum is drawn up to 128" for a 4-D file)
do
  local big = ns.explorer()
  big:set{x = ns.rng(3):normal(1, 2, {16, 8, 4, 4}), kind = "batch"}
  local sb = big:plot("spectrum")
  T.ok(sb:find("statistic 1 of 8 (m 256): eigenvalues against eps", 1, true),
    "spectrum of 2048 elements: statistic 1 of 8's closed form, titled", sb)
  T.ok(not sb:find("drawn up to 128", 1, true), "  not the old note")
  T.ok(sb:find("radial eps/s^3", 1, true) and sb:find("bulk 1/s", 1, true), "  with its legend")
  local marks = 0
  for _, l in ipairs(lines(sb)) do
    local left = cells(l, 1, 60)
    for _ in left:gmatch("[○◆△●]") do marks = marks + 1 end
  end
  T.ok(marks >= 40, "  and its curves drawn (" .. marks .. " marks in the left half)")
  -- a row of more elements than the amplitude sweep takes: said whole, on three lines
  big:set{x = ns.rng(4):normal(0, 1, {1, 70000}), kind = "layer"}
  local sa = big:plot("spectrum", {width = 80})
  T.ok(sa:find("each x[i, ...] has 70000 elements,", 1, true) and sa:find("drawn up to 65536", 1, true),
    "amplitude over a 70000-element row: its limit said whole at width 80", sa)
  T.ok(sa:find("eigenvalues of J (m 70000) against eps", 1, true) or sa:find("stat 1/1 against eps", 1, true),
    "  and the one statistic's spectrum drawn beside it", sa)
end
T.ok(e:plot("precision"):find("relative error of var(x + offset) in fp64, acc fp64", 1, true),
  "precision: its title names the dtype")
e:set{dtype = "fp32"}
T.ok(e:plot("precision"):find("in fp32, acc fp32", 1, true), "precision follows set{dtype=}")
e:set{dtype = "fp64"}
local tr = e:plot("train", {width = 120, height = 36})
T.ok(tr:find("running mean of feature 1", 1, true) and tr:find("● eval mode (momentum)", 1, true),
  "train: running traces and the eval/train scatter")

-- batch: two heatmaps side by side, each what ns.plot.heatmap draws of result()'s matrices
local W, H = 100, 24
local half = (W - 2) // 2
local r = e:result()
local st = e:get()
local bt = string.format("BN down the columns (T %d, C %d)", st.target, st.companion)
local refs = {lines(ns.plot.heatmap(r.batch.bn, {width = half, height = H, title = bt})),
  lines(ns.plot.heatmap(r.batch.ln, {width = half, height = H, title = "LN across the rows"}))}
local got = lines(e:plot("batch", {width = W, height = H}))
local same = true
for i = 1, H do
  local left, right = cells(got[i] or "", 1, half), cells(got[i] or "", half + 3, W)
  if left ~= (refs[1][i] or ""):gsub(" +$", "") or right ~= (refs[2][i] or ""):gsub(" +$", "") then
    same = false
    T.ok(false, "batch row " .. i, got[i] .. "\n" .. (refs[1][i] or "") .. " | " .. (refs[2][i] or ""))
  end
end
T.ok(same, "batch: BN and LN heatmaps as ns.plot.heatmap draws them, side by side")

-- output: x, y and the two probes per coordinate, as ns.plot.scatter draws them
local x = st.x:flat()
local idx = {}
for i = 1, #x do idx[i] = i end
local yflat = r.y:flat()
local sh, sc = r.y_shift:flat(), r.y_scale:flat()
-- a probe equal to y (to a thousandth of the plotted range) joins y's legend entry, and y
-- is drawn last (explorer review N11); the element axis ticks on whole numbers
local lo, hi, ds, da = math.huge, -math.huge, 0, 0
for i = 1, #x do
  for _, v in ipairs({x[i], yflat[i], sh[i], sc[i]}) do lo, hi = math.min(lo, v), math.max(hi, v) end
  ds, da = math.max(ds, math.abs(sh[i] - yflat[i])), math.max(da, math.abs(sc[i] - yflat[i]))
end
local res = 1e-3 * (hi > lo and hi - lo or 1)
local lb, la = string.format("y(x%+g)", st.shift), string.format("y(%gx)", st.scale)
local series, labels, ylab = {x}, {"x"}, "y"
if ds > res then series[#series + 1], labels[#labels + 1] = sh, lb else ylab = ylab .. " = " .. lb end
if da > res then series[#series + 1], labels[#labels + 1] = sc, la else ylab = ylab .. " = " .. la end
series[#series + 1], labels[#labels + 1] = yflat, ylab
local ref = ns.plot.scatter(idx, series, {width = W, height = H,
  title = "x, y and the probes per coordinate", xlabel = "element", xint = true, labels = labels})
local out = e:plot("output", {width = W, height = H})
local rl, ol = lines(ref), lines(out)
local eq = #ol == #rl
for i = 1, #rl do eq = eq and (ol[i] or "") == (rl[i] or "") end
T.ok(eq, "output: the scatter of x, y, y(x+b), y(ax) that ns.plot.scatter draws", out .. "\n" .. ref)

-- the cursor's channel joins the input's histograms (x of shape (2, 6, 2, 2): row 9 of the
-- input panel's grid is example 1, channel 5)
local e6 = ns.explorer{x = ns.rng(7):normal(1, 2, {2, 6, 2, 2})}
local plain = e6:plot("input")
T.ok(plain:find("3 of 6 channels", 1, true) and not plain:find("(cursor)", 1, true),
  "input of 6 channels: the first 3 at width 100")
T.ok(e6:plot("input", {cursor = {9, 1}}):find("c5 (cursor)", 1, true),
  "opts.cursor brings its channel into the histograms")
T.ok(e6:plot("input", {width = 120}):find("4 of 6 channels", 1, true), "4 of them at width 120")

-- arguments
T.err("panel must be one of", "a number is no panel", function() return e:plot(3) end)
T.err("bad argument #1 to 'plot'", "the method's error names argument 1 (the panel)",
  function() return e:plot("nope") end)
T.err("opts.width must be an integer from 20 to 1000, got 5", "a width too small",
  function() return e:plot("input", {width = 5}) end)
T.err("opts.height must be an integer from 6 to 500", "a height too large",
  function() return e:plot("input", {height = 501}) end)
T.err("unknown option 'wide'", "an unknown option", function() return e:plot("input", {wide = 1}) end)
T.err("opts.glyphs must be one of", "unknown glyphs",
  function() return e:plot("input", {glyphs = "dots"}) end)
T.err("disagree", "ascii and braille at once",
  function() return e:plot("input", {ascii = true, glyphs = "braille"}) end)
T.err("opts.cursor[1] (the row) must be an integer >= 1", "a cursor row of 0",
  function() return e:plot("input", {cursor = {0, 1}}) end)
T.err("opts.cursor must be {row, col}", "a cursor that is not a pair",
  function() return e:plot("input", {cursor = 3}) end)
T.err("opts must be a table", "opts not a table", function() return e:plot("input", 7) end)
T.err("opts.color must be a boolean", "color not a boolean",
  function() return e:plot("input", {color = 1}) end)
-- headless, set{figure=} is a view hint like focus: accepted and ignored
T.ok(pcall(e.set, e, {figure = true, focus = "batch"}), "set{figure=true} runs headless")

T.done()
