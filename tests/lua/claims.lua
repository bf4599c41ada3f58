-- claims.lua: the seeded claims of claims.tsv computed from Lua with the
-- numpy-compatible generator (c15-running-*, c15-eval-*, c15-max-discrepancy,
-- c15-merge-vs-direct, n-batchmean-sd-*, n-eval-stored-mean).
local T = dofile((arg and arg[0] or "tests/lua/claims.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

-- chapter 15.3: 8 training batches of 32 merged exactly, one evaluation batch of 32
local seed = tonumber(ns.sha256("c15-running-state"):sub(1, 8), 16)
local g = ns.rng(seed)
local train = g:normal(4, 2, {8, 32})
local batch = g:normal(4, 2, 32)
local run = ns.running{exact = true}
for i = 1, 8 do run:update(train:slice(1, i, i):reshape(32)) end
T.claim(claims, "c15-running-mean", run.mean)
T.claim(claims, "c15-running-var", run.var)
T.claim(claims, "c15-eval-mean", batch:mean())
T.claim(claims, "c15-eval-var", batch:var())
local ytrain = ns.normalize(batch, {kind = "batch", eps = 1e-5})
local yeval = ns.normalize(batch, {kind = "batch", eps = 1e-5, mode = "eval", running = run})
T.claim(claims, "c15-max-discrepancy", (ytrain - yeval):abs():max())
T.claim(claims, "c15-merge-vs-direct", math.abs(run.mean - train:mean()))
-- the same state through ns.merge of per-batch moments
local acc = {n = 0, mean = 0, m2 = 0}
for i = 1, 8 do acc = ns.merge(acc, ns.moments(train:slice(1, i, i))) end
T.claim(claims, "c15-running-var", acc.m2 / acc.n)

-- chapter 13, figure 13.3: spread of batch means shrinks like 2/sqrt(b)
g = ns.rng(124)
local sd = {}
for _, b in ipairs{2, 4, 8, 16, 32, 64, 128} do
  sd[b] = g:normal(3, 2, {600, b}):mean(2):std()
end
T.claim(claims, "n-batchmean-sd-2", sd[2])
T.claim(claims, "n-batchmean-sd-128", sd[128])

-- chapter 13, figure 13.4: evaluation values normalized with the stored statistics
g = ns.rng(90)
local tr = g:normal(0, 1, 1000)
local ev = g:normal(2, 1, 300)
local out = (ev - tr:mean()) / math.sqrt(tr:var() + 1e-5)
T.claim(claims, "n-eval-stored-mean", out:mean())
local stored = ns.running{exact = true}
stored:update(tr)
local yev = ns.normalize(ev, {kind = "batch", mode = "eval", running = stored})
T.claim(claims, "n-eval-stored-mean", yev:mean())

T.done()
