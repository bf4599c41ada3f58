-- Text 004 (the essay), its untitled opening: without normalization the init constant
-- decides whether a deep tanh stack keeps its signal; normalization will remove that.

-- A quick version of the essay's stack for the figure: seed 0, 20 layers of width 256,
-- but a batch of 64 instead of 512 (the claims of lesson 004-02 use 512).
local SEED, LAYERS, B = 0, 20, 64
local INITS = {{"init 0.01", 0.01}, {"Xavier 1/16", 1 / 16}, {"init 1.0", 1.0}}

lesson{
  title = "Normalisation erases the initialisation",
  source = "004_f7fd3ff892c4fe59.txt",
  section = "opening (untitled)",
  steps = {
    {text = [[
The essay follows a series whose previous part showed that, without any
normalisation, the constant you multiply random weights by decides the
fate of a deep network. Too small, and after twenty tanh layers the
signal is of order 1e-16; too large, and the gradients of the first and
the last layers differ by about 1e9. Only the Xavier scale, 1/sqrt(width),
kept both in range.

The deep-stacks view (L) shows the forward half of that story: its
"no norm" row has layer 20's std for the three constants (20 tanh
layers of width 256, a batch of 512, seed 0), and on a taller screen
its left plot follows every layer on a log scale (the "none" curves).
The figure (F) draws those curves at a batch of 64; that part's
gradient figure is not rebuilt.]],
     focus = "stacks",
     figure = function(s)
       local series, rows = {}, {"layer 20 (batch 64):"}
       for _, i in ipairs(INITS) do
         local r = ns.stack{layers = LAYERS, batch = B, init = i[2], norm = "none", seed = SEED}
         series[#series + 1] = {y = r.std, label = i[1]}
         rows[#rows + 1] = string.format("  %-12s std %.3e", i[1], r.std[LAYERS])
       end
       -- on a log axis from 1e-16 to 1 the Xavier and 1.0 curves share the top rows
       return ns.plot.lines(series, {width = 76, height = 14, log = "y", xlabel = "layer",
                                     ylabel = "std of h",
                                     title = "no normalisation: the init decides"})
              .. "\n" .. table.concat(rows, "\n")
     end},

    {text = [[
The claim of the essay: add one line per layer, a batch norm before each
tanh, and the init constant stops mattering. The view's "batch norm"
row is that stack (the "BN" curves on a taller screen): read it. The
next lesson shows which line, and how exactly "the same" it is.
(L)]],
     predict = {question = "The 20-layer tanh stack with a batch norm before each tanh: does " ..
                  "layer 20's std still " ..
                  "depend on the init constant?",
                choices = {"yes, as much as before", "a little", "no: all three end at " ..
                             "the same std (to 4 decimals)"},
                answer = function(s)
                  local lo, hi = math.huge, -math.huge
                  for _, i in ipairs(INITS) do
                    local r = ns.stack{layers = LAYERS, batch = B, init = i[2], norm = "batch",
                                       seed = SEED}
                    lo, hi = math.min(lo, r.std[LAYERS]), math.max(hi, r.std[LAYERS])
                  end
                  return hi - lo < 1e-4 and 3 or hi - lo < 0.05 and 2 or 1
                end},
     focus = "stacks"},
  },
}
