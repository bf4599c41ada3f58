-- Text 000 (chapter 15), section 15.8: the four sources, in the suggested reading order,
-- each with the map it introduced on the screen.
lesson{
  title = "Sources and a reading order",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.8 Sources and further reading",
  steps = {
    {text = [[
Read Ioffe and Szegedy (2015) first: batch normalization, and the
contract between the batch statistics of training and the stored state of
evaluation (kind batch, train/eval panel, Alt-6).]],
     set = {x = {-2, -1, 1, 2}, kind = "batch", eps = 1e-5},
     focus = "train"},

    {text = [[
Then Ba et al. (2016), layer normalization: the centered map over the
features of one example (kind layer). (Alt-4)]],
     set = {kind = "layer"},
     focus = "spectrum"},

    {text = [[
Side by side with it, Zhang and Sennrich (2019), RMS normalization:
the same map without centering (kind rms). Compare which invariance each
paper chooses, and why. (Alt-4)]],
     set = {kind = "rms"},
     focus = "spectrum"},

    {text = [[
Last, Santurkar et al. (2018) on BatchNorm and the loss landscape. Read
it as an audit: which geometric mechanism do its experiments support, on
which models and measurements? (Alt-2)]],
     set = {kind = "batch"},
     focus = "settings"},
  },
}
