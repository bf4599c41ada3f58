-- Text 004 (the essay), "Price 1", second half: the sample standard deviation as an
-- estimator (table 3). Its bias and spread are computed exactly with c4(n) and, beside
-- them, simulated with a fixed seed and number of draws; the large-batch laws -3/(4n) and
-- 1/sqrt(2n); the split of the bias; ddof = 1.
local SIZES = {2, 4, 8, 32, 256}
-- The simulation of the table: DRAWS batches of n standard normal values per size, from
-- numpy-compatible default_rng(SEED + n). Its values are estimates (shown, not claimed).
local SEED, DRAWS = 2024, 20000

-- Exact moments of the ddof-0 std s of n standard normal values:
-- E[s] = sqrt((n-1)/n) c4(n), E[s^2] = (n-1)/n.
local function mean_s(n) return math.sqrt((n - 1) / n) * ns.c4(n) end
local function bias(n) return mean_s(n) - 1 end
local function spread(n) return math.sqrt((n - 1) / n - mean_s(n) ^ 2) end
local function bias_law(n) return -3 / (4 * n) end
local function spread_law(n) return 1 / math.sqrt(2 * n) end

-- Simulated bias and spread: the ddof-0 std of each of DRAWS batches (rows).
local sims = {}
local function simulated(n)
  if not sims[n] then
    local s = ns.rng(SEED + n):normal(0, 1, {DRAWS, n}):std({2})
    sims[n] = {bias = s:mean() - 1, spread = s:std()}
  end
  return sims[n]
end

-- Eight values from a standard normal, for the output panel's ddof switch.
local EIGHT = ns.rng(8):normal(0, 1, 8)

lesson{
  title = "Price 1: how wrong the batch's standard deviation is",
  source = "004_f7fd3ff892c4fe59.txt",
  section = "Price 1: it depends on the batch (the estimator)",
  steps = {
    {text = string.format([[
The batch's std still is a poor estimate of the population's, in two
ways: on average it is too low (bias), and it moves from batch to batch
(spread). Both are known exactly for normal data through c4(n), the
ratio E[std with n-1] / sigma. The table puts the exact values beside a
simulation: %d batches per size from default_rng(%d + n) (the figure
above). The essay printed simulated values; the registry checks the
exact ones.]], DRAWS, SEED),
     view = "figure",
     figure = function(s)
       local lines = {"Table 3: the ddof-0 std of n values from N(0, 1)",
                      "             bias (E[s] - 1)          spread (sd of s)",
                      "    n     exact  simulated        exact  simulated"}
       for _, n in ipairs(SIZES) do
         local m = simulated(n)
         lines[#lines + 1] = string.format("  %3d  %8.4f   %8.4f     %8.4f   %8.4f", n, bias(n),
                                           m.bias, spread(n), m.spread)
       end
       lines[#lines + 1] = string.format("exact: from c4(n); simulated: %d draws, seed %d + n",
                                         DRAWS, SEED)
       return table.concat(lines, "\n")
     end,
     claims = function(s)
       for _, n in ipairs(SIZES) do
         claim("e-std-bias-" .. n, bias(n))
         claim("e-std-spread-" .. n, spread(n))
       end
     end},

    {text = [[
Large batches follow simple laws: spread about 1/sqrt(2n) (0.1250 at
n = 32, exactly 0.1245), bias about -3/(4n). First-order, they fail at
tiny batches: at n = 2 the bias law is off by 14 %, the spread law by
17 %; from n = 8 up, by a few percent. The figure above: law over exact.]],
     view = "figure",
     figure = function(s)
       local b, sp = {}, {}
       for i, n in ipairs(SIZES) do
         b[i], sp[i] = bias_law(n) / bias(n), spread_law(n) / spread(n)
       end
       return ns.plot.scatter(SIZES, {b, sp},
                              {width = 72, height = 12, log = "x", xlabel = "batch n",
                               ylabel = "law / exact", range = {0.8, 1.2},
                               labels = {"bias -3/(4n)", "spread 1/sqrt(2n)"},
                               title = "large-batch laws against the exact values"})
     end,
     claims = function(s)
       claim("e-spread-approx-32", spread_law(32))
       claim("e-approx-err-2-bias", math.abs(bias_law(2) - bias(2)) / math.abs(bias(2)))
       claim("e-approx-err-2-spread", math.abs(spread_law(2) - spread(2)) / spread(2))
     end},

    {text = [[
Where the bias comes from. Dividing by n, not n - 1, lowers the
variance by (n-1)/n: about -1/(2n) on the std. The square root lowers it
again (Jensen): about -1/(4n). At n = 8: -0.0625 and -0.0313. With
ddof = 1 only the second stays: c4(8) - 1, still -3.5 %. Frameworks'
batch norm divides by n too: not a NumPy habit.
The output panel (Alt-3): 8 values from N(0, 1), layer-normalised,
ddof = 0.]],
     set = {x = EIGHT, kind = "layer", eps = 0, ddof = 0, gamma = {}, beta = {}},
     focus = "output",
     claims = function(s)
       claim("e-ddof1-bias-8", ns.c4(8) - 1)
     end,
     try = {text = [[
Switch to ddof = 1 (set{ddof = 1}): the variance grows by 8/7, y
shrinks by sqrt(7/8).]],
            check = function(s)
              return s.ddof == 1 or "ddof is still " .. s.ddof
            end,
            hints = {"d switches ddof between 0 and 1",
                     [[set{ddof = 1}]]},
            show = {ddof = 1}}},

    {text = [[
So the estimation error of a batch's std is mostly not a shift of scale
(the output std is 1 anyway, lesson 004-03): it is a wobble from batch
to batch, about 1/sqrt(2n) in size. That wobble is what the next section
calls the regularising effect of batch norm.]],
     try = {text = [[
How large must a batch be for the wobble law 1/sqrt(2n) to fall to 0.05?
Type = and the batch size n.]],
            answer = {value = function(s) return 1 / (2 * 0.05 ^ 2) end, tol = 0.5},
            hints = {"Solve 1 / sqrt(2n) = 0.05 for n.",
                     "sqrt(2n) = 20, so 2n = 400.",
                     "n = 200: a batch of 200 still wobbles by 5 %."}}},
  },
}
