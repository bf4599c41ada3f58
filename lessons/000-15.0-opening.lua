-- Text 000 (chapter 15), the opening: one shift by ten that the centered map forgets and
-- the RMS map remembers, and a variance that fp32 arithmetic turns into zero.
local X = {-2, -1, 1, 2}
local NEAR = {9998, 9999, 10001, 10002}

lesson{
  title = "A shift by ten, and a variance that vanishes",
  source = "000_b251982bd6a65d6e.txt",
  section = "opening",
  steps = {
    {text = [[
Two normalization maps are often treated as interchangeable. This lesson
shows in two experiments that they are not.

The input is x = (-2, -1, 1, 2), the map is the centered one (kind layer:
subtract the mean, divide by the standard deviation), and eps is 0. The
output panel (Alt-3) also normalizes x + 10, the input shifted by ten in every
coordinate (the shift probe).

Look at the shifted column: it is the same as y. Centering removed the ten.]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "output"},

    {text = [[
Now use the RMS map (kind rms): it divides x by its root mean square and
never subtracts the mean. The same shift by ten now changes the output:
the largest change over the four coordinates is about 2.055.

The two maps agree on x itself (its mean is 0) but not on x + 10. They
keep different information about the input. (Alt-3)]],
     set = {kind = "rms"},
     focus = "output",
     claims = function(s)
       claim("c15-rms-shift-maxdiff", result().shift_dev)
     end,
     try = {text = [[
Switch back to the centered map (press K, or set{kind = "layer"}) and
watch the largest change fall back to 0.]],
            check = function(s)
              if s.kind ~= "layer" then return "the kind is still " .. s.kind end
              return result().shift_dev == 0 or "the shifted output still differs"
            end,
            hints = {"k and K step the kind (settings panel, Alt-2)",
                     [[set{kind = "layer"}]]},
            show = {kind = "layer"}}},

    {text = [[
The second experiment is about arithmetic. Take four values close to ten
thousand, (9998, 9999, 10001, 10002), stored in fp32 and summed in fp32.

The precision panel (Alt-7) computes their variance three ways. The raw-moment
formula mean(x^2) - mean(x)^2 gives exactly 0: both terms are about 1e8,
fp32 keeps only about 7 digits, and the difference 2.5 is lost.]],
     set = {x = NEAR, kind = "layer", dtype = "fp32"},
     focus = "precision",
     claims = function(s)
       claim("c15-fp32-raw-var", result().precision.raw.var)
     end},

    {text = [[
The two-pass formula subtracts the mean first and then averages the
squared deviations (1, 4 and their like). The numbers stay small, in the
same fp32 arithmetic. The precision panel's
twopass row shows it.

Same data, same format, two formulas: only one is a variance.
(Alt-7)]],
     predict = {question = "fp32, x = (9998, 9999, 10001, 10002): what does the two-pass formula " ..
                  "(subtract the mean, then average the squares) give for the variance?",
                value = function(s) return result().precision.twopass.var end, tol = 1e-6},
     focus = "precision",
     claims = function(s)
       claim("c15-fp32-centered-var", result().precision.twopass.var)
     end},

    {text = [[
A prediction before the chapter starts. Replace "layer norm" or "RMS norm"
by what the rule does. Five things describe it: the change of the input
it ignores (its invariance), the input directions its Jacobian sends to
zero (its nullspace), the statistic it computes, where it sits in the
network (its placement) and the arithmetic it relies on (its precision
contract). The next lessons take them one by one; the first is on screen:
The output panel (Alt-3) shows both probes on the centered map
with eps 0: x + 10 and 2x.]],
     predict = {question = "Before the chapter: the centered map (subtract the mean, divide by " ..
                  "the std), eps 0. Which changes of x leave its output as it is?",
                choices = {"adding one number to every coordinate",
                           "multiplying x by a positive number", "both of these", "neither"},
                answer = function(s)
                  local r = result()
                  local shift, scale = r.shift_dev == 0, r.scale_dev < 1e-12
                  return shift and scale and 3 or shift and 1 or scale and 2 or 4
                end},
     set = {x = X, dtype = "fp64", kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "output"},
  },
}
