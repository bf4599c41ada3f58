-- Text 000 (chapter 15), section 15.2: eps makes the map defined everywhere and bounds its
-- gain, at the price of exact scale invariance; where it sits and the accumulation format
-- are part of the algorithm.
local X = {-2, -1, 1, 2}

-- The closed-form eigenvalue labelled name in result().jacobian.closed.
local function eig(name)
  for _, e in ipairs(result().jacobian.closed) do
    if e.label == name then return e.value end
  end
  error("no " .. name .. " eigenvalue in the spectrum", 2)
end

lesson{
  title = "Epsilon changes the map",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.2 Epsilon changes the map",
  steps = {
    {text = [[
Real normalization layers divide by sqrt(m2 + eps), where m2 is the mean
of the squared deviations. eps keeps the division defined when m2 = 0 and
caps how much a small input can be amplified.

Start with eps = 0 on x = (-2, -1, 1, 2), centered map. In the spectrum
panel the radial eigenvalue is exactly 0: scale is forgotten.
(Alt-4)]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "spectrum"},

    {text = [[
Set eps to 1e-5. With s = sqrt(m2 + eps) the radial eigenvalue becomes
eps / s^3, here 1e-5 / (2.5 + 1e-5)^1.5, about 2.5e-6. It is tiny, but it
is no longer 0: the map now sees the scale of x, a little.
(Alt-4; F: figure)]],
     set = {eps = 1e-5},
     focus = "spectrum",
     -- the spectrum panel's figure (f on the screen): the radial eigenvalue against eps
     figure = function(s) return plot("spectrum", {width = 78, height = 22}) end,
     claims = function(s)
       claim("c15-eps-radial", eig("radial"))
     end,
     try = {text = [[
Raise eps a few decades (e/E, or set{eps = 1e-2}) and watch the radial
eigenvalue leave zero: at eps = 1e-2 it is about 2.5e-3.]],
            check = function(s)
              local r = eig("radial")
              return r > 1e-3 or string.format("the radial eigenvalue is %.3g", r)
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 1e-2}]]},
            show = {eps = 1e-2}}},

    {text = [[
How much does that matter? It depends on m2 next to eps. Shrink the input
a thousand times (scale probe a = 1e-3): m2 drops to 2.5e-6, below eps,
and the output shrinks with it. The largest change of the output is about
0.7: for inputs this small, scale invariance is simply gone.
(Alt-3)]],
     set = {scale = 1e-3},
     focus = "output",
     claims = function(s)
       claim("c15-eps-scale-dev-1e-3", result().scale_dev)
     end},

    {text = [[
Where eps goes is part of the algorithm too. Put it outside the square
root, (x - mean) / (std + eps) (eps_at std, key @): at the same a = 1e-3
the scale probe now changes far less. Same name, different map.
(Alt-3)]],
     set = {eps_at = "std"},
     focus = "output"},

    {text = [[
So is the format of the sums. Take x = (98, 99, 101, 102) stored in fp16
and summed in fp16. The raw-moment variance mean(x^2) - mean(x)^2 is 0:
x^2 is about 1e4, and fp16 keeps only about 3 digits.
(Alt-7)]],
     set = {x = {98, 99, 101, 102}, eps_at = "var", scale = 2, dtype = "fp16", acc = "fp16"},
     focus = "precision",
     try = {text = [[
Keep the values in fp16 but accumulate in fp32 (set{acc = "fp32"}): the
raw row recovers 2.5. Storage can be narrow when the sums are wide. Even
so, a centered formula is the safe one.]],
            check = function(s)
              local raw = result().precision.raw
              if s.acc == "fp16" then return "the sums are still fp16" end
              return raw.relerr < 1e-6 or string.format("raw is %g", raw.var)
            end,
            show = {acc = "fp32"}}},

    {text = [[
Batch normalization adds one more piece of state: running estimates of
the mean and variance, used in evaluation mode. They are streaming
centered statistics, with the same questions about the denominator (n or
n - 1) and the order of the sums. The train/eval panel (Alt-6) shows them; the
next lesson takes them apart.]],
     set = {x = X, dtype = "fp64", acc = "default"},
     focus = "train"},
  },
}
