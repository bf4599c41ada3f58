-- Text 001 (the review article), section 8: a weight vector that feeds an exactly
-- scale-invariant normalization can be scaled by c > 0 without changing predictions, while
-- its norm grows by c and its gradient shrinks by c.

-- The setup of the registry (ours, the article gives no numbers): five examples of four
-- features, a weight vector, one feature z = X w per example, batch norm over the examples
-- with eps = 0, and a loss L = sum g_i BN(z)_i.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local W = {0.3, -0.2, 0.5, 0.1}
local G = {1, -2, 0.5, 3, 0}
local BN = {kind = "batch", eps = 0, ddof = 0}

-- z = X (c w), as a vector of 5.
local function feature(c)
  return ns.matmul(ns.tensor(X), (ns.tensor(W) * c):reshape(4, 1)):reshape(-1)
end

-- dL/dw at c w: X^T J^T g, with J^T g from ns.vjp.
local function grad_w(c)
  local dz = ns.vjp(feature(c), BN, ns.tensor(G))
  return ns.matmul(ns.tensor(X):T(), dz:reshape(5, 1)):reshape(-1)
end
local function norm(t) return math.sqrt((t * t):sum()) end

lesson{
  title = "Scale symmetry changes what parameter size means",
  source = "001_5d139345c05ab941.txt",
  section = "8 Scale symmetry changes the meaning of parameter size",
  steps = {
    {text = [[
Five examples with four features each, a weight vector w = (0.3, -0.2,
0.5, 0.1), and one feature per example: z = X w = (3.4, 5.5, 7.1, 9.8,
13.2). Batch norm over the five examples with eps = 0 is exactly
scale-invariant, so w and 10 w give the same predictions. The output
panel holds z; its scale probe (a = 10) shows the largest change: 0.
(Alt-3)]],
     set = {x = feature(1), kind = "batch", eps = 0, eps_at = "var", ddof = 0, gamma = {},
            beta = {}, scale = 10, mode = "train"},
     focus = "output",
     claims = function(s)
       claim("r8-weight-scale-output", (ns.normalize(feature(10), BN)
                                        - ns.normalize(feature(1), BN)):abs():max())
     end},

    {text = [[
The parameters are another matter. The norm of 10 w is 10 times larger,
and the gradient of any loss through the layer is 10 times smaller:
the map at 10 z has Jacobian J(z) / 10. With a loss L = sum g_i BN(z)_i,
g = (1, -2, 0.5, 3, 0), the gradient dL/dw = X^T J^T g has norm ratio
||dL/dw at w|| / ||dL/dw at 10 w|| = 10.]],
     claims = function(s)
       claim("r8-weight-scale-grad-ratio", norm(grad_w(1)) / norm(grad_w(10)))
     end,
     try = {text = [[
Pick another factor for the scale probe (z and Z halve and double it,
or set{scale = ...}): does the output move, and what does the gradient
ratio become? The check computes the ratio for your scale.]],
            check = function(s)
              local c = s.scale
              if c <= 0 or c == 10 then return "choose a positive factor other than 10" end
              local r = norm(grad_w(1)) / norm(grad_w(c))
              if result().scale_dev > 1e-12 then return "the output moved?" end
              return math.abs(r - c) < 1e-9 * c or string.format("ratio %.6g", r)
            end,
            hints = {"Any positive factor other than 10 will do.",
                     "The ratio follows the factor: at c the gradient is c times smaller.",
                     "set{scale = 3}: output unchanged, ratio 3."},
            show = {scale = 3}}},

    {text = [[
So two descriptions of the same model disagree about distance: in
function space w and 10 w are one point, in parameter space they are
far apart. The norm of such weights says little about the function's
complexity, and a penalty on it (weight decay) can still steer the
optimisation, because it changes the gradient's size. How much depends
on eps, the affine, bypass routes and the optimiser, so the article
claims no universal meaning for a weight-decay value. Measure functional
and parameter changes separately. The figure (F) puts the two side by side
for a few factors c: the output's largest change, and ||dL/dw|| at c w.]],
     figure = function(s)
       local cs = {0.5, 1, 2, 5, 10}
       local rows = {"    c   max |BN(c z) - BN(z)|   ||dL/dw at c w||"}
       for _, c in ipairs(cs) do
         local d = (ns.normalize(feature(c), BN) - ns.normalize(feature(1), BN)):abs():max()
         rows[#rows + 1] = string.format("%5g   %21.3g   %16.5f", c, d, norm(grad_w(c)))
       end
       return table.concat(rows, "\n")
     end},
  },
}
