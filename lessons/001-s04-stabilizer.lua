-- Text 001 (the review article), section 4 and equation 2: with eps > 0 positive scaling
-- changes the output amplitude; the article's first figure (amplitude against the scale a
-- for two stabilizers); negative scaling flips the sign.
local X = {1, 2, 4}

-- Root mean square of a tensor.
local function rms(t) return math.sqrt((t * t):mean()) end

-- Amplitude of N(a x) relative to its eps = 0 limit, computed by normalizing.
local function amplitude(a, eps)
  local x = ns.tensor(X)
  return rms(ns.normalize(x * a, {kind = "layer", eps = eps}))
       / rms(ns.normalize(x, {kind = "layer", eps = 0}))
end

-- The a > 0 where the amplitude is 1/2, found by bisection on log a (it increases with a).
local function half_amplitude_a(eps)
  local lo, hi = -12, 4 -- log10 a
  for _ = 1, 200 do
    local mid = (lo + hi) / 2
    if amplitude(10 ^ mid, eps) < 0.5 then lo = mid else hi = mid end
  end
  return 10 ^ ((lo + hi) / 2)
end

lesson{
  title = "The stabilizer makes scale invariance approximate",
  source = "001_5d139345c05ab941.txt",
  section = "4 The stabilizer makes scale invariance approximate (equation 2, figure 1)",
  steps = {
    {text = [[
Equation 2: for a > 0 and any offset b,

  N(a x + b 1) = a P x / sqrt(a^2 v + eps),   v = ||P x||^2 / d

The offset disappears exactly. The scale a cancels only if eps = 0 (and
v > 0). Check the easy half first: x = (1, 2, 4) (v = 14/9), eps = 0,
and the scale probe at a = 0.001: the largest change is 0.
(Alt-3)]],
     set = {x = X, kind = "layer", eps = 0, eps_at = "var", ddof = 0, gamma = {}, beta = {},
            scale = 1e-3, shift = 10},
     focus = "output"},

    {text = [[
Now eps = 1e-5. At a = 0.001, a^2 v is about 1.6e-6, smaller than eps,
so the denominator is mostly eps: N(a x) keeps only about 0.367 of its
eps = 0 amplitude (the ratio a sqrt(v) / sqrt(a^2 v + eps)). Compare the
scale probe's y(a x) with y in the output panel (Alt-3).]],
     set = {eps = 1e-5},
     focus = "output",
     claims = function(s)
       local y0 = ns.normalize(s.x, {kind = "layer", eps = 0})
       claim("r4-small-scale-amplitude", rms(result().y_scale) / rms(y0))
     end,
     try = {text = [[
Find a scale where the output has almost all of its amplitude back (at
least 99 %): Z doubles the scale probe's a, or set{scale = ...}.]],
            check = function(s)
              if s.scale <= 0 then return "use a positive scale" end
              local r = amplitude(s.scale, s.eps)
              return r >= 0.99 or string.format("amplitude %.3f of the limit at a = %g", r,
                                                s.scale)
            end,
            hints = {"The amplitude is a sqrt(v) / sqrt(a^2 v + eps): a^2 v must be far " ..
                       "above eps = 1e-5.",
                     "v = 14/9; for 99 % you need a^2 v about 50 eps, so a near 0.02 or more.",
                     "set{scale = 0.1}"},
            show = {scale = 0.1}}},

    {text = [[
The article's first figure traces that ratio over many scales for two
stabilizers. Small a: the output fades toward 0. Large a: it reaches the
scale-invariant limit. With eps = 1e-5 the ratio is 1/2 at a of about
0.00146 (where a^2 v = eps / 3); with eps = 1e-2 the whole curve moves
right, and even a = 0.1 keeps only 0.78. The curve describes the map
itself; it says nothing about the eps any framework picks by default.
(F: figure)]],
     figure = function(s)
       local as, lo, hi = {}, {}, {}
       for k = 0, 48 do
         local a = 10 ^ (-5 + k / 8)
         as[#as + 1], lo[#lo + 1], hi[#hi + 1] = a, amplitude(a, 1e-5), amplitude(a, 1e-2)
       end
       return ns.plot.lines({{x = as, y = lo, label = "eps = 1e-5"},
                             {x = as, y = hi, label = "eps = 1e-2"}},
                            {width = 72, height = 14, log = "x", xlabel = "scale a",
                             ylabel = "amplitude / limit", range = {0, 1.05},
                             title = "Figure 1: positive-scale sensitivity"})
     end,
     claims = function(s)
       claim("r4-fig-eps1e-2-a1e-1", amplitude(0.1, 1e-2))
       claim("r4-half-amplitude-a", half_amplitude_a(1e-5))
     end},

    {text = [[
Negative scales are a different matter: a < 0 flips the centered vector,
so N(-x) = -N(x). With a = -1 the scale probe shows y(-x) as the mirror
image of y. "Scale invariant" must therefore say "positive scale".
(Alt-3)]],
     set = {scale = -1},
     focus = "output",
     claims = function(s)
       claim("r4-negative-scale-flip", (result().y_scale + result().y):abs():max())
     end},
  },
}
