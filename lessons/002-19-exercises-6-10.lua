-- Text 002, "Exercises" 6 to 10: the batch-size simulation for variances; one target in
-- three batches; eval mode's stable prediction; batch-norm axes of N x C x H x W; two-group
-- normalisation of an eight-channel vector.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local COL = {{1}, {2}, {4}, {7}, {11}}
local F = {{1, 2, 3, 8, 10, 12, 18, 20}}
local IMG = ns.rng(5):normal(0, 1, {2, 4, 3, 3})
local SIZES = {2, 4, 8, 16, 32, 64, 128}

-- Exercise 6, once per file: the chapter's draws (default_rng(124), 600 batches of
-- N(3, 2) per size, in turn), each batch's population variance, and their spread.
local vars, vsd = {}, {}
do
  local g = ns.rng(124)
  for k, b in ipairs(SIZES) do
    vars[k] = g:normal(3, 2, {600, b}):var({2}):reshape({600})
    vsd[k] = vars[k]:std()
  end
end

-- The three batches of exercise 7, each with the target (1, 3, 7, 2) as row 1.
local BATCHES = {X, {X[1], {0, 0, 0, 0}, {5, 5, 5, 5}}, {X[1], {10, 30, 70, 20}}}

local function maxdiff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

-- Group norm by hand: each half of the 8 values centred and scaled on its own.
local function two_groups(x, eps)
  local out = {}
  for g = 0, 1 do
    local part = x:slice(2, 4 * g + 1, 4 * g + 4)
    local z = (part - part:mean()) / math.sqrt(part:var() + eps)
    for j, v in ipairs(z:flat()) do out[4 * g + j] = v end
  end
  return out
end

lesson{
  title = "Exercises 6 to 10",
  source = "002_22013a1826c4c83c.txt",
  section = "Exercises (6-10)",
  steps = {
    {text = [[
Exercise 6. Redo the batch-size simulation for variances: the same
draws (default_rng(124), 600 batches per size from N(3, 2)), but each
batch's variance instead of its mean. The population variance is 4;
the table has the mean and the spread of the 600 estimates per size.
Small batches are worse at variances than at means: at b = 2 the
estimates spread wider than their own average, which is low for a
reason you can compute.
(Alt-6; F: figure)]],
     set = {x = X, batch = X, target = 1, companion = 5, baseline = X[5], kind = "batch",
            axes = "default", eps = 1e-5, gamma = {}, beta = {}, mode = "train",
            dtype = "fp64", acc = "default", groups = 1},
     focus = "train",
     figure = function(s)
       local l = {"    b   mean of 600 variances   sd of them"}
       for k, b in ipairs(SIZES) do
         l[#l + 1] = string.format("%5d   %21.3f   %10.3f", b, vars[k]:mean(), vsd[k])
       end
       return table.concat(l, "\n")
     end,
     try = {text = [[
What is the expected value of one batch's population variance (divided
by b) at b = 2, when the true variance is 4? Type = and a number.]],
            answer = {value = function(s) return 4 * (2 - 1) / 2 end, tol = 1e-9},
            hints = {"The population variance divides by b; the unbiased one by b - 1.",
                     "E[population variance] = sigma^2 (b - 1) / b.",
                     "4 x 1 / 2 = 2: the table's 1.862 at b = 2 is that, up to the " ..
                       "sampling of 600 batches."}}},

    {text = [[
Exercise 7. One target, (1, 3, 7, 2), in three mini-batches: X, with two
other rows, with one. Batch norm gives three outputs (the table; with two
rows each is -1 or +1); the batch panel (Alt-5) has X. (F: figure)]],
     set = {batch_size = 32},
     focus = "batch",
     figure = function(s)
       local l = {"batch          target's batch-norm output"}
       for k, b in ipairs(BATCHES) do
         local y = ns.normalize(ns.tensor(b), {kind = "batch", eps = s.eps}):flat()
         l[#l + 1] = string.format("%d (%d rows)   %8.3f %8.3f %8.3f %8.3f", k, #b,
                                   y[1], y[2], y[3], y[4])
       end
       return table.concat(l, "\n")
     end,
     try = {text = [[
Make a fourth batch: keep row 1 as the target, change the others
(set{batch = {...}}). Row 1's output moves again.]],
            check = function(s)
              local f = s.batch:flat()
              if maxdiff({f[1], f[2], f[3], f[4]}, X[1]) ~= 0 then
                return "keep row 1 = (1, 3, 7, 2)"
              end
              local base = ns.normalize(ns.tensor(X), {kind = "batch", eps = s.eps})
              local d = maxdiff(result().batch.bn:slice(1, 1, 1):flat(),
                                base:slice(1, 1, 1):flat())
              return d > 1e-9 or "row 1's output is as in X: change the other rows"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{1, 3, 7, 2}, {0, 0, 0, 0}, {5, 5, 5, 5}}, companion = 2, baseline = false}]]},
            show = {batch = BATCHES[2], companion = 2, baseline = false}}},

    {text = [[
Exercise 8. Why should eval mode give a fixed observation one stable
prediction? The output panel (Alt-3) has one feature, (1, 2, 4, 7, 11), under
batch norm in eval mode; the try is the experiment that answers it.]],
     set = {x = COL, mode = "eval"},
     focus = "output",
     try = {text = [[
Change every row except row 3 (the 4): its output stays
(4 - running mean) / sqrt(running var + eps).]],
            check = function(s)
              local f = s.x:flat()
              if s.mode ~= "eval" then return "stay in eval mode" end
              if #f < 3 or f[3] ~= 4 then return "keep row 3 at 4" end
              local same = #f == 5
              for i = 1, #f do same = same and f[i] == COL[i][1] end
              if same then return "change the other rows" end
              local t = result().train.momentum
              local want = (4 - t.mean[1]) / math.sqrt(t.var[1] + s.eps)
              return math.abs(result().y[3] - want) < 1e-12 or "row 3 moved"
            end,
            hints = {"With the input focused (Alt-1), Up and Down pick a row; type a value " ..
                       "and Enter.",
                     "In eval mode batch norm uses the stored estimates, so each row " ..
                       "depends on itself only: a deployed model must not answer " ..
                       "differently for who else is in the batch.",
                     "set{x = {{9}, {9}, {4}, {-9}, {0}}}"},
            show = {x = {{9}, {9}, {4}, {-9}, {0}}}}},

    {text = [[
Exercise 9. Which axes does batch norm reduce on an N x C x H x W
image tensor? The output panel (Alt-3) has a 2 x 4 x 3 x 3 batch under batch
norm with the wrong axes, {2, 3, 4} (that is layer norm's set); its
statistics line counts what they give.]],
     set = {x = IMG, mode = "train", axes = {2, 3, 4}},
     focus = "output",
     try = {text = [[
Give batch norm its axes (set{axes = {...}}): the output panel should
then list 4 statistics, one per channel.]],
            check = function(s)
              local a = s.axes
              if type(a) ~= "table" then return "name the axes explicitly" end
              local want = ns.normalize(s.x, {kind = "batch", eps = s.eps})
              local d = (result().y - want):abs():max()
              return d == 0 or "not the per-channel statistics yet"
            end,
            hints = {"Batch norm keeps one statistic per channel: 4 here.",
                     "The channels are axis 2; reduce every other axis.",
                     "set{axes = {1, 3, 4}}: N, H and W."},
            show = {axes = {1, 3, 4}}}},

    {text = [[
Exercise 10. Two-group normalisation of an eight-channel vector:
f = (1, 2, 3, 8, 10, 12, 18, 20), in the input panel (Alt-1). Each half of four
channels is standardised on its own (population variance, eps 1e-5).]],
     set = {x = F, kind = "layer", axes = "default"},
     focus = "input",
     try = {text = [[
Type the normalised value of the 8 (the fourth channel): = and a number.]],
            answer = {value = function(s) return two_groups(s.x, s.eps)[4] end},
            hints = {"The first group is (1, 2, 3, 8): its mean is 3.5.",
                     "Its population variance is (6.25 + 2.25 + 0.25 + 20.25) / 4 = 7.25.",
                     "(8 - 3.5) / sqrt(7.25 + 1e-5) = 1.671."}}},

    {text = [[
Exercise 10 on the screen. The figure line (F) has all eight values
computed by hand (slices, means and variances); the output panel (Alt-3) still
runs layer norm over all eight.]],
     focus = "output",
     figure = function(s)
       local out = {}
       for j, v in ipairs(two_groups(s.x, s.eps)) do out[j] = string.format("%.3f", v) end
       return "by hand: " .. table.concat(out, " ")
     end,
     try = {text = [[
Let the output panel do it with group norm in two groups: every value
should match the hand computation.]],
            check = function(s)
              if s.kind ~= "group" then return "use kind group" end
              local d = maxdiff(result().y:flat(), two_groups(s.x, s.eps))
              return d < 1e-12 or string.format("off by %.3g", d)
            end,
            hints = {"k steps the kind to group; g and G set the number of groups.",
                     "set{kind = \"group\", groups = 2}"},
            show = {kind = "group", groups = 2}}},
  },
}
