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
Pre-norm normalizes inside the branch: x + F(N(x)), so J_pre = I + W J_N.
The identity is a path around N: no direction is lost. The residual view
(D) puts J_pre beside J_post: s4 of J_pre is about 0.92, though J_N has
rank 2.]],
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
Post-norm normalizes after the sum: N(x + F(x)), so J_post =
J_N(x + W x) (I + W). Every path goes through J_N: its rank is at most 2
(D: "rank 2 of 4" under J_post), and two directions reach the next layer
with zero derivative.]],
     set = {placement = "post"},
     focus = "residual",
     claims = function(s)
       local r = result().residual
       assert(r.rank_post == ns.rank(j_post(s.x), 1e-10), "the D view's J_post is not this block")
       claim("c15-post-norm-rank", r.rank_post)
     end,
     try = {text = [[
Change x: J_post's rank stays 2 for any x that is not constant.]],
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
The identity term changes how derivatives flow through depth. It does
not prove pre-norm trains better: function, scale, eps and updates all
move with the placement. D is back at pre; l steps none, pre, post.]],
     set = {x = X, placement = "pre"},
     focus = "residual"},
  },
}
