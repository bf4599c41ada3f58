-- Text 003 (the course lesson), "Placement": normalizing before or after the activation,
-- and pre-norm versus post-norm in a residual block, seen through the block Jacobians
-- (ns.residual_jacobian) of one block and of a stack of ten.
local X = {0.5, -1, 2, 0.25}
-- the residual branch F(x) = W x (the same block as lesson 000-15.4)
local WROWS = {{0.5, -0.2, 0.1, 0}, {0.3, 0.4, -0.1, 0.2},
               {-0.2, 0.1, 0.6, -0.3}, {0, 0.2, 0.1, 0.5}}
local W = ns.tensor(WROWS)
local SPEC = {kind = "layer", eps = 0}
local DEPTH = 10

local function col(v) return v:reshape({#v, 1}) end
local function vec(m) return m:reshape({#m}) end

-- One block forward: pre x + W N(x), post N(x + W x).
local function block(x, place)
  if place == "pre" then return x + vec(ns.matmul(W, col((ns.normalize(x, SPEC))))) end
  return (ns.normalize(x + vec(ns.matmul(W, col(x))), SPEC))
end

-- The Jacobian of `depth` stacked blocks at x (chain rule: later blocks on the left),
-- and the smallest singular value and rank after each block.
local function stack(x, place, depth)
  local J = ns.eye(#x)
  local smin, rank = {}, {}
  for k = 1, depth do
    J = ns.matmul(ns.residual_jacobian(x, SPEC, W, place), J)
    x = block(x, place)
    local sv = ns.svdvals(J)
    smin[k], rank[k] = sv[#sv], ns.rank(J, 1e-10)
  end
  return J, smin, rank
end

-- Linear -> norm -> ReLU against linear -> ReLU: a batch of 64 pre-activations of one
-- unit whose bias pushes them below 0 (seed 9); the share of examples that pass the ReLU.
local ACTIVE_PLAIN, ACTIVE_NORM
do
  local z = ns.rng(9):normal(-3, 1, 64)
  local function share(t)
    local n = 0
    for _, v in ipairs(t:relu():flat()) do if v > 0 then n = n + 1 end end
    return n / #t
  end
  ACTIVE_PLAIN = share(z)
  ACTIVE_NORM = share((ns.normalize(z, {kind = "batch", eps = 1e-5})))
end

-- Computed once: both stacks at X.
local STACKS = {}
for _, p in ipairs{"pre", "post"} do
  local _, smin, rank = stack(ns.tensor(X), p, DEPTH)
  STACKS[p] = {smin = smin, rank = rank}
end

lesson{
  title = "Placement: where the normalization sits",
  source = "003_5350b2b8404a7fc0.txt",
  section = "Placement",
  steps = {
    {text = string.format([[
Where the layer goes is a design choice. The original recipe is
linear -> norm -> activation: the nonlinearity sees a standardized
input. Take one unit whose bias pushes its 64 pre-activations to
about -3: a ReLU passes %.0f%% of them. Normalized first, the ReLU
passes %.0f%%, whatever the bias was. Many networks swap the two and
normalize what comes out of the activation.]], 100 * ACTIVE_PLAIN, 100 * ACTIVE_NORM),
     set = {x = X, kind = "layer", eps = 0, gamma = {}, beta = {}, mode = "train",
            shift = 10, scale = 2, W = WROWS, placement = "none"}},

    {text = [[
In a residual block the question becomes pre-norm or post-norm:
  pre-norm   x + F(N(x))     the normalization inside the branch
  post-norm  N(x + F(x))     the normalization after the sum
Take F(x) = W x (the state's W field) and layer norm (eps 0) at
x = (0.5, -1, 2, 0.25): N alone has rank 2, as the spectrum (Alt-4)
shows with its two zero eigenvalues.]],
     focus = "spectrum"},

    {text = [[
D and F: the block Jacobians' singular values (l steps the placement).
Pre-norm keeps the identity path (none is 0); post-norm routes all
through N (two are 0).]],
     set = {placement = "pre"},
     focus = "residual",
     figure = function(s)
       local res = result().residual
       local pre, post = res.sv_pre, res.sv_post
       local v, labels = {}, {}
       for i = 1, #pre do v[i], labels[i] = pre[i], "pre  s" .. i end
       for i = 1, #post do v[#pre + i], labels[#pre + i] = post[i], "post s" .. i end
       return ns.plot.bars(v, {width = 64, height = 12, labels = labels,
                               title = "singular values of one block's Jacobian"})
     end},

    {text = [[
Stack ten blocks. The gradient that reaches the first block is the
product of the ten block Jacobians. With post-norm every factor has
rank 2, so the product has rank 2: half of the input directions get no
gradient at all. With pre-norm the identity path survives every block
and the smallest singular value stays away from 0. The figure (F) follows
the smallest singular value block by block (log scale; post-norm's is
0 up to rounding). (Alt-4)]],
     set = {placement = "post"},
     focus = "spectrum",
     figure = function(s)
       local floor = function(t)
         local o = {}
         for i, v in ipairs(t) do o[i] = math.max(v, 1e-18) end
         return o
       end
       return ns.plot.lines({{y = floor(STACKS.pre.smin), label = "pre-norm"},
                             {y = floor(STACKS.post.smin), label = "post-norm"}},
                            {width = 72, height = 12, log = "y", xlabel = "blocks",
                             ylabel = "smallest singular value",
                             title = "the product of the block Jacobians"})
     end},

    {text = string.format([[
After %d blocks at x = (0.5, -1, 2, 0.25): rank %d for post-norm, %d for
pre-norm. That surviving identity route is why deep Transformers are
mostly built pre-norm: the gradient reaches every input direction, and
such stacks often train without a warmup of the learning rate. Post-norm
stacks are harder to get going as they deepen, and pay for it even
though, once trained, they sometimes end up a little ahead. The input
panel now holds another x, (1, -2, 0.5, 3), for the exercise.
(Alt-1)]],
                         DEPTH, STACKS.post.rank[DEPTH], STACKS.pre.rank[DEPTH]),
     set = {x = {1, -2, 0.5, 3}},
     focus = "input",
     variant = function(seed, s)
       local g, v = ns.rng(seed), {}
       for i = 1, 4 do v[i] = math.floor(g:random() * 9) - 4 end
       if v[1] == v[2] and v[2] == v[3] and v[3] == v[4] then v[1] = v[1] + 1 end
       return {x = v}
     end,
     try = {text = [[
Exercise: what is the rank of the ten-block post-norm product for the x
in the input panel? Type = and a number; V gives another x. (The prompt
can check it with ns.residual_jacobian.)]],
            answer = {value = function(s)
                        return ns.rank((stack(s.x, "post", DEPTH)), 1e-10)
                      end, tol = 0},
            hints = {"Every factor of the product goes through N.",
                     "A product's rank is at most the smallest rank of its factors.",
                     "N has rank 2 for any non-constant x, so the product has rank 2 here."}}},
  },
}
