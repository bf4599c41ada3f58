-- Text 002 (the textbook chapter "Normalisation"), "The problem" with its subsection "A
-- visible reference choice" (Fig. 13.1) and the concept box: the running matrix X under
-- batch norm (down columns) and layer norm (across rows).
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}

-- Row means and column standard deviations of a matrix, as short strings.
local function fmt(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = string.format("%.2f", v) end
  return table.concat(out, ", ")
end

-- The figure: X, then the batch panel's two normalized matrices, one heatmap each.
local function heat(t, title)
  return ns.plot.heatmap(t, {width = 60, height = 7, title = title, range = {-2.2, 2.2},
                             labels = {rows = {"o1", "o2", "o3", "o4", "o5"},
                                       cols = {"f1", "f2", "f3", "f4"}}})
end

-- Column j of a matrix tensor, as a Lua list.
local function column(t, j)
  local sh, f, out = t:shape(), t:flat(), {}
  for i = 1, sh[1] do out[i] = f[(i - 1) * sh[2] + j] end
  return out
end

-- Mean and population variance of a list.
local function mean_var(v)
  local m, q = 0, 0
  for _, x in ipairs(v) do m = m + x / #v end
  for _, x in ipairs(v) do q = q + (x - m) ^ 2 / #v end
  return m, q
end

-- Is the batch the chapter's X?
local function is_x(t)
  local f, k = t:flat(), 0
  if #f ~= 20 then return false end
  for i = 1, 5 do
    for j = 1, 4 do
      k = k + 1
      if f[k] ~= X[i][j] then return false end
    end
  end
  return true
end

lesson{
  title = "The problem: a value needs a reference set",
  source = "002_22013a1826c4c83c.txt",
  section = "The problem; A visible reference choice",
  steps = {
    {text = [[
Once training starts, the weights of early layers move, and a later layer
may see its inputs arrive with a new offset or a new spread from one batch
to the next. Normalisation re-expresses each value relative to a chosen
set of other values, so such drifts cancel.

The output panel (Alt-3) shows this for one vector: the shift probe adds 10 to
every value, the scale probe doubles them, and layer norm's output hardly
moves in either case (the largest changes are printed next to them).]],
     set = {x = {2, 4, 7, 11, 16}, kind = "layer", eps = 1e-5, shift = 10, scale = 2},
     focus = "output"},

    {text = [[
The chapter's running example is a 5 x 4 matrix X: five observations
(rows) and four features (columns). It is in the batch panel (Alt-5)
now. Its rows sit at different levels and its columns have different
spreads, so it matters which values a normalised entry is compared with.
(F: figure)]],
     set = {batch = X, x = X, target = 1, companion = 5},
     focus = "batch",
     figure = function(s)
       local t = s.batch
       local rows = t:mean({2}):flat()
       local cols = t:std({1}):flat()
       return heat(t, "the running matrix X") .. "\nrow means: " .. fmt(rows) ..
                "\ncolumn std: " .. fmt(cols)
     end},

    {text = [[
Fig. 13.1 (F): batch norm sets an entry against its column (one feature, all
observations), layer norm against its row (one observation, all features).
The batch panel (Alt-5) shows both: entry 23 at row 5, col 3 gets two values.]],
     focus = "batch",
     figure = function(s)
       local b = result().batch
       return heat(b.bn, "batch norm: each column on its own") .. "\n" ..
                heat(b.ln, "layer norm: each row on its own")
     end,
     -- another matrix of whole numbers for a second attempt (V)
     variant = function(seed, s)
       local g, m = ns.rng(seed), {}
       for i = 1, 5 do
         m[i] = {}
         for j = 1, 4 do m[i][j] = math.floor(g:normal(10, 5) + 0.5) end
       end
       return {batch = m, x = m}
     end,
     try = {text = [[
Under batch norm the 23's reference set is column 3. By hand: the
population variance of the batch panel's column 3? Type = and your number.]],
            answer = {value = function(s)
                        local _, v = mean_var(column(s.batch, 3))
                        return v
                      end},
            hints = {"Its mean first: the sum of the column over 5.",
                     function(s)
                       local c, words = column(s.batch, 3), {}
                       for i, x in ipairs(c) do words[i] = string.format("%g", x) end
                       return string.format("Column 3 is (%s); its mean is %.6g. Then the mean " ..
                                            "of the squared gaps to it.",
                                            table.concat(words, ", "), mean_var(c))
                     end,
                     function(s)
                       local m, v = mean_var(column(s.batch, 3))
                       return string.format("The mean of (x - %.6g)^2 over the column: %.6g.", m, v)
                     end}}},

    {text = [[
Definition. To normalise is to measure every value against a reference
set: a batch, one observation, a group of channels, one vector. The set
decides which values influence one another, and whether one rule serves
training and inference.

The output panel (Alt-3) holds the same X under kind batch: its
statistics line shows four means and variances, one per column.]],
     set = {kind = "batch"},
     focus = "output",
     try = {text = [[
Switch to layer norm (set{kind = "layer"}): five statistics, one
per row; y becomes the batch panel's layer-norm matrix.]],
            check = function(s)
              if not is_x(s.x) then return "put X back as x first" end
              if s.kind ~= "layer" then return "kind is " .. s.kind .. ", not layer" end
              local d = (result().y - result().batch.ln):abs():max()
              return d < 1e-12 or string.format("y differs from the LN matrix by %g", d)
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},
  },
}
