-- Text 000 (chapter 15), section 15.9: the five exercises, each asking before it shows:
-- a radial eigenvalue to compute (1), the first failing offset of the fp32 sweep (2, its
-- answer the claim), a merge to compute (3, with variants), the train/eval gap split on
-- the shifted-evaluation view (4), and an audit record filled in on the settings (5).
local X = {-2, -1, 1, 2}
local SEED = tonumber(ns.sha256("c15-running-state"):sub(1, 8), 16)

-- The four values (o-2, o-1, o+1, o+2).
local function witness(o) return {o - 2, o - 1, o + 1, o + 2} end

-- The raw-moment variance of the witness in fp32 (stored and summed in fp32).
local function raw_fp32(o)
  return ns.moments(ns.tensor(witness(o)), {dtype = "fp32", acc = "fp32", algo = "raw"}).var
end

-- The radial eigenvalue of the centered map's Jacobian at x with a given eps: the
-- Rayleigh quotient along the centered vector c (J c = (eps / s^3) c).
local function radial(x, eps)
  local J = ns.jacobian(x, {kind = "layer", eps = eps})
  local c = x - x:mean()
  local Jc = ns.matmul(J, c:reshape(#c, 1)):reshape(-1)
  return (c * Jc):sum() / (c * c):sum()
end

-- Four small integers, not all equal, from a generator (the variants of exercises 1, 3).
local function four(seed)
  local g = ns.rng(seed)
  while true do
    local v = {}
    for i = 1, 4 do v[i] = math.floor(g:random() * 9) - 4 end
    if v[1] ~= v[2] or v[2] ~= v[3] or v[3] ~= v[4] then return v end
  end
end

-- Exercise 3: the merge of the moments of x's first two values with its last two.
local function merged(x)
  local f = x:flat()
  return ns.merge(ns.moments(ns.tensor{f[1], f[2]}), ns.moments(ns.tensor{f[3], f[4]}))
end

lesson{
  title = "Exercises",
  source = "000_b251982bd6a65d6e.txt",
  section = "15.9 Exercises",
  steps = {
    {text = [[
Exercise 1 (pencil). Take the centered and the RMS map with a positive
eps, work out their Jacobians, and decide which zero eigenvalues are
still exactly zero. Then make it a number: for the x in the input panel (Alt-1)
and eps = 1e-3, what is the centered map's eigenvalue along the radial
direction c = P x? (V gives another x.)]],
     set = {x = X, kind = "layer", eps = 0, shift = 10, scale = 2},
     focus = "input",
     variant = function(seed, s) return {x = four(seed)} end,
     try = {text = [[
Type the radial eigenvalue at eps = 1e-3: = and a number (or a Lua
expression).]],
            answer = {value = function(s) return radial(s.x, 1e-3) end},
            hints = {"Differentiate c / s with s = sqrt(m2 + eps), m2 = mean(c^2): along c " ..
                       "the two terms of J nearly cancel.",
                     "J c = (1/s - m2 / s^3) c = (eps / s^3) c.",
                     "eps / (m2 + eps)^1.5 with m2 the mean squared deviation of x: " ..
                       "= 1e-3 / (m2 + 1e-3)^1.5, m2 = 2.5 for (-2, -1, 1, 2)."}}},

    {text = [[
Exercise 1, the other map. For the centered map the ones eigenvalue
stays exactly 0 (P 1 = 0 never involves eps) and the radial one is the
eps / s^3 you computed. Now the RMS map with the same eps = 1e-3: once
you answer, the spectrum panel (Alt-4) shows it (K then switches back to the
centered map, whose radial row holds your number).]],
     predict = {question = "Exercise 1, the RMS map with eps = 1e-3: how many eigenvalues of its " ..
                  "Jacobian are exactly 0 " ..
                  "with eps = 1e-3?",
                value = function(s)
                  return #s.x - ns.rank(ns.jacobian(s.x, {kind = "rms", eps = s.eps}), 1e-10)
                end, tol = 0},
     set = {eps = 1e-3, kind = "rms"},
     focus = "spectrum"},

    {text = [[
Exercise 2 (code). Sweep the offset o = 1, 10, ..., 1e7 of the witness
(o-2, o-1, o+1, o+2), stored and summed in fp32, and find the first
offset where the raw formula mean(x^2) - mean(x)^2 is off by more than
1 % (the true variance is 2.5). The precision panel (Alt-7) computes all three
formulas for whatever x holds; here it has o = 1.]],
     set = {x = witness(1), kind = "layer", eps = 0, dtype = "fp32"},
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
Type the first failing offset: = and a number.]],
            answer = {claim = "c15-ex2-first-raw-fp32", tol = 0},
            hints = {"Both terms of the raw formula are near o^2, and fp32 keeps about 7 " ..
                       "significant digits of each.",
                     "The difference 2.5 is lost once o^2 needs more digits than fp32 has " ..
                       "left over for it: try the offsets 1000 and 10000 in the panel.",
                     "The first decade that fails: o = 10000."}}},

    {text = [[
Exercise 2 on the screen. The raw row of the precision panel (Alt-7) fails
while the two-pass row stays at 2.5. Storage formats round the witness
itself: t steps the dtype (fp16 and bf16 lose the offset's last digits
before any sum is taken).]],
     focus = "precision",
     try = {text = [[
Put the witness at an offset where the raw formula is off by more than
1 % and the two-pass formula is still exact (set{x = {...}}).]],
            check = function(s)
              local p = result().precision
              if p.raw.relerr > 0.01 and p.twopass.relerr == 0 then return true end
              return string.format("raw is %g: not failing yet", p.raw.var)
            end,
            hints = {"Offsets of 1000 and below still pass; use the one you found.",
                     "set{x = {9998, 9999, 10001, 10002}}"},
            show = {x = witness(1e4)}}},

    {text = [[
Exercise 3 (pencil). Two centered states (na, ma, m2a) and (nb, mb,
m2b) merge into the state of the union. Derive n, the mean and m2 of
the union, show that the term m2 gains beyond m2a + m2b is never
negative, and write the population variance (m2 / n) and the sample
variance (m2 / (n - 1)) separately. Then a number: merge the state of
the first two values of x (in the input panel, Alt-1) with that of the last two.
(V gives other values.)]],
     set = {x = {1, 2, 4, 8}, dtype = "fp64", kind = "layer", eps = 0},
     focus = "input",
     variant = function(seed, s) return {x = four(seed)} end,
     try = {text = [[
Type m2 of the merged state: = and a number.]],
            answer = {value = function(s) return merged(s.x).m2 end},
            hints = {"n = na + nb, and the mean moves by (mb - ma) nb / n.",
                     "m2 = m2a + m2b + (mb - ma)^2 na nb / n: the last term is a square times " ..
                       "counts, so it is never negative.",
                     "For (1, 2) and (4, 8): 0.5 + 8 + 4.5^2 x 2 x 2 / 4 = 28.75; at the " ..
                       "prompt, ns.merge(ns.moments(ns.tensor{1, 2}), " ..
                       "ns.moments(ns.tensor{4, 8})).m2."}}},

    {text = [[
Exercise 4 (code): redo 15.3's running state for other batch counts and
shifted evaluation data, and split the train/eval gap into estimator error
and shift. The V view does the split. Here: the no-shift control.]],
     predict = {question = "Exercise 4, the control (no shift): is the gap's shift part 0?",
                choices = {"yes: no shift, no shift part",
                           "no: the evaluation batch's own sampling error is in it"},
                answer = function(s) return result().train.shift_gap < 1e-12 and 1 or 2 end},
     set = {x = X, kind = "batch", eps = 1e-5, seed = SEED, train_source = "rng",
            train_loc = 4, train_scale = 2, train_batches = 8, batch_size = 32,
            momentum = 0.1, eval_loc = "default", eval_scale = "default"},
     focus = "shift"},

    {text = [[
The control's shift part is how far 32 evaluation values sit from their
population: the floor of every shifted run. ( and ) move the evaluation
mean by 1, j and J halve and double the batches (V: another seed).]],
     focus = "shift",
     variant = function(seed, s) return {seed = SEED + seed} end,
     try = {text = [[
Find a setting where the exact row's shift part is above 1 while its
estimator part stays below 0.05.]],
            check = function(s)
              local t = result().train
              local est, sh = t.exact.estimator_gap, t.shift_gap
              if sh <= 1 then return string.format("the shift part is %.3f: shift more", sh) end
              return est < 0.05 or string.format("the estimator part is %.3f: more batches", est)
            end,
            hints = {"A shift of one population standard deviation (2) is eval_loc 6.",
                     "At 8 batches the estimator part is near 0.07: give it more data.",
                     "set{eval_loc = 6, train_batches = 128}"},
            show = {eval_loc = 6, train_batches = 128}}},

    {text = [[
Exercise 5 (audit). For a paper's normalization ablation, name the
mathematical object, the estimator and comparison, the numeric and
hardware contract, a discriminating control, whether the result
transfers. List every settings row (Alt-2) that applies (kind, axes, eps
and its place, gamma, beta, placement, dtype and acc, mode, momentum): a
paper that omits one has not said which map it tested.]],
     set = {eval_loc = "default", train_batches = 8, kind = "layer", axes = "default",
            gamma = {}, beta = {}, placement = "none", acc = "default", dtype = "fp64"},
     focus = "settings",
     try = {text = [[
Put your paper's layer into the settings: set its axes, gamma, beta,
placement and accumulation dtype explicitly (defaults state nothing).]],
            check = function(s)
              if s.axes == "default" then return "name the axes: set{axes = {...}}" end
              if #s.gamma == 0 or #s.beta == 0 then return "state gamma and beta" end
              if s.placement == "none" then return "where does it sit? placement pre or post" end
              if s.acc == "default" then return "which dtype do its sums run in? set acc" end
              return true
            end,
            hints = {"axes, gamma and beta are set{} fields; l steps the placement; T the " ..
                       "accumulation dtype.",
                     "A pre-norm Transformer's LayerNorm, for instance: set{axes = {1}, " ..
                       "gamma = 1, beta = 0, placement = \"pre\", acc = \"fp32\"}"},
            show = {axes = {1}, gamma = 1, beta = 0, placement = "pre", acc = "fp32"}}},
  },
}
