-- Text 000 (chapter 15), section 15.6: the check-yourself questions, each answered on the
-- screen (nullspaces at d = 4, ranks, and what eps leaves exact).
local X = {-2, -1, 1, 2}

local function jac_rank(s)
  return ns.rank(ns.jacobian(s.x, {kind = s.kind, eps = s.eps}), 1e-10)
end

-- Whether the state's x differs from X but the map gives the same output (eps 0).
local function same_output(s, kind)
  local f = s.x:flat()
  local same = #f == #X
  for i = 1, #X do same = same and f[i] == X[i] end
  if same then return "change x first" end
  if #f ~= #X then return "keep four values" end
  local y0 = ns.normalize(ns.tensor(X), {kind = kind, eps = 0})
  local d = (ns.normalize(s.x, {kind = kind, eps = 0}) - y0):abs():max()
  return d < 1e-12 or string.format("the output changed by %.3g", d)
end

lesson{
  title = "Check yourself: nullspaces, ranks, and what eps keeps",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.6 Check yourself",
  steps = {
    {text = [[
Question 1. For d = 4, which directions are in the nullspace of the
centered map's Jacobian? Answer: the all-ones vector and the centered
input itself, P x. Rank 4 - 2 = 2. Test the first one on the screen.]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "spectrum",
     try = {text = [[
Move x along the ones direction (add the same number to every value,
e.g. set{x = {3, 4, 6, 7}}) and check that the output does not move.]],
            check = function(s) return same_output(s, "layer") end,
            show = {x = {3, 4, 6, 7}}}},

    {text = [[
Question 2. And for the RMS map? Only the radial direction x / ||x||:
rank 3. Along ones the output moves; along x itself it does not.]],
     set = {x = X, kind = "rms"},
     focus = "spectrum",
     try = {text = [[
Move x along itself (set{x = {-4, -2, 2, 4}}, twice x) and check that the
RMS output does not move.]],
            check = function(s) return same_output(s, "rms") end,
            show = {x = {-4, -2, 2, 4}}}},

    {text = [[
Question 3. Add eps = 1e-5. Which zero eigenvalues survive? For the
centered map only the ones direction stays exactly null (P 1 = 0 still);
the radial eigenvalue becomes eps / s^3. Rank 3.]],
     set = {x = X, kind = "layer", eps = 1e-5},
     focus = "spectrum",
     claims = function(s)
       claim("c15-rank-centered-eps", jac_rank(s))
     end},

    {text = [[
For the RMS map with eps = 1e-5 nothing stays null: the radial
eigenvalue is eps / r^3 with r = sqrt(mean(x^2) + eps). Full rank 4.]],
     set = {kind = "rms"},
     focus = "spectrum",
     claims = function(s)
       claim("c15-rank-rms-eps", jac_rank(s))
     end},

    {text = [[
Question 4. Which invariances stay exact with eps? Shift invariance of
the centered map does: eps is added to m2, and m2 does not see a shift.
The shift probe still shows 0.]],
     set = {kind = "layer"},
     focus = "output",
     claims = function(s)
       claim("c15-eps-shift-dev", result().shift_dev)
     end},

    {text = [[
Scale invariance becomes approximate: the scale probe is no longer 0,
only small while m2 stays well above eps.]],
     focus = "output",
     try = {text = [[
Find a scale a for the scale probe at which the output changes by more
than 0.1 (hint: make m2 = 2.5 a^2 comparable to eps).]],
            check = function(s)
              local d = result().scale_dev
              return d > 0.1 or string.format("the change is %.3g", d)
            end,
            show = {scale = 1e-3}}},
  },
}
