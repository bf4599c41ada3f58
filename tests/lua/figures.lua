-- figures.lua: the chapters' figures drawn with ns.plot, each in a few lines, and the
-- numbers behind them checked against claims.tsv (so the pictures show the chapters'
-- data). Run it to see them: `normscope run tests/lua/figures.lua` (the figures print
-- as TAP comments; NS_FIGURES_PLAIN=1 prints them bare).
local T = dofile((arg and arg[0] or "tests/lua/figures.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local P = ns.plot
local claims = T.claims()
local plain = os.getenv("NS_FIGURES_PLAIN") == "1"

local function show(title, s)
  if plain then
    print(title .. "\n" .. s .. "\n")
  else
    T.diag(title)
    for l in (s .. "\n"):gmatch("(.-)\n") do print("#   " .. l) end
  end
end

-- Figures side by side: each padded to its widest line, gap spaces between.
local function beside(gap, ...)
  local cols, widths, rows = {}, {}, 0
  for k, s in ipairs{...} do
    cols[k], widths[k] = {}, 0
    for l in (s .. "\n"):gmatch("(.-)\n") do
      cols[k][#cols[k] + 1] = l
      widths[k] = math.max(widths[k], utf8.len(l))
    end
    rows = math.max(rows, #cols[k])
  end
  local out = {}
  for r = 1, rows do
    local parts = {}
    for k = 1, #cols do
      local l = cols[k][r] or ""
      parts[k] = l .. string.rep(" ", (k < #cols) and (widths[k] - utf8.len(l) + gap) or 0)
    end
    out[r] = table.concat(parts):gsub(" +$", "")
  end
  return table.concat(out, "\n")
end

local function row_numbers(fig, label)
  for l in (fig .. "\n"):gmatch("(.-)\n") do
    if l:match("^" .. label .. " ") then
      local t = {}
      for num in l:sub(#label + 1):gmatch("%S+") do t[#t + 1] = tonumber(num) end
      return t
    end
  end
end

-- 1. Batch norm vs layer norm of the running 5 x 4 matrix (002, Fig. 13.1)
local X = ns.tensor{{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local XB = ns.normalize(X, {kind = "batch"})
local XL = ns.normalize(X, {kind = "layer"})
local fX = P.heatmap(X, {width = 24, title = "X", legend = false})
local fB = P.heatmap(XB, {width = 24, title = "batch: down columns", legend = false})
local fL = P.heatmap(XL, {width = 24, title = "layer: across rows", legend = false})
local fig1 = beside(2, fX, fB, fL)
show("Fig. 13.1: the same matrix, two reference sets", fig1)
T.claim(claims, "n-bn-x31", XB:totable()[3][1])
T.claim(claims, "n-ln-row1-col3", XL:totable()[1][3])
local r3 = row_numbers(fB, "3")
T.ok(r3 and math.abs(r3[1] - XB:totable()[3][1]) <= 0.05, "the batch panel prints X31 = -0.3",
  fB)
T.ok(utf8.len(fig1:match("[^\n]*")) <= 80, "three panels fit 80 columns")

-- 2. Centring, scaling and the affine step of (2, 4, 7, 11, 16) as aligned dot plots (Fig. 13.2)
local v = ns.tensor{2, 4, 7, 11, 16}
local cen = v - v:mean()
local std = ns.normalize(v, {eps = 0})
local aff = ns.normalize(v, {eps = 0, gamma = 1.5, beta = 0.8})
local fig2 = P.scatter({v:flat(), cen:flat(), std:flat(), aff:flat()},
  {{4, 4, 4, 4, 4}, {3, 3, 3, 3, 3}, {2, 2, 2, 2, 2}, {1, 1, 1, 1, 1}},
  {width = 64, height = 12, labels = {"original", "centred", "standardised", "1.5 z + 0.8"},
   title = "centring moves, scaling shrinks, the affine step restores", range = {0.5, 4.5}})
show("Fig. 13.2: dot plots", fig2)
T.ok(fig2:find("standardised", 1, true), "Fig. 13.2 legend names the four steps")

-- 3. Batch-size noise as box plots: 600 batch means per size (Fig. 13.3, default_rng(124))
local g = ns.rng(124)
local sizes = {2, 4, 8, 16, 32, 64, 128}
local means, labels = {}, {}
for k, b in ipairs(sizes) do
  means[k] = g:normal(3, 2, {600, b}):mean(2):flat()
  labels[k] = tostring(b)
end
local fig3 = P.box(means, {labels = labels, width = 70, height = 14,
  title = "sampling noise in batch statistics", xlabel = "estimated batch mean",
  ylabel = "batch size", ref = {3, "population mean 3"}})
show("Fig. 13.3: batch-size noise", fig3)
T.claim(claims, "n-batchmean-sd-2", ns.tensor(means[1]):std())
T.claim(claims, "n-batchmean-sd-128", ns.tensor(means[7]):std())
T.ok(fig3:find("\n128 ", 1, true) and fig3:find("\n  2 ", 1, true), "one row per batch size", fig3)
-- the population mean is one dashed line through the rows, in the column of 3 on the axis
-- (half-way between the ticks at 2 and 4; where a median sits on it, the median shows)
do
  local cols, ticks, labels_row = {}, {}, nil
  local lines = {}
  for l in (fig3 .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  for i, l in ipairs(lines) do
    if l:match("^ *%d+ ") then
      local p = l:find("┊", 1, true)
      if p then cols[#cols + 1] = utf8.len(l:sub(1, p - 1)) end
    elseif l:match("^ +┬") then
      local c = 0
      for _, cp in utf8.codes(l) do
        if cp == 0x252c then ticks[#ticks + 1] = c end
        c = c + 1
      end
      labels_row = lines[i + 1]
    end
  end
  -- the tick labels are -2 0 2 4 6 8: ticks 3 and 4 are the values 2 and 4
  local want = labels_row and labels_row:match("^%s*%-2%s+0%s+2%s+4") and (ticks[3] + ticks[4]) / 2
  local straight = #cols >= 3
  for _, c in ipairs(cols) do straight = straight and want and math.abs(c - want) <= 0.5 end
  T.ok(straight, "the population line crosses the rows at 3 on the axis (" .. #cols ..
    " rows show it, the others' medians cover it)", fig3)
  T.ok(fig3:find("┊ population mean 3", 1, true), "and the legend names it", fig3)
end

-- 4. Training vs shifted evaluation, overlaid histograms and the mean outputs (Fig. 13.4)
local h = ns.rng(90)
local train, eval = h:normal(0, 1, 1000), h:normal(2, 1, 300)
local fig4a = P.hist({train, eval}, {labels = {"training", "evaluation"}, density = true,
  bins = 24, width = 60, height = 12, title = "input distributions", xlabel = "activation"})
local current = ns.normalize(eval, {eps = 1e-5}):mean()
local stored = ((eval - train:mean()) / math.sqrt(train:var() + 1e-5)):mean()
local fig4b = P.bars({current, stored}, {labels = {"current batch", "stored training"},
  width = 60, title = "mean normalised output"})
show("Fig. 13.4: the reference changes the interpretation", fig4a .. "\n\n" .. fig4b)
T.claim(claims, "n-eval-stored-mean", stored)
T.ok(fig4a:find("training (n=1000)", 1, true) and fig4a:find("evaluation (n=300)", 1, true),
  "both histograms are named with their sizes", fig4a)

-- 5. Layer, 2-group and RMS norm of one 8-feature vector (Fig. 13.5)
local f = ns.tensor{{1, 2, 3, 8, 10, 12, 18, 20}}
local fam = ns.concat({f, ns.normalize(f, {kind = "layer"}),
  ns.normalize(f, {kind = "group", groups = 2}), (ns.normalize(f, {kind = "rms"}))}, 1)
local fig5 = P.heatmap(fam, {width = 60, labels = {rows = {"x", "layer", "group 2", "rms"}},
  title = "one vector, four normalisations"})
show("Fig. 13.5: the family", fig5)
T.claim(claims, "n-family-gn2-f4", fam:totable()[3][4])

-- 6. The eps/scale transition: amplitude of N(a x) over its eps = 0 limit (001 s4, log axis)
local x = ns.tensor{1, 2, 4}
local a_s, amp = {}, {{}, {}}
for i = 1, 41 do
  local a = 10 ^ (-4 + 4 * (i - 1) / 40)
  a_s[i] = a
  for k, eps in ipairs{1e-5, 1e-2} do
    local y = ns.normalize(x * a, {eps = eps})
    amp[k][i] = math.sqrt((y * y):mean()) -- RMS of the output; 1 when eps = 0
  end
end
local fig6 = P.lines({{x = a_s, y = amp[1], label = "eps 1e-5"}, {x = a_s, y = amp[2], label = "eps 1e-2"}},
  {log = "x", width = 64, height = 14, title = "scale invariance is approximate",
   xlabel = "input scale a", ylabel = "RMS of N(a x)"})
show("The eps/scale transition (001 s4)", fig6)
local at = ns.normalize(x * 1e-3, {eps = 1e-5})
T.claim(claims, "r4-small-scale-amplitude", math.sqrt((at * at):mean()))
T.ok(fig6:find("1e-4", 1, true) and fig6:find("0.01", 1, true) and fig6:find("\n", 1, true),
  "the a axis ticks at decades", fig6)

T.done()
