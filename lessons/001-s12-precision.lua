-- Text 001 (the review article), section 12: the dtype values are stored in and the dtype
-- their sums run in both belong to the layer's definition; the precision panel's fp64
-- reference column is the check to run before a discrepancy is blamed on the map.

lesson{
  title = "Precision belongs in the specification",
  source = "001_5d139345c05ab941.txt",
  section = "12 Precision belongs in the specification",
  steps = {
    {text = [[
A denominator that is positive in exact arithmetic can still be computed
badly. Take (10001, 10002, 10004): the same spread as (1, 2, 4), variance
14/9 = 1.556, on top of a large mean. Stored and summed in fp32, the
precision panel (Alt-7) compares three ways to get the variance with an fp64
two-pass reference. mean(x^2) - mean(x)^2 ("raw") subtracts two numbers
near 1e8 and keeps nothing (16 instead of 1.556); centering first
("twopass") keeps about 7 digits.]],
     set = {x = {10001, 10002, 10004}, kind = "layer", dtype = "fp32", acc = "default",
            algo = "twopass", eps = 1e-5, gamma = {}, beta = {}},
     focus = "precision"},

    {text = [[
The accumulation dtype matters as much as the storage. (101, 102, 104)
is exact in fp16, but summing squares near 1e4 in fp16 (11 bits) gives a
raw variance of 8. (Alt-7)]],
     set = {x = {101, 102, 104}, dtype = "fp16", acc = "fp16"},
     focus = "precision",
     try = {text = [[
Keep fp16 storage and accumulate in fp32 (set{acc = "fp32"}): the raw
formula gets about 4 digits back.]],
            check = function(s)
              local e = result().precision.raw.relerr
              return e < 1e-3 or string.format("raw is still off by %.3g (relative)", e)
            end,
            hints = {"T steps the accumulation dtype",
                     [[set{acc = "fp32"}]]},
            show = {acc = "fp32"}}},

    {text = [[
The article works in fp64 throughout and leaves formats to whoever
implements the layer. What it asks of them is this screen: write down
the dtype the sums run in (the acc row of the settings panel), and hold
a small-variance input against an fp64 reference, as the precision
panel's reference column does, before a difference is blamed on the
normalization itself. (Alt-7)]],
     focus = "precision",
     try = {text = [[
Move the same input to fp64 storage (set{dtype = "fp64", acc =
"default"}) and check that every row of the precision panel agrees with
the reference to at least 12 digits.]],
            check = function(s)
              local p = result().precision
              for _, a in ipairs({"raw", "twopass", "welford"}) do
                if p[a].digits < 12 then
                  return string.format("%s agrees to %.1f digits only", a, p[a].digits)
                end
              end
              return true
            end,
            hints = {"t steps the storage dtype",
                     [[set{dtype = "fp64", acc = "default"}]]},
            show = {dtype = "fp64", acc = "default"}}},
  },
}
