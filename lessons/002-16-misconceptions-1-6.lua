-- Text 002, "Common misconceptions", items 1 to 6: each a belief, then an experiment on
-- the screen that refutes it, and a change for the learner to make.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local COL = {{1}, {2}, {4}, {7}, {11}}
local TOKENS = {{{1, 2, 6}, {0, 4, 5}, {3, 3, 9}, {8, 1, 1}}} -- 1 sequence, 4 tokens, 3 features

local function maxmean(y, axis) return y:mean({axis}):abs():max() end

-- Are all rows of y equal?
local function rows_equal(y)
  local B = y:shape()[1]
  for i = 2, B do
    if (y:slice(1, i, i) - y:slice(1, 1, 1)):abs():max() > 1e-12 then return false end
  end
  return true
end

lesson{
  title = "Misconceptions 1 to 6, tested",
  source = "002_22013a1826c4c83c.txt",
  section = "Common misconceptions (1-6)",
  steps = {
    {text = [[
Twelve common beliefs about normalisation, each false: for each a panel
contradicts it. Predict first, then change something.
Belief 1: "normalisation divides all inputs by one global standard
deviation." On X under batch norm, the output panel's statistics line
(stat k/n, Alt-3) counts the statistics. And it acts on any layer's
activations, not only the inputs.]],
     predict = {question = "Belief 1 says normalisation divides all inputs by one global std. " ..
                  "How many statistics does batch norm compute on the 5 x 4 running " ..
                  "matrix X?",
                value = function(s) return #result().mean end, tol = 0},
     set = {x = X, batch = X, kind = "batch", axes = "default", eps = 1e-5, gamma = {},
            beta = {}, mode = "train", dtype = "fp64", acc = "default"},
     focus = "output",
     try = {text = [[
Make it global (set{axes = {1, 2}}): one statistic, and the columns keep
their offsets (means no longer 0). A different operation.]],
            check = function(s)
              if #result().mean ~= 1 then return "use one statistic: axes {1, 2}" end
              return maxmean(result().y, 1) > 0.1 or "the column means are still 0"
            end,
            hints = {"A steps the reduction axes",
                     [[set{axes = {1, 2}}]]},
            show = {axes = {1, 2}}}},

    {text = [[
Belief 2: "every normalised output has mean 0 and variance 1 overall."
Layer norm on X makes every row's mean 0, not every column's: y is in
the output panel (Alt-3; column 3 is every fourth entry).]],
     predict = {question = "Belief 2 says every normalised output has mean 0 overall. Under " ..
                  "layer norm on the running matrix X, what is the mean of column 3 of y?",
                value = function(s) return result().y:mean({1}):flat()[3] end, tol = 0.05},
     set = {kind = "layer", axes = "default"},
     focus = "output",
     try = {text = [[
Column 3 has mean 1.62 and column 1 mean -1.07: zero only along the
reduced axis, and only before gamma and beta. Add an affine (gamma 2,
beta 1) and read the row means again.]],
            check = function(s)
              local y = result().y
              local m = y:mean({2}):flat()
              for i = 1, #m do
                if math.abs(m[i] - 1) > 1e-9 then
                  return string.format("row %d has mean %.3f", i, m[i])
                end
              end
              return true
            end,
            hints = {"w cycles gamma and beta (none, gamma 2, gamma 2 and beta 0.5); other values at the prompt (:)",
                     [[set{gamma = 2, beta = 1}]]},
            show = {gamma = 2, beta = 1}}},

    {text = [[
Belief 3: "gamma and beta undo the normalisation." Two observations,
(1, 2, 3, 4) and (10, 20, 30, 40): the second is the first times ten,
under layer norm with eps 0. The output panel (Alt-3)
has both rows of y.]],
     predict = {question = "Belief 3 says gamma and beta undo the normalisation. Under layer norm " ..
                  "(eps 0), do (1, 2, 3, 4) and (10, 20, 30, 40) get different outputs?",
                choices = {"yes: the second is ten times the first", "no: the same row"},
                answer = function(s) return rows_equal(result().y) and 2 or 1 end},
     set = {x = {{1, 2, 3, 4}, {10, 20, 30, 40}}, gamma = {}, beta = {}, eps = 0},
     focus = "output",
     try = {text = [[
gamma and beta are shared by all observations (one per feature). Try to
tell the two rows apart with any gamma and beta you like.]],
            check = function(s)
              if #s.gamma == 0 and #s.beta == 0 then return "set a gamma or a beta" end
              return rows_equal(result().y) or "the input rows are no longer scaled copies"
            end,
            hints = {"w cycles gamma and beta (none, gamma 2, gamma 2 and beta 0.5); other values at the prompt (:)",
                     [[set{gamma = {1, 5, 2, 9}, beta = {3, -1, 0, 7}}]]},
            show = {gamma = {1, 5, 2, 9}, beta = {3, -1, 0, 7}}}},

    {text = [[
Belief 4: "batch norm uses the current batch at inference." The output
panel (Alt-3) gets one feature, (1, 2, 4, 7, 11), under batch norm in
eval mode; its "y: mean" line shows whether y is
centred.]],
     predict = {question = "Belief 4 says batch norm uses the current batch at inference. In eval " ..
                  "mode, is the output of the feature (1, 2, 4, 7, 11) centred at 0?",
                choices = {"yes", "no"},
                answer = function(s) return math.abs(result().y_mean) < 1e-6 and 1 or 2 end},
     set = {x = COL, kind = "batch", gamma = {}, beta = {}, eps = 1e-5, mode = "eval"},
     focus = "output",
     try = {text = [[
Eval mode uses the running estimates of the train/eval panel: row 1's
output is (1 - running mean) / sqrt(running var + eps). Change the other
four values and watch row 1.]],
            check = function(s)
              local f = s.x:flat()
              if s.mode ~= "eval" then return "stay in eval mode" end
              if f[1] ~= 1 then return "keep the first value at 1" end
              local same = #f == 5
              for i = 2, #f do same = same and f[i] == COL[i][1] end
              if same then return "change rows 2 to 5" end
              local t = result().train.momentum
              local want = (1 - t.mean[1]) / math.sqrt(t.var[1] + s.eps)
              return math.abs(result().y[1] - want) < 1e-12 or "row 1 moved"
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{1}, {0}, {0}, {0}, {0}}}]]},
            show = {x = {{1}, {0}, {0}, {0}, {0}}}}},

    {text = [[
Belief 5: "gradient accumulation gives batch norm a bigger batch."
Accumulation adds up gradients; the forward pass of each micro-batch
still runs on its own. The output panel (Alt-3) gets the micro-batch of
rows 1-2 of X; the batch panel (Alt-5) keeps the full 5-row batch norm,
where row 1, feature 1 is -1.10.]],
     predict = {question = "Belief 5 says gradient accumulation gives batch norm a bigger batch. " ..
                  "Batch norm of the micro-batch of rows 1-2 of X: row 1, feature 1?",
                value = function(s) return result().y[1] end, tol = 0.01},
     set = {x = {X[1], X[2]}, mode = "train"},
     focus = "output",
     try = {text = [[
Use another split, rows 1-3 (set{x = {...}} with the first three rows):
row 1's output still differs from the batch panel's full-batch row 1.]],
            check = function(s)
              local B = s.x:shape()[1]
              if B >= 5 then return "use fewer than 5 rows (a micro-batch)" end
              if B == 2 then return "rows 1-2 is the split shown: try another" end
              local full = result().batch.bn:slice(1, 1, 1)
              local d = (result().y:slice(1, 1, 1) - full):abs():max()
              return d > 1e-6 or "row 1 equals the full-batch output"
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}}}]]},
            show = {x = {X[1], X[2], X[3]}}}},

    {text = [[
Belief 6: "layer norm normalises across tokens." In a Transformer it
reduces the hidden features of each token. The input becomes one
sequence of 4 tokens with 3 features under layer norm (axis 3); once you
answer, the statistics line of the output panel (Alt-3) counts its
statistics.]],
     predict = {question = "Belief 6 says layer norm normalises across tokens. One sequence of 4 " ..
                  "tokens with 3 features under layer norm: how many statistics?",
                value = function(s) return #result().mean end, tol = 0},
     set = {x = TOKENS, kind = "layer", axes = "default"},
     focus = "output",
     try = {text = [[
Build the misconceived version, a reduction across the tokens
(set{axes = {2}}): the statistics become 3, one per feature, shared by
all 4 tokens. That is a different layer.]],
            check = function(s)
              return #result().mean == 3 or (#result().mean .. " statistics")
            end,
            hints = {"A steps the reduction axes",
                     [[set{axes = {2}}]]},
            show = {axes = {2}}}},
  },
}
