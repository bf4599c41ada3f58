-- Text 001 (the review article), section 11 and the six-step protocol: what to check, in
-- which order, when training goes wrong after a normalization change.
local TINY = {{1, 2, 6}, {3, 2, 1}}

-- Largest |y - want| for a nested Lua matrix want.
local function off(y, want) return (y - ns.tensor(want)):abs():max() end

lesson{
  title = "A diagnostic sequence",
  source = "001_5d139345c05ab941.txt",
  section = "11 A practical diagnostic sequence; protocol",
  steps = {
    {text = [[
First check the axes and broadcasting on a tensor small enough to do by
hand. x is 2 x 3 (two examples, three features) under layer norm: row
(1, 2, 6) has mean 3 and variance 14/3, so its output is (-2, -1, 3) /
sqrt(14/3) = (-0.93, -0.46, 1.39). Compare with the output panel (Alt-3).]],
     set = {x = TINY, kind = "layer", axes = "default", eps = 1e-5, eps_at = "var", ddof = 0,
            gamma = {}, beta = {}, mode = "train", scale = 2, shift = 10},
     focus = "output",
     try = {text = [[
Now batch norm of the same x, by hand, before you look: type the batch
norm output of row 1, column 1 (the 1): = and a number.]],
            answer = {value = function(s)
                        return ns.normalize(s.x, {kind = "batch", eps = s.eps}):flat()[1]
                      end, tol = 1e-3},
            hints = {"Batch norm standardises each column: here two values per column.",
                     "Two values always standardise to -1 and +1 (up to eps); equal values " ..
                       "to 0.",
                     "-1: the 1 is the smaller of (1, 3). The next step switches to batch " ..
                       "norm, and column 2, (2, 2), gives 0."}}},

    {text = [[
Batch norm now: each column of two values became -1 and +1, and
column 2 came out as 0 without any complaint: eps kept the division by a
zero variance finite. That is how a stabilizer can hide an axis mistake,
the arithmetic succeeds and the meaning is wrong. Next, compare train
and eval mode on the same input with the stored statistics in hand.
(Alt-3)]],
     set = {kind = "batch"},
     focus = "output",
     try = {text = [[
Switch to eval mode (set{mode = "eval"}) and see how far the output
moves when the batch's statistics are replaced by the stored ones.]],
            check = function(s)
              return s.mode == "eval" or "mode is still " .. s.mode
            end,
            hints = {"m switches between train and eval mode",
                     [[set{mode = "eval"}]]},
            show = {mode = "eval"}}},

    {text = [[
Third, the denominators: before any learning rate takes the blame, see
how small sqrt(var + eps) gets. The output panel (Alt-3) has the worst case, the
constant row (5, 5, 5, 5). Its variance is 0, the denominator is
sqrt(1e-5) = 0.0032 and y = 0. That answer comes from eps alone; no
invariance of the map is involved.]],
     set = {x = {5, 5, 5, 5}, kind = "layer", mode = "train"},
     focus = "output",
     try = {text = [[
Drop eps (set{eps = 0}): now the variance is exactly 0 and the panel
reports the degenerate statistic (y is 0/0).]],
            check = function(s)
              local c = result().cond
              return c ~= "none" or "no degenerate statistic reported"
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 0}]]},
            show = {eps = 0}}},

    {text = [[
Fourth, the derivatives: a forward pass that runs proves nothing about
them. The spectrum panel (Alt-4) holds the analytic Jacobian and one from
finite differences (its FD column): when they agree, the code does what
the formula says. Here x = (1, 1.001, 0.999) has a
variance of about 7e-7, below eps, and the columns still agree. eps now
rules the map, though: the scale probe (a = 2) moves y by about 0.26,
where an exactly scale-invariant map would give 0.]],
     set = {x = {1, 1.001, 0.999}, eps = 1e-5},
     focus = "spectrum",
     try = {text = [[
Set eps = 0 (set{eps = 0}) and the scale probe's change drops to
rounding level: the behaviour follows the declared eps.]],
            check = function(s)
              local d = result().scale_dev
              return d < 1e-9 or string.format("the scale probe changes y by %.3g", d)
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 0}]]},
            show = {eps = 0}}},

    {text = [[
The article's protocol, six steps, each met on this screen:
 1. Settings in full: shape, axes, n or n-1, eps, gamma/beta (s00).
 2. A tensor small enough for pencil, against the output (step 1 here).
 3. The spectrum's analytic and FD columns, at nonzero variance (s05).
 4. The batch panel: one target row kept, its companions changed (s06).
 5. Stored statistics kept with the model; modes switched on purpose (s07).
 6. The interventions listed before a change is put down to one (s09).
Step 1 starts in the settings panel (Alt-2).]],
     focus = "settings"},
  },
}
