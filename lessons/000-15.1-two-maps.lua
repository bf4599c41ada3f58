-- Text 000 (chapter 15), section 15.1: the centered map and the RMS map, what each one
-- forgets (shift, scale), and the ranks of their Jacobians (Theorem 15.1).
local X = {-2, -1, 1, 2}

-- The largest absolute entry of a tensor.
local function maxabs(t) return t:abs():max() end

-- rank (tolerance 1e-10 on the singular values) of the map's Jacobian at the state's x
local function jac_rank(s)
  return ns.rank(ns.jacobian(s.x, {kind = s.kind, eps = s.eps}), 1e-10)
end

-- Is the state's x the same tensor as X?
local function is_default_x(s)
  local f = s.x:flat()
  if #f ~= #X then return false end
  for i = 1, #X do if f[i] ~= X[i] then return false end end
  return true
end

lesson{
  title = "Two maps, two things they forget",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.1 Two maps, two quotients",
  steps = {
    {text = [[
Leave out the learned gamma and beta and set eps to 0. The centered map
removes the mean and rescales what is left to root mean square 1:

  N_C(x) = sqrt(d) Px / ||Px||,   P = I - 1 1^T / d

The projection P subtracts the mean of x = (-2, -1, 1, 2) from every entry;
the output panel shows y = (-1.26, -0.63, 0.63, 1.26). Here d = 4 (Alt-3).]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "output"},

    {text = [[
Adding the same number to every coordinate changes only the mean, and P
removes the mean, so N_C(x + 10) lands where N_C(x) is: the
shift probe (the x+10 column and its max|y'-y| line) shows it.
(Alt-3)]],
     predict = {question = "The centered map N_C at x = (-2, -1, 1, 2): how far does N_C(x + 10) " ..
                  "move from N_C(x), at most?",
                value = function(s) return result().shift_dev end, tol = 1e-12},
     focus = "output",
     claims = function(s)
       claim("c15-centered-shift-dev", result().shift_dev)
     end},

    {text = [[
The RMS map skips the centering:

  N_R(x) = sqrt(d) x / ||x||

This x has mean 0, so P x = x and both maps give the same y here. Shift
it by ten and they part: N_R(x + 10) starts at 8 / sqrt(mean(8^2, 9^2,
11^2, 12^2)) = 0.79 instead of -1.26. The constant part survives.
(Alt-3; F: figure)]],
     predict = {question = [[
Under the RMS map, shift x = (-2, -1, 1, 2) by ten. What will the first
output, N_R(x + 10)[1], be? (The centered map gives -1.26.)]],
                value = function(s) return result().y_shift[1] end, tol = 0.01},
     set = {kind = "rms"},
     focus = "output",
     figure = function(s)
       local x = s.x
       local c0 = ns.normalize(x, {kind = "layer", eps = 0})
       local c10 = ns.normalize(x + 10, {kind = "layer", eps = 0})
       local r0 = ns.normalize(x, {kind = "rms", eps = 0})
       local r10 = ns.normalize(x + 10, {kind = "rms", eps = 0})
       return ns.plot.lines({{y = c0, label = "centered x"}, {y = c10, label = "centered x+10"},
                             {y = r0, label = "RMS x"}, {y = r10, label = "RMS x+10"}},
                            {width = 72, height = 14, xlabel = "coordinate",
                             ylabel = "normalized value",
                             title = "Fig. 15.1: the RMS map keeps the shift"})
     end,
     claims = function(s)
       local rms = ns.normalize(s.x, {kind = "rms", eps = 0})
       local centered = ns.normalize(s.x, {kind = "layer", eps = 0})
       claim("c15-fig1-rms-vs-centered-at-x", maxabs(rms - centered))
       claim("c15-fig1-rms-shifted-1", result().y_shift[1])
     end},

    {text = [[
Scaling is a different story: both maps divide by a norm, so multiplying
x by a positive number a changes nothing. The scale probe uses a = 3 and
the RMS map: the largest change is 0. (Alt-3)]],
     set = {scale = 3},
     focus = "output",
     claims = function(s)
       claim("c15-scale-inv-rms", result().scale_dev)
     end},

    {text = [[
The centered map ignores positive scaling too (still a = 3). So the
centered map forgets shift and scale, the RMS map forgets scale only.
(Alt-3)]],
     set = {kind = "layer"},
     focus = "output",
     claims = function(s)
       claim("c15-scale-inv-centered", result().scale_dev)
     end},

    {text = [[
What a map forgets shows up in its Jacobian. Theorem 15.1 (eps 0):

  J_C = sqrt(d)/||P x|| (P - v v^T),   v = P x / ||P x||

J_C sends two directions to 0: the all-ones vector (the shift) and v
itself (the radial direction, the scale). The spectrum panel (Alt-4) shows the
two zero eigenvalues, "ones" and "radial": rank d - 2 = 2.]],
     focus = "spectrum",
     claims = function(s)
       claim("c15-rank-centered", jac_rank(s))
     end},

    {text = [[
For the RMS map, with u = x / ||x||,

  J_R = sqrt(d)/||x|| (I - u u^T)

Only the radial direction u goes to 0: the shift direction is kept, and
the rank is d - 1 = 3. (Alt-4)]],
     set = {kind = "rms"},
     focus = "spectrum",
     claims = function(s)
       claim("c15-rank-rms", jac_rank(s))
     end,
     try = {text = [[
The theorem says "generically": the ranks hold for almost every x. Type
another x in the input panel, e.g. set{x = {1, 2, 3, 5}}, and check that
the RMS rank stays 3 (and 2 for kind layer).]],
            check = function(s)
              if is_default_x(s) then return "change x first" end
              local want = s.kind == "rms" and 3 or s.kind == "layer" and 2 or nil
              if not want then return "use kind rms or layer" end
              local r = result().jacobian.rank
              return r == want or ("the rank is " .. tostring(r) .. ", expected " .. want)
            end,
            hints = {"x changes at the prompt (:) with set{x = {...}}, or cell by cell in " ..
                     "the input panel (Alt-1, arrows, digits).",
                     "set{x = {1, 2, 3, 5}}: the spectrum panel's rank line then reads 3."},
            show = {x = {1, 2, 3, 5}}}},

    {text = [[
One input the theorem leaves out: a constant x such as (3, 3, 3, 3). Then
P x = 0, the centered map divides 0 by 0 and the output panel (Alt-3) reports a
degenerate statistic; the Jacobian is not defined. This is the case an
eps > 0 exists for (next lesson).]],
     set = {x = {3, 3, 3, 3}, kind = "layer"},
     focus = "output"},
  },
}
