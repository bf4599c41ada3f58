-- Text 001 (the review article), section 3 and equation 1: centering is a projection whose
-- nullspace is the all-ones direction, so x and x + b 1 cannot be told apart afterwards;
-- the first row of the article's table.
local X = {1, 2, 4}

lesson{
  title = "Centering removes a direction",
  source = "001_5d139345c05ab941.txt",
  section = "3 Centering removes a direction (equation 1, table row 1)",
  steps = {
    {text = [[
Equation 1 of the article, for a vector x of d >= 2 coordinates:

  P = I - 1 1^T / d,   c = P x,   N(x) = c / sqrt(c^T c / d + eps)

P subtracts the coordinate mean; c is the centered vector; the
denominator is its root mean square, stabilised by eps. Here x = (1, 2, 4)
with eps = 1e-5, no gamma or beta: the output panel (Alt-3) shows N(x).]],
     set = {x = X, kind = "layer", eps = 1e-5, eps_at = "var", ddof = 0, gamma = {},
            beta = {}, shift = 10, scale = 2},
     focus = "output"},

    {text = [[
The all-ones vector is in P's nullspace: P 1 = 0. So x and x + b 1 have
the same centered vector for every b. The shift probe compares N(x) with
N(x + 10) = N(11, 12, 14): read the largest difference (max|y'-y|). In
the spectrum panel (Alt-4) the same fact is the "ones" eigenvalue.]],
     predict = {question = "Equation 1 with eps = 1e-5: how far apart are N(1, 2, 4) and " ..
                  "N(11, 12, 14), at most?",
                value = function(s) return result().shift_dev end, tol = 1e-12},
     focus = "output",
     claims = function(s)
       claim("r3-level-erased", result().shift_dev)
     end},

    {text = [[
Could a later gain and bias bring the level back? No: gamma and beta act
on N(x), and N(x) is already the same for both inputs, so whatever they
do, they do to both. (Alt-3)]],
     focus = "output",
     try = {text = [[
Give the layer an affine (set{gamma = 3, beta = 1}) and check the shift
probe: still no difference between x and x + 10.]],
            check = function(s)
              if #s.gamma == 0 and #s.beta == 0 then return "gamma and beta are still unset" end
              local d = result().shift_dev
              return d < 1e-12 or string.format("shift probe moved by %.3g", d)
            end,
            hints = {"w cycles gamma and beta (none, gamma 2, gamma 2 and beta 0.5); other values at the prompt (:)",
                     [[set{gamma = 3, beta = 1}]]},
            show = {gamma = 3, beta = 1}}},

    {text = [[
Whether that is good depends on the task. If the overall level is
nuisance, forgetting it is a gift; if the label is decided by the level,
and nothing else carries it, the layer has destroyed the answer. This is
row 1 of the article's table: within-example centering removes the
shared offset, so ask whether the task's information lives in that
offset. A residual connection or an extra unnormalized feature can carry
the level around the layer; the statement is about the isolated map. The
spectrum panel (Alt-4) shows the erased level as the "ones" eigenvalue.]],
     focus = "spectrum"},
  },
}
