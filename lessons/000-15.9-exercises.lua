-- Text 000 (chapter 15), section 15.9: the five exercises, as things to do on the screen;
-- exercise 2's answer (the first failing offset) is computed and claimed.
local X = {-2, -1, 1, 2}

-- The four values (o-2, o-1, o+1, o+2).
local function witness(o) return {o - 2, o - 1, o + 1, o + 2} end

-- The raw-moment variance of the witness in fp32 (stored and summed in fp32).
local function raw_fp32(o)
  return ns.moments(ns.tensor(witness(o)), {dtype = "fp32", acc = "fp32", algo = "raw"}).var
end

lesson{
  title = "Exercises",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.9 Exercises",
  steps = {
    {text = [[
Exercise 1 (pencil). Take the centered and the RMS map with a positive
eps, work out their Jacobians, and decide which zero eigenvalues are
still exactly zero. The screen can confirm your answer: with eps > 0
the centered map keeps the ones eigenvalue at exactly 0, and the radial
one moves to eps / s^3.]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "spectrum",
     try = {text = [[
Set eps > 0 (e.g. set{eps = 1e-3}) and compare the ones and the radial
eigenvalues in the spectrum panel. Then do the same for kind rms.]],
            check = function(s)
              return s.eps > 0 or "eps is still 0"
            end,
            show = {eps = 1e-3}}},

    {text = [[
Exercise 2 (code). Sweep the offset o = 1, 10, ..., 1e7 of the witness
(o-2, o-1, o+1, o+2) in fp32 and find the first offset where the raw
formula is off by more than 1 % (its true variance is 2.5). Here: 10000.
The two-pass formula is still exact there.]],
     set = {x = witness(1), dtype = "fp32"},
     focus = "precision",
     claims = function(s)
       local first
       for k = 0, 7 do
         local o = 10 ^ k
         if not first and math.abs(raw_fp32(o) - 2.5) / 2.5 > 0.01 then first = o end
       end
       claim("c15-ex2-first-raw-fp32", first or -1)
     end,
     try = {text = [[
Type the witness for larger offsets into x (set{x = {98, 99, 101,
102}}, then 998 ..., 9998 ...) and watch the raw row of the precision
panel fail while the two-pass row stays at 2.5.]],
            check = function(s)
              local p = result().precision
              if p.raw.relerr > 0.01 and p.twopass.relerr == 0 then return true end
              return string.format("raw is %g: not failing yet", p.raw.var)
            end,
            show = {x = witness(1e4)}}},

    {text = [[
Exercise 3 (pencil). Derive the merge of two centered states (na, ma,
m2a) and (nb, mb, m2b): n = na + nb, m = ma + (mb - ma) nb / n, and
m2 = m2a + m2b + (mb - ma)^2 na nb / n. Show the correction term is never
negative, and write the population (m2 / n) and sample (m2 / (n - 1))
variances separately.]],
     set = {x = X, dtype = "fp64"},
     focus = "train",
     try = {text = [[
Check your formula against ns.merge in the prompt, e.g.
ns.merge(ns.moments(ns.tensor{1, 2}), ns.moments(ns.tensor{4, 8})).]]}},

    {text = [[
Exercise 4 (code). Repeat the running-state experiment for other numbers
of training batches and seeds. Keep the no-shift case as a control, and
split the total train/eval gap into its finite-sample part and the part a
real shift of the population would add.]],
     focus = "train",
     try = {text = [[
Change the number of training batches (j/J) or the seed (r) and follow
the exact-merge gap in the train/eval panel.]],
            check = function(s)
              local base = tonumber(ns.sha256("c15-running-state"):sub(1, 8), 16)
              if s.train_batches ~= 8 or s.seed ~= base then return true end
              return "still 8 batches with the chapter's seed"
            end,
            show = {train_batches = 32}}},

    {text = [[
Exercise 5 (audit). Pick a paper with a normalization ablation and fill
in: the mathematical object, the estimator and comparison, the numerical
and hardware contract, a discriminating control, and whether the result
transfers. For the layer itself, write down every row of the settings
panel that applies (kind and axes, eps and where it goes, gamma and
beta, placement, dtype and acc, mode and momentum): a paper that leaves
one of them out has not said which map it tested.]],
     focus = "settings"},
  },
}
