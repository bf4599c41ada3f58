-- Chapter 15 (text 000), the opening: a shift by ten, and a variance that vanishes.
lesson{
  title = "A shift by ten, and a variance that vanishes",
  source = "000_b251982bd6a65d6e.txt",
  section = "opening",
  steps = {
    {text = [[
Start from x = (-2, -1, 1, 2) with the centered map (layer norm) and eps 0.
The output probe adds 10 to every coordinate and normalizes again.
Look at the shift column: it equals y itself.]],
     set = {x = {-2, -1, 1, 2}, kind = "layer", eps = 0, shift = 10},
     focus = "output"},
    {text = [[
Now switch to the RMS map (kind rms), which divides by the root mean square
without centering first. The shifted output moves.]],
     set = {kind = "rms"}, focus = "output",
     claims = function(s)
       claim("c15-rms-shift-maxdiff", result().shift_dev)
     end},
  },
}
