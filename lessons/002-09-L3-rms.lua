-- Text 002, Level 3, "RMS normalisation removes recentring": x = (2, 3, 4, 5) under
-- layer norm and RMS norm (eps 1e-5), the offset RMS norm keeps, and its invariances.
local V = {2, 3, 4, 5}
local EPS = 1e-5

lesson{
  title = "Level 3: RMS norm keeps the offset",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 3 - Mathematics & Code: RMS normalisation removes recentring",
  steps = {
    {text = [[
Take x = (2, 3, 4, 5), four features all above zero. Layer norm removes
their common offset: the output panel (Alt-3) shows (-1.342, -0.447, 0.447,
1.342), symmetric around 0.]],
     set = {x = V, kind = "layer", eps = EPS, gamma = {}, beta = {}, axes = "default",
            shift = 10, scale = 2},
     focus = "output",
     claims = function(s)
       local y = result().y
       claim("n-shift-ln-first", y[1])
       claim("n-shift-ln-2", y[2])
       claim("n-shift-ln-3", y[3])
       claim("n-shift-ln-4", y[4])
     end},

    {text = [[
RMS norm of a feature vector x_i has no mean in it:

  r_i = sqrt((1/D) sum_j x_ij^2 + eps),    y_ij = gamma_j x_ij / r_i

and usually no beta either. For (2, 3, 4, 5) the output is (0.544, 0.816,
1.089, 1.361), mean 0.953: the positive offset is still there, only the
quadratic size of the vector is fixed (the mean of y^2 is 1, less a
hair for eps). (Alt-3)]],
     set = {kind = "rms"},
     focus = "output",
     claims = function(s)
       local y = result().y
       claim("n-shift-rms-1", y[1])
       claim("n-shift-rms-2", y[2])
       claim("n-shift-rms-3", y[3])
       claim("n-shift-rms-4", y[4])
       claim("n-shift-rms-mean", y:mean())
     end},

    {text = [[
So RMS norm is invariant to re-scaling but not to re-centring. The
probes in the output panel (Alt-3) show it: doubling x (scale probe) leaves y
as it was, adding 10 (shift probe) moves it. It matters when the mean
of a vector carries information, and RMS norm saves the work of the
mean.]],
     focus = "output",
     try = {text = [[
RMS norm and layer norm agree on a vector whose mean is already 0. Give
x mean 0 (e.g. set{x = {-1.5, -0.5, 0.5, 1.5}}) and compare the RMS output
with layer norm's.]],
            check = function(s)
              if s.kind ~= "rms" then return "keep kind rms" end
              local d = (result().y - ns.normalize(s.x, {kind = "layer", eps = s.eps}))
                          :abs():max()
              return d < 1e-6 or string.format("RMS and layer norm differ by %.3g", d)
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {-1.5, -0.5, 0.5, 1.5}}]]},
            show = {x = {-1.5, -0.5, 0.5, 1.5}}}},
  },
}
