-- Text 000 (chapter 15), section 15.5: the brand names, only after the objects, and the
-- named wrong answer "normalization preserves information".
local X = {-2, -1, 1, 2}

lesson{
  title = "The names, and what they do not promise",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.5 Brand bridge and claim boundary",
  steps = {
    {text = [[
Now the usual names. The centered map over the features of one example
is LayerNorm (Ba et al. 2016): kind layer. It forgets shift and scale.
(Alt-2)]],
     set = {x = X, kind = "layer", eps = 1e-5, shift = 10, scale = 2},
     focus = "settings"},

    {text = [[
Drop the centering and you have RMSNorm (Zhang and Sennrich 2019),
kind rms in the settings panel. Scale is still forgotten, the shift is
not: the shift probe in the output panel (Alt-3) is no longer 0.]],
     set = {kind = "rms"},
     focus = "output"},

    {text = [[
Normalizing each feature over the batch, with running statistics for
evaluation, is BatchNorm (Ioffe and Szegedy 2015): kind batch. Its
evaluation state is the one of the previous lesson (the train/eval
panel, Alt-6).]],
     set = {kind = "batch"},
     focus = "train"},

    {text = [[
A wrong answer with a name: "normalization preserves information". Every
invariant map throws directions away on purpose. With eps 0, LayerNorm
sends x, x + 10 and 3 x to the same output: what told them apart is gone.
The right question is whether the next layer should care about it.
(Alt-3)]],
     set = {kind = "layer", eps = 0},
     focus = "output",
     try = {text = [[
Find another input with exactly the same LayerNorm output as
(-2, -1, 1, 2), and type it into the input panel or set{x = {...}}.]],
            check = function(s)
              local f = s.x:flat()
              local same = #f == #X
              for i = 1, #X do same = same and f[i] == X[i] end
              if same then return "change x first" end
              if s.kind ~= "layer" then return "use kind layer" end
              local y0 = ns.normalize(ns.tensor(X), {kind = "layer", eps = 0})
              local y = ns.normalize(s.x, {kind = "layer", eps = 0})
              if #y ~= #y0 then return "keep four values" end
              local d = (y - y0):abs():max()
              return d < 1e-12 or string.format("the output differs by %.3g", d)
            end,
            hints = {"LayerNorm forgets two things about x: see the output panel's probes.",
                     "Any positive multiple of x, plus any constant, gives the same output.",
                     "Three times x, plus 5: set{x = {-1, 2, 8, 11}}"},
            show = {x = {-1, 2, 8, 11}}}},

    {text = [[
A boundary on claims: "normalization smooths the loss landscape" needs a
named slice of the landscape, a metric and an experiment before it means
anything. Santurkar et al. (2018) is influential evidence for BatchNorm
in their settings, not a theorem about every normalized model.
(Alt-2)]],
     focus = "settings"},
  },
}
