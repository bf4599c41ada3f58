-- experiments.lua: the chapters' experiments as explorer state (placement and W, the
-- upstream gradient, the evaluation distribution, one training step on the batch), each
-- set up with one set{} and read from result(), against the claims registry and against
-- the module's own functions (ns.residual_jacobian, ns.vjp) as independent routes.
local T = dofile((arg and arg[0] or "tests/lua/experiments.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns
local claims = T.claims()

-- 000 15.4: the residual block
local W = {{0.5, -0.2, 0.1, 0}, {0.3, 0.4, -0.1, 0.2}, {-0.2, 0.1, 0.6, -0.3}, {0, 0.2, 0.1, 0.5}}
local e = ns.explorer{x = {0.5, -1, 2, 0.25}, eps = 0, placement = "pre", W = W}
local r = e:result().residual
T.ok(r.done, "the residual panel computes with placement pre", r.skip)
T.claim(claims, "c15-pre-norm-smin", r.sv_pre[4])
T.claim(claims, "c15-post-norm-rank", r.rank_post)
local Jpre = ns.residual_jacobian(ns.tensor{0.5, -1, 2, 0.25}, {eps = 0}, ns.tensor(W), "pre")
local Jpost = ns.residual_jacobian(ns.tensor{0.5, -1, 2, 0.25}, {eps = 0}, ns.tensor(W), "post")
T.ok(#(r.J_pre - Jpre):abs() == 16 and (r.J_pre - Jpre):abs():max() == 0 and
     (r.J_post - Jpost):abs():max() == 0, "the panel's J_pre and J_post are ns.residual_jacobian's")
T.is(r.rank_pre, 4, "J_pre keeps full rank: the identity path skips J_N")
e:set{W = false}
local r2 = e:result().residual
T.ok(r2.done and r2.W[1] ~= 0.5, "W = false: a random W from w_seed")
e:set{w_seed = 7}
T.ok(e:result().residual.W[1] ~= r2.W[1], "another w_seed, another W")
e:set{W = {{1, 0}, {0, 1}}}
local r3 = e:result().residual
T.ok(not r3.done and r3.skip:find("2 x 2", 1, true), "a W that does not fit x says so: " ..
     tostring(r3.skip))
T.ok(not pcall(e.set, e, {W = {1, 2, 3}}), "a W that is not a square matrix is refused")
e:set{placement = "none"}
T.ok(not e:result().residual.done, "placement none: no residual block")

-- 003 backward pass
local b = ns.explorer{x = {2, 4, 6, 8}, eps = 0, upstream = {1, -2, 0.5, 3}}:result().backward
T.ok(b.done, "the backward pass is computed", b.skip)
T.claim(claims, "g-grad-first", b.dx[1])
local sum, gsum, bsum = 0, 0, 0
for i = 1, 4 do sum = sum + b.dx[i]; gsum = gsum + b.dgamma[i]; bsum = bsum + b.dbeta[i] end
T.claim(claims, "g-grad-sum", sum)
T.claim(claims, "g-grad-gamma", gsum)
T.claim(claims, "g-grad-beta", bsum)
T.ok(b.sum_max < 1e-12 and b.xhat_max < 1e-12, "sum and x_hat projections vanish per statistic")
T.ok(b.vs_jtg < 1e-12, "dL/dx equals J^T g (" .. b.vs_jtg .. ")")
local dx = ns.vjp(ns.tensor{2, 4, 6, 8}, {eps = 0}, ns.tensor{1, -2, 0.5, 3})
local same = true
for i = 1, 4 do
  same = same and dx[i] == b.dx[i] and b.direct[i] + b.via_mean[i] + b.via_var[i] - b.dx[i] < 1e-14
end
T.ok(same, "the panel's dL/dx is ns.vjp's, and its three paths add up to it")
local u = ns.explorer{x = {2, 4, 6, 8}, upstream = {1, 2}}:result().backward
T.ok(not u.done and u.skip:find("upstream has 2", 1, true), "an upstream of the wrong size: " ..
     tostring(u.skip))

-- 002: the stored training statistics against a shifted evaluation batch (default_rng(90))
local t = ns.explorer{seed = 90, train_batches = 1, batch_size = 1000, train_loc = 0,
  train_scale = 1, eval_loc = 2, eval_scale = 1, eval_size = 300}:result().train
T.claim(claims, "n-eval-stored-mean", t.exact.y:mean())
T.claim(claims, "n-eval-current-mean", t.eval_y:mean())
T.ok(t.shift_gap > 1.9 and t.exact.estimator_gap < 0.1,
     "the gap is the shift (" .. t.shift_gap .. "), not the estimate (" ..
     t.exact.estimator_gap .. ")")
local g0 = ns.explorer():result().train
T.ok(g0.eval_loc == 4 and g0.eval_scale == 2, "eval_loc/scale default to the training ones")
local d = ns.explorer()
d:set{eval_loc = 3}
d:set{eval_loc = "default"}
T.is(d:get().eval_loc, "default", "eval_loc = \"default\" follows train_loc again")

-- 002: one training step of a fresh module on the batch, then eval on the same batch
local one = ns.explorer{train_source = "batch", batch = {{0, 1}, {2, -1}, {4, 3}}}:result().train
T.is(one.n, 3, "one step on the 3 rows")
T.ok(one.momentum.gap > 0.1, "BN train and eval outputs differ after one step (gap " ..
     one.momentum.gap .. ")")
T.close(one.momentum.mean[1], 0.1 * 2, 1e-15, "running mean: 0.1 x the batch mean")
-- the summation order is a field: pairwise sums are numpy's (each statistic's sum)
local xs = ns.rng(3):normal(0, 1, {4, 3000}):astype("fp32")
local seqe = ns.explorer{x = xs, dtype = "fp32"}
local pw = ns.explorer{x = xs, dtype = "fp32", order = "pairwise"}
local ys, yp = seqe:result().y, pw:result().y
local want = ns.normalize(xs, {dtype = "fp32", order = "pairwise"})
T.ok((yp - want):abs():max() == 0, "order = \"pairwise\": the panel's y is ns.normalize's pairwise y")
T.ok((ys - yp):abs():max() > 0, "and differs from the sequential order in the last bits")
T.done()
