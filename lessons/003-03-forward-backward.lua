-- Text 003 (the course lesson), "The forward pass as an algorithm" and the backward pass:
-- the parameter gradients, the input gradient along its three paths (direct, through the
-- mean, through the variance), the two directions it projects out, and the dense coupling
-- of the batch Jacobian.
local X = {2, 4, 6, 8}
-- the upstream gradient dL/dy of the worked example (the text gives none; see gaps N003-06);
-- the explorer's `upstream` field holds it, and result().backward is the backward pass
local DY = {1, -2, 0.5, 3}

-- The normalization spec of the state (batch norm of one feature, its eps and affine).
local function spec(s)
  local sp = {kind = s.kind, eps = s.eps}
  if #s.gamma > 0 then sp.gamma = s.gamma end
  if #s.beta > 0 then sp.beta = s.beta end
  return sp
end

-- dL/dx as a tensor of x's shape, from the explorer's backward pass at the state.
local function dx_of(s) return ns.tensor(result().backward.dx, s.x:shape()) end

-- x_hat at the state's x (no affine).
local function xhat(s) return (ns.normalize(s.x, {kind = s.kind, eps = s.eps})) end

local function same(t, v)
  local f = t:flat()
  if #f ~= #v then return false end
  for i = 1, #v do if f[i] ~= v[i] then return false end end
  return true
end

lesson{
  title = "Forward and backward through the batch statistics",
  source = "003_5350b2b8404a7fc0.txt",
  section = "The forward pass as an algorithm",
  steps = {
    {text = [[
The training forward pass for one feature (real layers do all features
at once):
  1  mu    = mean of x_1 .. x_m
  2  var   = mean of (x_i - mu)^2
  3  x_hat = (x_i - mu)/sqrt(var+eps)
  4  y_i   = gamma x_hat_i + beta
  5  output y
  6  r_mu  = (1-a) r_mu + a mu
  7  r_v   = (1-a) r_v + a m/(m-1) var
Lines 6 and 7, running buffers for inference (momentum a), are for
003-04. Lines 1 to 4 are differentiable, and mu and var depend on every
x_j of the batch. (Alt-3)]],
     set = {x = X, kind = "batch", eps = 0, gamma = 1, beta = 0, shift = 10, scale = 2,
            upstream = DY},
     focus = "output"},

    {text = [[
Backward, the easy half: the loss sends back dL/dy = (1, -2, 0.5, 3)
(the upstream field); gamma and beta appear only in line 4, so
  dL/dbeta  = sum_i dL/dy_i         = 2.5
  dL/dgamma = sum_i dL/dy_i x_hat_i = 8.5 / sqrt(5) = 3.80
(x_hat = (-3, -1, 1, 3) / sqrt(5), gamma 1, beta 0). B: the whole pass.]],
     focus = "backward",
     claims = function(s)
       local b = result().backward
       claim("g-grad-gamma", b.dgamma[1])
       claim("g-grad-beta", b.dbeta[1])
     end},

    {text = [[
Now dL/dx. With g_i = gamma dL/dy_i, x_i reaches the loss three ways:
its own x_hat_i, the shared mean, the shared variance:
  dL/dx_i = (g_i - mean_j g_j - x_hat_i mean_j(g_j x_hat_j)) / sqrt(var+eps)
Here dL/dx = (0.738, -0.984, -0.246, 0.492). B and F split it by path:
g_i/sqrt(var) treats mu and var as constants, the other two correct it.]],
     focus = "backward",
     figure = function(s)
       local b = result().backward
       local rows = {b.direct, b.via_mean, b.via_var, b.dx}
       return ns.plot.heatmap(rows, {width = 64, height = 10,
                                     labels = {rows = {"direct", "mean", "variance", "dL/dx"},
                                               cols = {"x_1", "x_2", "x_3", "x_4"}},
                                     title = "dL/dx along its three paths"})
     end,
     claims = function(s)
       claim("g-grad-first", result().backward.dx[1])
     end},

    {text = [[
The mean path subtracts the batch average of the upstream gradient, so
the result has no component along the all-ones direction: shifting every
x_i by the same amount cannot change the loss, and the gradient knows
it. The backward view (B) checks the sum of dL/dx on its last lines.]],
     predict = {question = "The backward pass of batch norm at x = (2, 4, 6, 8): what do the four " ..
                  "components of dL/dx add up to?",
                value = function(s) return dx_of(s):sum() end, tol = 1e-9},
     focus = "backward",
     claims = function(s)
       claim("g-grad-sum", dx_of(s):sum())
     end},

    {text = [[
The variance path subtracts an x_hat-weighted average, removing the part
along x_hat: stretching the batch about its mean leaves y alone, so
dL/dx . x_hat = 0 (B). The corrections leave only what y depends on.]],
     focus = "backward",
     claims = function(s)
       claim("g-grad-dot-xhat", math.abs((dx_of(s) * xhat(s)):sum()))
     end,
     try = {text = [[
Change the batch or the upstream (set{x = {1, 7, 2, 10}} or
set{upstream = {5, 0, -1, 2}}): dL/dx still sums to 0, orthogonal to x_hat.]],
            check = function(s)
              if same(s.x, X) and same(s.upstream, DY) then
                return "change x or upstream first"
              end
              local dx = dx_of(s)
              local a, b = math.abs(dx:sum()), math.abs((dx * xhat(s)):sum())
              if a < 1e-9 and b < 1e-9 then return true end
              return string.format("sum %.3g, dot %.3g: is x constant?", a, b)
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {1, 7, 2, 10}}]]},
            show = {x = {1, 7, 2, 10}}}},

    {text = [[
The dataflow: every x_j feeds mu and var, which feed every x_hat_i, so
batch norm's Jacobian dy_i/dx_j is a full matrix: a gradient changes with
its batch mates. The figure (F) shows it for x = (2, 4, 6, 8), the
spectrum (Alt-4) its zero eigenvalues (ones and radial: shift, stretch).]],
     set = {x = X},
     focus = "spectrum",
     figure = function(s)
       local J = ns.jacobian(s.x, spec(s))
       local n, rows, cols = #s.x, {}, {}
       for i = 1, n do rows[i], cols[i] = "y_" .. i, "x_" .. i end
       return ns.plot.heatmap(J, {width = 72, height = 2 * n + 4,
                                  labels = {rows = rows, cols = cols},
                                  title = "dy_i / dx_j (flattened x)"})
     end,
     try = {text = [[
Make x 4 examples by 2 features: set{x = {{2, 1}, {4, 0}, {6, 3},
{8, -1}}, upstream = false} (a random upstream of the new size). The
8 x 8 Jacobian gets zeros: examples couple only within a feature.]],
            check = function(s)
              local sh = s.x:shape()
              if #sh ~= 2 or sh[2] < 2 then return "use a matrix with 2 or more columns" end
              return s.kind == "batch" or "keep kind batch"
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {{2, 1}, {4, 0}, {6, 3}, {8, -1}}, upstream = false}]]},
            show = {x = {{2, 1}, {4, 0}, {6, 3}, {8, -1}}, upstream = false}}},
  },
}
