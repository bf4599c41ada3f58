-- Text 001 (the review article), section 5 and equation 3: the Jacobian of the centered map
-- has three kinds of direction, the all-ones one (eigenvalue 0), the radial one c
-- (eps / s^3) and the rest (1 / s); the analytic Jacobian against central differences.
local X = {1, 2, 4}

-- The state's normalization as an ns spec.
local function spec(s) return {kind = "layer", eps = s.eps, eps_at = "var"} end

-- Rayleigh quotient v^T J v / v^T v of a matrix J (tensor) and a vector v (Lua array):
-- the eigenvalue when v is an eigenvector.
local function along(J, v)
  local t = ns.tensor(v)
  local Jv = ns.matmul(J, t:reshape(#v, 1)):reshape(-1)
  return (t * Jv):sum() / (t * t):sum()
end

-- The three directions at x (d = 3): ones, c = P x, and u orthogonal to both (1 x c).
local function directions(x)
  local f = x:flat()
  local m = (f[1] + f[2] + f[3]) / 3
  local c = {f[1] - m, f[2] - m, f[3] - m}
  local u = {c[3] - c[2], c[1] - c[3], c[2] - c[1]} -- (1,1,1) x c
  return {1, 1, 1}, c, u
end

lesson{
  title = "The Jacobian separates two suppressed directions",
  source = "001_5d139345c05ab941.txt",
  section = "5 The Jacobian separates two suppressed directions (equation 3)",
  steps = {
    {text = [[
Write c = P x and s = sqrt(c^T c / d + eps). Equation 3:

  J = P / s - c c^T / (d s^3),   J 1 = 0,   J c = (eps / s^3) c

At x = (1, 2, 4) with eps = 0.01, read the spectrum panel (Alt-4): the "ones"
direction has eigenvalue 0, the radial direction c has eps / s^3 (about
0.0051), and the direction orthogonal to both has 1 / s (about 0.7992).
The lesson computes v^T J v / v^T v for each direction from the analytic
Jacobian.]],
     set = {x = X, kind = "layer", eps = 0.01, eps_at = "var", ddof = 0, gamma = {},
            beta = {}},
     focus = "spectrum",
     claims = function(s)
       local J = ns.jacobian(s.x, spec(s))
       local ones, c, u = directions(s.x)
       claim("r5-jac-ones-eig", along(J, ones))
       claim("r5-jac-radial-eig", along(J, c))
       claim("r5-jac-bulk-eig", along(J, u))
     end},

    {text = [[
Two different reasons for a small eigenvalue. The ones direction is
removed by construction: 0 for every eps. The radial direction is only
suppressed: its eigenvalue eps / s^3 grows with eps and shrinks as the
signal grows. (Alt-4)]],
     focus = "spectrum",
     try = {text = [[
At eps = 1, what is the radial eigenvalue divided by the bulk one, for
this x (v = c^T c / d = 14/9)? Type = and a number, then raise eps to 1
(E, or set{eps = 1}) and read both rows of the spectrum.]],
            answer = {value = function(s)
                        local J = ns.jacobian(s.x, {kind = "layer", eps = 1, eps_at = "var"})
                        local _, c, u = directions(s.x)
                        return along(J, c) / along(J, u)
                      end},
            hints = {"From equation 3: radial eps / s^3, bulk 1 / s, with s^2 = v + eps.",
                     "Their ratio is eps / s^2 = eps / (v + eps).",
                     "1 / (14/9 + 1) = 9/23 = 0.391: the radial direction is no longer " ..
                       "faint; ones stays at 0."}}},

    {text = [[
With eps = 0 (and a non-constant x) the radial eigenvalue is exactly 0
too: stretching x by a positive factor leaves the output exactly as it was.
With eps > 0 that direction stays faintly visible. The bulk eigenvalue
is then 1 / sqrt(14/9) = 0.8018. (Alt-4)]],
     set = {eps = 0},
     focus = "spectrum",
     claims = function(s)
       local J = ns.jacobian(s.x, spec(s))
       local _, c = directions(s.x)
       claim("r5-jac-radial-eig-eps0", along(J, c))
     end},

    {text = [[
The companion check of the article: compare the analytic Jacobian with
central finite differences (step h = 1e-6) at eps = 0.01, away from the
singular zero-variance case. The largest entry-wise difference stays
below 1e-7: the formula and the code agree. The spectrum panel's FD
column shows the eigenvalues of the finite-difference Jacobian.
(Alt-4)]],
     set = {eps = 0.01},
     focus = "spectrum",
     claims = function(s)
       local J = ns.jacobian(s.x, spec(s))
       local F = ns.jacobian(s.x, spec(s), {method = "fd", h = 1e-6})
       claim("r5-jac-fd-maxerr", (J - F):abs():max())
     end},
  },
}
