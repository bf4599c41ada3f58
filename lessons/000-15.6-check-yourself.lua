-- Text 000 (chapter 15), section 15.6: the check-yourself questions, each answered on the
-- screen (nullspaces at d = 4, ranks, and what eps leaves exact).
local X = {-2, -1, 1, 2}
local X6 = {-3, -1, 0.5, 1, 2, 4} -- a generic x of six values, for the questions' d = 6

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
the centered map's Jacobian, and what rank follows? The output panel
(Alt-3) has the centered map at eps 0 with its two probes, x + 10 and 2x:
they are the place to start. The spectrum panel (Alt-4) already prints
the rank for this x, so the question to answer is the next size up.]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "output",
     try = {text = [[
For a generic x of d = 6 values, what is the rank of the centered map's
Jacobian? Type = and a number.]],
            answer = {value = function(s) return jac_rank({x = ns.tensor(X6), kind = "layer",
                                                            eps = 0}) end, tol = 0},
            hints = {"Which probe leaves y where it is? Each one is a direction x can move " ..
                       "along without changing y.",
                     "Adding 10 moves x along the all-ones vector; doubling it moves x " ..
                       "along itself (the radial direction).",
                     "Two directions are lost at any d: rank 4 - 2 = 2 here, 6 - 2 = 4 " ..
                       "for d = 6."}}},

    {text = [[
Answer 1: the all-ones vector and the centered input P x itself (the
shift and the scale). Two directions, so rank 4 - 2 = 2: the spectrum
panel (Alt-4) lists the "ones" and "radial" eigenvalues at 0.]],
     focus = "spectrum",
     try = {text = [[
Test a direction you named: move x along it, with the input panel
(Alt-1, then type the values) or set{x = {...}}, and check that y does
not move.]],
            check = function(s) return same_output(s, "layer") end,
            hints = {"Adding the same number to every value moves x along the ones vector.",
                     "set{x = {3, 4, 6, 7}}"},
            show = {x = {3, 4, 6, 7}}}},

    {text = [[
Question 2. And for the RMS map (kind rms, k in the settings)? Which
direction does it ignore, and does the ones direction still count? The
output panel (Alt-3) shows the RMS map with the same two probes.]],
     set = {x = X, kind = "rms"},
     focus = "output",
     try = {text = [[
For a generic x of d = 6 values (the spectrum prints the answer for
this one), what is the rank of the RMS map's Jacobian? Type = and a
number.]],
            answer = {value = function(s) return jac_rank({x = ns.tensor(X6), kind = "rms",
                                                            eps = 0}) end, tol = 0},
            hints = {"Read the probes: which of them now changes y?",
                     "The shift probe moves y: the ones direction is kept. Only x / ||x|| " ..
                       "is left out.",
                     "One direction lost at any d: rank 4 - 1 = 3 here, 6 - 1 = 5 for " ..
                       "d = 6."}}},

    {text = [[
Answer 2: only the radial direction x / ||x||. Along ones the RMS output
moves (the shift probe is not 0), so the rank is 4 - 1 = 3: the spectrum
panel (Alt-4) has radial at 0 and no ones row.]],
     focus = "spectrum",
     try = {text = [[
Move x along the one direction the RMS map ignores (set{x = {...}}) and
check that y stays where it is.]],
            check = function(s) return same_output(s, "rms") end,
            hints = {"The RMS map ignores positive scaling: multiply x by a number > 0.",
                     "set{x = {-4, -2, 2, 4}}"},
            show = {x = {-4, -2, 2, 4}}}},

    {text = [[
Question 3. Give the centered map eps = 1e-5 (e and E in the settings
step it). The spectrum panel (Alt-4) shows which of its two
zero eigenvalues moved.]],
     predict = {question = "x = (-2, -1, 1, 2), eps = 1e-5: which zero eigenvalues of the centered map " ..
                  "stay exactly 0?",
                choices = {"ones and radial", "only ones", "only radial", "neither"},
                answer = function(s)
                  local ones, radial
                  for _, e in ipairs(result().jacobian.closed) do
                    if e.label == "ones" then ones = e.value == 0 end
                    if e.label == "radial" then radial = e.value == 0 end
                  end
                  return ones and radial and 1 or ones and 2 or radial and 3 or 4
                end},
     set = {x = X, kind = "layer", eps = 1e-5},
     focus = "spectrum",
     claims = function(s)
       claim("c15-rank-centered-eps", jac_rank(s))
     end},

    {text = [[
Answer 3: only the ones direction stays exactly null, since P 1 = 0 does
not involve eps. The radial eigenvalue becomes eps / s^3, small but not
0: rank 3. Now the RMS map with the same eps (kind rms); once you
answer, the spectrum panel (Alt-4) shows it.]],
     predict = {question = "The RMS map at x = (-2, -1, 1, 2) with eps = 1e-5: the rank of its " ..
                  "Jacobian (d = 4)?",
                value = function(s) return jac_rank(s) end, tol = 0},
     set = {kind = "rms"},
     focus = "spectrum",
     claims = function(s)
       claim("c15-rank-rms-eps", jac_rank(s))
     end},

    {text = [[
Nothing stays null for the RMS map: its radial eigenvalue is eps / r^3
with r = sqrt(mean(x^2) + eps), and it had no ones direction. Full rank.

Question 4. Which invariances stay exact with eps? The
output panel (Alt-3) shows the centered map's shift probe with eps = 1e-5.]],
     predict = {question = "With eps = 1e-5, is the centered map still exactly shift " ..
                  "invariant?",
                choices = {"yes, exactly", "only approximately", "no"},
                answer = function(s)
                  local d = result().shift_dev
                  return d == 0 and 1 or d < 1e-6 and 2 or 3
                end},
     set = {kind = "layer"},
     focus = "output",
     claims = function(s)
       claim("c15-eps-shift-dev", result().shift_dev)
     end},

    {text = [[
Shift invariance stays exact: eps is added to m2, and m2 does not see a
shift. Scale invariance becomes approximate: the scale probe (2x) is no
longer 0, only small while m2 stays well above eps.
(Alt-3)]],
     focus = "output",
     try = {text = [[
Find a scale a for the scale probe (z halves it, Z doubles it, or
set{scale = ...}) at which the output changes by more than 0.1.]],
            check = function(s)
              local d = result().scale_dev
              return d > 0.1 or string.format("the change is %.3g", d)
            end,
            hints = {"The probe divides by sqrt(a^2 m2 + eps) with m2 = 2.5: eps must " ..
                       "not be negligible next to a^2 m2.",
                     "a^2 x 2.5 near 1e-5 means a near 2e-3: try a = 1e-3.",
                     "set{scale = 1e-3}"},
            show = {scale = 1e-3}}},
  },
}
