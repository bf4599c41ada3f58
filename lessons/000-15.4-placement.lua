-- Text 000 (chapter 15), section 15.4: where the normalization sits in a residual block
-- decides which paths the derivative can take.
local X = {0.5, -1, 2, 0.25}
-- The residual branch F(x) = W x of the chapter (rows). The state's W field holds the
-- same matrix, so the residual view (D) shows the block these steps talk about.
local WROWS = {{0.5, -0.2, 0.1, 0}, {0.3, 0.4, -0.1, 0.2},
               {-0.2, 0.1, 0.6, -0.3}, {0, 0.2, 0.1, 0.5}}
local W = ns.tensor(WROWS)
local SPEC = {kind = "layer", eps = 0}

-- x as a column (4 x 1) and back to a vector
local function col(v) return v:reshape({#v, 1}) end
local function vec(m) return m:reshape({#m}) end

-- J_pre = I + W J_N(x): the block x + F(N(x)).
local function j_pre(x)
  return ns.eye(#x) + ns.matmul(W, ns.jacobian(x, SPEC))
end

-- J_post = J_N(x + W x) (I + W): the block N(x + F(x)).
local function j_post(x)
  local z = x + vec(ns.matmul(W, col(x)))
  return ns.matmul(ns.jacobian(z, SPEC), ns.eye(#x) + W)
end

lesson{
  title = "Placement changes the derivative path",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.4 Placement changes the derivative path",
  steps = {
    {text = [[
A residual block adds a branch F to its input. Take F(x) = W x with a
fixed 4 x 4 matrix W, the centered map N with eps = 0, and the input
x = (0.5, -1, 2, 0.25). On its own, N's Jacobian J_N has rank 2 here:
the spectrum panel (Alt-4) shows the ones and radial eigenvalues at 0.]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2, W = WROWS,
            placement = "none"},
     focus = "spectrum"},

    {text = [[
Pre-normalization normalizes inside the branch: x + F(N(x)). Its
Jacobian is J_pre = I + W J_N. The identity term is a path around N, so
no direction is lost: the smallest singular value of J_pre is about 0.92,
far from 0, even though J_N itself has rank 2. The residual view (D)
shows J_pre and J_post side by side for this W: read s4 of J_pre.]],
     set = {placement = "pre"},
     focus = "residual",
     claims = function(s)
       -- the number the D view prints; the lesson's own J_pre must agree with it
       local sv = result().residual.sv_pre
       local own = ns.svdvals(j_pre(s.x))
       assert(math.abs(sv[#sv] - own[#own]) < 1e-12, "the D view's J_pre is not this block")
       claim("c15-pre-norm-smin", sv[#sv])
     end},

    {text = [[
Post-normalization normalizes after the sum: N(x + F(x)). Its Jacobian
is J_post = J_N(x + W x) (I + W): every path goes through J_N, so the rank
can be no more than J_N's. It is 2 (D: "rank 2 of 4" under J_post): two
input directions reach the next layer with zero derivative.]],
     set = {placement = "post"},
     focus = "residual",
     claims = function(s)
       local r = result().residual
       assert(r.rank_post == ns.rank(j_post(s.x), 1e-10), "the D view's J_post is not this block")
       claim("c15-post-norm-rank", r.rank_post)
     end,
     try = {text = [[
Change x (e.g. set{x = {1, -2, 0.5, 3}}): the rank of J_N, and with it
the bound on J_post, stays 2 for any x that is not constant.]],
            check = function(s)
              local f = s.x:flat()
              local same = #f == #X
              for i = 1, #X do same = same and f[i] == X[i] end
              if same then return "change x first" end
              local r = ns.rank(j_post(s.x), 1e-10)
              return r == 2 or "the rank of J_post is " .. r
            end,
            hints = {"type into the input panel (Alt-1): the arrows move, a number and Enter set a cell",
                     [[set{x = {1, -2, 0.5, 3}}]]},
            show = {x = {1, -2, 0.5, 3}}}},

    {text = [[
What this does and does not show: the identity term in J_pre changes how
derivatives flow through depth, and a residual branch still has to be
kept under control. It does not prove that pre-normalized networks train
better: the learned function, the scale, eps and the updates all change
with the placement. The residual view (D) is back at pre-norm: l steps
the placement through none, pre and post.]],
     set = {x = X, placement = "pre"},
     focus = "residual"},
  },
}
