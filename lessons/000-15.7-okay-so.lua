-- Text 000 (chapter 15), section 15.7 ("Okay, so"): what the chapter inherited, changed,
-- measured and settled, and the question it leaves open. Each step puts back a state from
-- the earlier lessons.
local X = {-2, -1, 1, 2}

lesson{
  title = "Okay, so: what the chapter settled",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.7 Okay, so",
  steps = {
    {text = [[
Inherited: two tools from earlier chapters. A centered streaming state
(n, mean, m2), which the precision panel (Alt-7) computes three ways, and the
spectrum of a Jacobian, which now diagnoses a layer.]],
     set = {x = {9998, 9999, 10001, 10002}, kind = "layer", eps = 0, dtype = "fp32",
            shift = 10, scale = 2},
     focus = "precision"},

    {text = [[
Changed: the name of a layer says little. What pins it down is what it
ignores, what it computes, how large its eps is and where it is added,
and where the layer sits in the network. The settings panel (Alt-2) has a row
for each of these.]],
     set = {x = X, dtype = "fp64", eps = 1e-5},
     focus = "settings"},

    {text = [[
Measured: first the shift probe, the ranks in the spectrum and the fp32
rows of the precision panel; then the merged running state, whose gap
is in the train/eval panel (Alt-6) on screen now. These lessons recompute every
one of those numbers (normscope verify lists them).]],
     set = {momentum = 0.1},
     focus = "train"},

    {text = [[
Settled: the centered map and the RMS map forget different directions.
Compare the spectrum of kind layer (ones and radial at 0, eps 0) with
that of kind rms (radial only). (Alt-4)]],
     set = {eps = 0, kind = "layer"},
     focus = "spectrum",
     try = {text = [[
Switch to kind rms: the "ones" row leaves the spectrum (that direction is
no longer erased and joins the bulk), and only radial stays at 0.]],
            check = function(s)
              return s.kind == "rms" or "the kind is " .. s.kind
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "rms"}]]},
            show = {kind = "rms"}}},

    {text = [[
Open: the spectrum on screen describes the map at one input. Training
moves the input and the weights, and the regions where the map bends
sharply (near zero variance, for one) move with them. How a derivative
that behaves well here fares when such a region comes close is a
question for a later chapter. The figure view (f) draws the spectrum
panel's own figure for this one input. (Alt-4)]],
     focus = "spectrum",
     view = "figure"},
  },
}
