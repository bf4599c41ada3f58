-- Text 003 (the course lesson), "Why it helps": the internal-covariate-shift account, the
-- conditioning account, and the one mechanism the screen can show exactly: a normalized
-- layer ignores the scale of its weights, and its weight gradient shrinks as 1/c.
local g = ns.rng(21)
-- a batch of 8 inputs with 3 features, and a linear layer to 2 features
local U = g:normal(0, 1, {8, 3})
local W = g:normal(0, 1, {3, 2})
local Z = ns.matmul(U, W)               -- pre-activations, 8 x 2
local G = g:normal(0, 1, {8, 2})        -- an upstream gradient dL/dy
local SPEC = {kind = "batch", eps = 0}

-- dL/dW of L = sum(G * BN(U (c W))): U^T times the backward pass of batch norm at c Z.
local function weight_grad(c)
  local dz = ns.vjp(Z * c, SPEC, G)
  return ns.matmul(U:T(), dz)
end

local function norm(t) return math.sqrt(t:square():sum()) end

-- Computed once: the output change and the gradient norm for a few weight scales c.
local SCALES = {0.25, 0.5, 1, 2, 4, 8, 16}
local GRAD = {}
local OUT_DEV = 0
do
  local y1 = ns.normalize(Z, SPEC)
  for i, c in ipairs(SCALES) do
    GRAD[i] = norm(weight_grad(c))
    OUT_DEV = math.max(OUT_DEV, (ns.normalize(Z * c, SPEC) - y1):abs():max())
  end
end

lesson{
  title = "Why batch norm helps",
  source = "003_5350b2b8404a7fc0.txt",
  section = "Why it helps",
  steps = {
    {text = [[
With batch norm, deeper networks train, and at larger learning rates.
Why is disputed. The first explanation was internal covariate shift:
the layers below keep changing, so the distribution entering each layer
drifts and the layers above must keep re-adapting. Fixing every layer's
input mean and variance was meant to stop the drift.

The input panel holds 8 pre-activations z = u W of a linear layer with
2 output features (rows are examples). Batch norm gives each column
mean 0 and variance 1, whatever W does to them. (Alt-3)]],
     set = {x = Z, kind = "batch", eps = 0, gamma = {}, beta = {}, mode = "train",
            shift = 10, scale = 10},
     focus = "output"},

    {text = [[
That story is at best incomplete. Networks trained with a deliberately
injected distribution shift after each normalization layer keep batch
norm's speed-up (Santurkar et al., 2018). The better-supported account
is about optimization: normalization makes the loss and its gradient
change more predictably along the update direction (smaller, steadier
curvature), so larger steps are safe. The text gives no numbers for
this; the screen can show a second mechanism exactly. Every gradient that
reaches the weights passes the layer's Jacobian, whose eigenvalues the
spectrum panel (Alt-4) lists.]],
     focus = "spectrum"},

    {text = string.format([[
Scale the weights: W -> c W multiplies every pre-activation by c, and
batch norm divides it out again. The scale probe shows it with c = 10:
y(10 z) is y(z). Over c = 0.25 .. 16 the largest change of the output
is %.3g. The loss does not depend on the length of the weights, only on
their direction. (Alt-3)]], OUT_DEV),
     focus = "output",
     try = {text = [[
Try other weight scales: set{scale = 0.01} or set{scale = 1000}. Any
positive c leaves the output unchanged. (A negative c flips the signs.)]],
            check = function(s)
              if s.scale == 10 then return "scale is still 10" end
              if s.scale <= 0 then return "a negative scale flips the output: try c > 0" end
              local d = result().scale_dev
              return d < 1e-9 or string.format("the output moved by %.3g", d)
            end,
            hints = {"z and Z halve and double the scale probe's a",
                     [[set{scale = 1000}]]},
            show = {scale = 1000}}},

    {text = string.format([[
The gradient pays for it: since the output ignores c, the gradient with
respect to W shrinks as 1/c. The figure (F) plots |dL/dW| against c on log
axes for a fixed upstream gradient: a straight line of slope -1 (c = 1
gives %.3g, c = 16 gives %.3g, 16 times less). Large weights take small
effective steps, small weights large ones, which damps how sensitive
training is to the weights' magnitude. (Alt-3)]], GRAD[3], GRAD[7]),
     focus = "output",
     figure = function(s)
       return ns.plot.lines({{x = SCALES, y = GRAD, label = "|dL/dW|"}},
                            {width = 72, height = 12, log = "xy", xlabel = "weight scale c",
                             ylabel = "gradient norm", title = "the weight gradient ~ 1/c"})
     end},
  },
}
