-- Text 001 (the review article), section 9 and its research questions: swapping batch norm
-- for layer norm changes several things at once; a causal comparison changes one at a time.

-- Four examples (rows) of three features.
local M = {{1, 2, 6}, {3, 2, 1}, {0, 5, 2}, {2, 4, 3}}

lesson{
  title = "A causal comparison needs more than a swap",
  source = "001_5d139345c05ab941.txt",
  section = "9 A causal comparison needs more than a swap; research questions",
  steps = {
    {text = [[
Replace batch norm by layer norm and several things change at once: the
reduction axes, the coupling between examples, which invariances hold,
the stored state for inference, and sometimes the shape of gamma and
beta. The output panel (Alt-3) holds a 4 x 3 batch (rows are examples) under
batch norm: four examples share 3 statistics, one per feature.]],
     set = {x = M, kind = "batch", axes = "default", eps = 1e-5, eps_at = "var", ddof = 0,
            gamma = {}, beta = {}, mode = "train", shift = 10},
     focus = "output",
     try = {text = [[
Swap the kind (set{kind = "layer"}): now there are 4 statistics, one
per example, eval mode no longer matters, and a shift of one example's
features is forgotten. If accuracy changed after such a swap, which of
these caused it?]],
            check = function(s)
              if s.kind ~= "layer" then return "kind is still " .. s.kind end
              return #result().mean == 4 or "expected one statistic per example"
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},

    {text = [[
Matching the parameter count does not fix that. A sharper experiment
moves one property at a time: freeze the statistics (eval mode), change
the batch's makeup with the examples fixed (the batch panel's
companion), vary eps over a range you can justify, or give the network
an unnormalized copy of the level by a side route. Pair each with the
task's outcome and optimisation diagnostics; if one intervention moves
both gradient scale and available information, measure both.
(Alt-2)]],
     set = {kind = "batch"},
     focus = "settings",
     try = {text = [[
Make one such intervention: change only eps (set{eps = 1e-2}) and see
which panels change.]],
            check = function(s)
              return s.eps >= 1e-3 or string.format("eps is still %g", s.eps)
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 1e-2}]]},
            show = {eps = 1e-2}}},

    {text = [[
The article ends with three open questions for such studies:

- Which signals that the task needs does a proposed reduction axis
  remove?
- When a deployed model errs, what share of the error traces back to
  its stored running statistics, and what share to its weights?
- Can interventions separate the removal of information from better
  conditioning of the optimisation?

The second question starts at the train/eval panel (Alt-6): the stored
statistics a deployed batch-norm layer uses.]],
     focus = "train"},
  },
}
