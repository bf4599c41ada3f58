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
Question 1. For d = 4, which input directions are in the nullspace of
the centered map's Jacobian, and what rank follows? Predict first, then
test a direction: a change of x along it must leave y where it is.]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "output",
     try = {text = [[
Move x along the direction you predicted, e.g. add the same number to
every value (set{x = {3, 4, 6, 7}}), and check that y does not move.]],
            check = function(s) return same_output(s, "layer") end,
            show = {x = {3, 4, 6, 7}}}},

    {text = [[
Answer 1: the all-ones vector and the centered input P x itself (the
shift and the scale). Two directions, so rank 4 - 2 = 2: the spectrum
panel shows the "ones" and "radial" eigenvalues at 0.]],
     set = {x = X},
     focus = "spectrum"},

    {text = [[
Question 2. And for the RMS map (kind rms)? Which direction does it
ignore, and does the ones direction still count?]],
     set = {kind = "rms"},
     focus = "output",
     try = {text = [[
Test your answer: move x along the direction you think the RMS map
ignores (for example set{x = {-4, -2, 2, 4}}, twice x).]],
            check = function(s) return same_output(s, "rms") end,
            show = {x = {-4, -2, 2, 4}}}},

    {text = [[
Answer 2: only the radial direction x / ||x||. Along ones the RMS output
moves (the shift probe is not 0), so the rank is 4 - 1 = 3.]],
     set = {x = X},
     focus = "spectrum"},

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
