-- Text 001 (the review article "Normalization Changes the Geometry of Learning"): its
-- abstract, section 1 (a normalization layer is a specification), section 2 (historical
-- claims stay separate) and the evidence list. Sources: Ioffe and Szegedy 2015 (batch
-- norm), Ba, Kiros and Hinton 2016 (layer norm), Santurkar et al. 2018 (optimization).

-- Three examples (rows) of three features: the same matrix under two normalizations.
local M = {{1, 2, 6}, {3, 2, 1}, {0, 5, 2}}

-- Layer norm of one row (a Lua array) with the state's eps.
local function ln_row(row, eps) return ns.normalize(ns.tensor(row), {kind = "layer", eps = eps}) end

lesson{
  title = "A normalization layer is a specification",
  source = "001_5d139345c05ab941.txt",
  section = "abstract, 1 A normalization layer is a specification, 2 Historical claims",
  steps = {
    {text = [[
The article makes three exact points, each one a lesson of its own:
which coordinates are averaged decides what information is removed (s3),
the stabilizer eps makes scale invariance only approximate (s4, s5), and
statistics taken across examples make one example's output depend on the
others (s6). It argues from small constructions you can compute by hand,
not from benchmark results. The output panel (Alt-3) has the kind of
construction it argues from: four numbers under layer norm, small
enough to check by hand.]],
     focus = "output"},

    {text = [[
"Subtract the mean, divide by the standard deviation" is not yet a layer.
A full specification names: the tensor's shape, the reduction axes, the
variance convention (divide by n or n - 1), eps and where it goes, the
affine gamma and beta, and what happens at inference. Each of these is a
field of the settings panel (Alt-2): kind and axes, ddof, eps and eps_at, gamma
and beta, mode.]],
     set = {kind = "layer", axes = "default", ddof = 0, eps = 1e-5, eps_at = "var",
            gamma = {}, beta = {}, mode = "train"},
     focus = "settings"},

    {text = [[
Two layers with the same formula can be different functions. The batch
panel holds a 3 x 3 matrix (rows are examples). Batch norm standardises
each column (one feature across the examples); layer norm standardises
each row (one example across its features). Same numbers in, different
numbers out. (Alt-5)]],
     set = {batch = M, target = 1, companion = 3, baseline = false},
     focus = "batch",
     try = {text = [[
Change example 3 only (set{batch = {{1, 2, 6}, {3, 2, 1}, {9, -4, 0}}}).
Row 1's batch-norm output moves; its layer-norm output cannot, because
layer norm never looks at another row.]],
            check = function(s)
              local b = result().batch
              local moved = 0
              for i = 1, #b.target_now do
                moved = math.max(moved, math.abs(b.target_now[i] - b.target_base[i]))
              end
              if moved < 1e-3 then return "row 1's batch-norm output has not moved" end
              local row1 = s.batch:slice(1, 1, 1):flat()
              local d = (b.ln:slice(1, 1, 1):reshape(-1) - ln_row(row1, s.eps)):abs():max()
              return d < 1e-12 or "layer norm of row 1 changed?"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{1, 2, 6}, {3, 2, 1}, {9, -4, 0}}}]]},
            show = {batch = {{1, 2, 6}, {3, 2, 1}, {9, -4, 0}}}}},

    {text = [[
So the useful question is not "does normalization help?" but "which
changes of the input should leave the representation alone, and which
information must survive?". Removing an offset is harmless when the
offset is noise, and harmful when it carries the label. The output panel
(Alt-3) has layer norm of x = (1, 2, 4): its shift probe adds 10 to
every value, and the output does not notice.]],
     set = {x = {1, 2, 4}, kind = "layer", shift = 10},
     focus = "output"},

    {text = [[
Section 2 keeps three papers apart. Ioffe and Szegedy (2015): batch
norm, mini-batch statistics plus a learned affine, motivated by shifting
activation distributions (a cause never proven for every benefit). Ba,
Kiros and Hinton (2016): layer norm, statistics within one training
case. Santurkar et al. (2018): a smoother optimization (which does not make
every network smooth).

No speed or accuracy number is rerun; what follows from the map stays
checkable: shift invariance (s03), the eps-dependent scale
response (s04, s05), the companion's sign flip (s06). The kind row
(Alt-2; k steps it) names the first two: batch, layer.]],
     set = {kind = "batch"},
     focus = "settings"},
  },
}
