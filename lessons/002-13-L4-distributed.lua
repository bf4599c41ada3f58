-- Text 002, Level 4, "Distributed training makes statistics a systems decision": local
-- batch norm on two workers, synchronised batch norm as a merge of their moments, and
-- gradient accumulation, whose micro-batches keep their own statistics.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local A, B = {X[1], X[2]}, {X[3], X[4], X[5]} -- worker A: rows 1-2, worker B: rows 3-5

-- Per-feature moments of a list of rows (one ns.moments per column).
local function colmoments(rows)
  local out = {}
  for j = 1, 4 do
    local col = {}
    for i, r in ipairs(rows) do col[i] = r[j] end
    out[j] = ns.moments(ns.tensor(col))
  end
  return out
end

-- The synchronised statistics: each worker's (count, mean, m2) per feature, merged.
local function synced()
  local a, b, out = colmoments(A), colmoments(B), {}
  for j = 1, 4 do out[j] = ns.merge(a[j], b[j]) end
  return out
end

local function stats_table()
  local a, b, m = colmoments(A), colmoments(B), synced()
  local lines = {"feature   worker A mean/var   worker B mean/var   synchronised"}
  for j = 1, 4 do
    lines[#lines + 1] = string.format("%7d   %8.2f %8.2f   %8.2f %8.2f   %6.2f %6.2f", j,
                                      a[j].mean, a[j].var, b[j].mean, b[j].var,
                                      m[j].mean, m[j].var)
  end
  return table.concat(lines, "\n")
end

lesson{
  title = "Level 4: statistics across workers",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 4 - Research & Systems: Distributed training makes statistics a " ..
              "systems decision",
  steps = {
    {text = [[
In data-parallel training each worker holds its own mini-batch. Split
the running matrix: worker A gets rows 1-2, worker B rows 3-5. With
local batch norm each worker normalises with its own statistics; the
output panel (Alt-3) is worker A's view (rows 1-2), and the table compares the
per-feature statistics of the two workers. (F: figure)]],
     set = {x = A, kind = "batch", axes = "default", eps = 1e-5, gamma = {}, beta = {},
            mode = "train"},
     focus = "output",
     figure = function(s) return stats_table() end},

    {text = [[
Synchronised batch norm has the workers exchange, per feature, their
count, sum and sum of squares (here: count, mean and centred sum of
squares, merged exactly). Everyone then normalises with the statistics
of the union, as if the batch were whole: the last column (feature 1's
variance 13.2). The price: a collective communication in every forward
pass, which group, layer and RMS norm never need.
(Alt-3)]],
     focus = "output",
     try = {text = [[
Check the merge: give the output panel the whole batch (set{x = ...}
with all five rows) and compare its column statistics with the
synchronised column of the table.]],
            check = function(s)
              if s.x:shape()[1] ~= 5 then return "use all five rows" end
              local m, st = synced(), select(2, ns.normalize(s.x, {kind = "batch"}))
              for j = 1, 4 do
                if math.abs(st.mean[j] - m[j].mean) > 1e-12 or
                     math.abs(st.var[j] - m[j].var) > 1e-9 then
                  return "feature " .. j .. " differs from the merge"
                end
              end
              return true
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}}]]},
            show = {x = X}}},

    {text = [[
Gradient accumulation adds the gradients of several micro-batches into
one optimiser step. It does not pool their statistics: each micro-batch
is still normalised on its own in its forward pass. So the optimiser's
effective batch (here 5 rows) and batch norm's statistical batch (2 or
3 rows) are different numbers. The output panel (Alt-3) shows micro-batch A
again: its row 1 differs from row 1 of the full-batch output.
(F: figure)]],
     set = {x = A},
     focus = "output",
     figure = function(s)
       local micro = result().y:slice(1, 1, 1):flat()
       local full = ns.normalize(ns.tensor(X), {kind = "batch", eps = s.eps}):flat()
       local l = {"row 1      micro-batch A    full batch"}
       for j = 1, 4 do l[#l + 1] = string.format("feature %d   %11.4f   %11.4f", j, micro[j], full[j]) end
       return table.concat(l, "\n")
     end},
  },
}
