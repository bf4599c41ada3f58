-- Text 001 (the review article), section 10, the table and the limitations: what the two
-- figures and the four tests establish (properties of declared finite maps), and what they
-- do not (which normalization is best for a model).
local X = {1, 2, 4}

lesson{
  title = "What the figures and tests establish",
  source = "001_5d139345c05ab941.txt",
  section = "10 What the figures and tests actually establish; table; limitations",
  steps = {
    {text = [[
The article's evidence is two figures and four tests, each on a small
map with every input, variance convention, eps and tolerance written
down: figure 1 (positive-scale sensitivity, lesson 001-s04), figure 2
(one example's output against its companion, 001-s06), and tests of
shift invariance (001-s03), of the eps-dependent radial eigenvalue and
of the Jacobian against finite differences (001-s05), and of the sign
flip under a new companion (001-s06). This step puts x = (1, 2, 4) back
with eps = 1e-5: the shift probe (0) and the spectrum (ones 0, radial
small) show two of them at once. (Alt-4)]],
     set = {x = X, kind = "layer", eps = 1e-5, eps_at = "var", ddof = 0, gamma = {},
            beta = {}, shift = 10, scale = 1e-3, mode = "train"},
     focus = "spectrum"},

    {text = [[
The article's table: choice, exact effect, diagnostic.
  centering in an example     removes the offset    task information in it?
  statistics across examples  couples the batch     response to its makeup
  eps > 0                     regularises low var.  scale, derivative size
Rows 1 and 3 are on screen: the shift probe (row 1), and the scale probe
at a = 0.001 with the radial eigenvalue (row 3). Row 2 is 001-s06's
batch panel. (Alt-3)]],
     focus = "output"},

    {text = [[
What this does not show. The algebra isolates the normalization and
leaves out the rest of a network (residual paths included); no training
speed or accuracy was measured; finite differences agree within a
tolerance, which is evidence, not proof; and each framework's default
axes and statistics still have to be checked on their own. None of it
says which normalization suits a language model or an image classifier.
Its value is to separate exact algebra from empirical choices, so that a
training study can then ask whether a map's invariances fit its task.
One thing the algebra leaves out is on screen: the residual view (D), a
path around the layer that changes which directions lose their
gradient (lesson 000-15.4).]],
     focus = "residual"},
  },
}
