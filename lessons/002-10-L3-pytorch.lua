-- Text 002, Level 3, "PyTorch encodes axes in the module configuration": BatchNorm1d(4)
-- and LayerNorm(4) on X in float32, one training step of a fresh BatchNorm and its eval
-- output, and an RMS-norm module on a (2, 5, 8) torch.randn tensor (torch.manual_seed(12)).
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local EPS = 1e-5

-- A fresh running state (mean 0, var 1) after one training step on X.
local function one_step(momentum)
  local r = ns.running{momentum = momentum}
  r:update(ns.tensor(X))
  return r
end

-- Largest |train output - eval output| after that one step (fp64, weight 1, bias 0).
local function train_eval_gap(momentum)
  local x = ns.tensor(X)
  local train = ns.normalize(x, {kind = "batch", eps = EPS})
  local eval = ns.normalize(x, {kind = "batch", eps = EPS, mode = "eval",
                                running = one_step(momentum)})
  return (train - eval):abs():max()
end

-- The input of the RMS module: torch.randn(2, 5, 8) right after torch.manual_seed(12).
local SEQ = ns.torch_rng(12):randn({2, 5, 8})

lesson{
  title = "Level 3: the axes live in the module's configuration",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 3 - Mathematics & Code: PyTorch encodes axes in the module " ..
              "configuration",
  steps = {
    {text = [[
In PyTorch the reduction axes are implied by the module you build.
nn.BatchNorm1d(4) expects (batch, 4) and normalises each of the 4
features over the batch; in train mode it uses the batch's statistics.
The output panel (Alt-3) does the same to X in float32: every column mean of
the output is 0 up to float32 rounding (about 1e-8).]],
     set = {x = X, kind = "batch", axes = "default", eps = EPS, dtype = "fp32",
            gamma = {}, beta = {}, mode = "train"},
     focus = "output",
     claims = function(s)
       claim("n-bn-col-means-fp32", result().y:mean({1}):abs():max())
     end},

    {text = [[
nn.LayerNorm(4) normalises over the last axis, the 4 features of each
observation: now the row means are 0 (to float32 rounding).
(Alt-3)]],
     set = {kind = "layer"},
     focus = "output",
     claims = function(s)
       claim("n-ln-row-means-fp32", result().y:mean({2}):abs():max())
     end},

    {text = [[
A fresh BatchNorm starts its running estimates at mean 0 and variance 1,
and each training step moves them a fraction momentum = 0.1 towards the
batch: mean <- 0.9 mean + 0.1 batch mean, and for the variance PyTorch
uses the unbiased (n - 1) batch variance. After one step on X, feature 1
has running variance 0.9 + 0.1 x 16.5 = 2.55 and feature 3 running mean
0.1 x 14.2 = 1.42. The table lists all four features.
(Alt-3; F: figure)]],
     set = {dtype = "fp64", kind = "batch"},
     focus = "output",
     figure = function(s)
       local r = one_step(0.1)
       local lines = {"feature   batch mean   running mean   running var"}
       local x = ns.tensor(X)
       local bm = x:mean({1}):flat()
       for j = 1, 4 do
         lines[#lines + 1] = string.format("%7d   %10.2f   %12.3f   %11.3f", j, bm[j],
                                           r.mean[j], r.var[j])
       end
       return table.concat(lines, "\n")
     end,
     claims = function(s)
       local r = one_step(0.1)
       claim("n-torch-running-var-f1", r.var[1])
       claim("n-torch-running-mean-f3", r.mean[3])
     end},

    {text = [[
In eval mode the module normalises with those running values, not the
batch's. After one step they are far from the batch statistics, so the
same X gives outputs up to 8.43 apart ("equal: False" in the printout).
Real training averages many batches and comes much closer. (This
one-step run is computed in the lesson.) (Alt-3)]],
     focus = "output",
     claims = function(s) claim("n-torch-train-eval-maxdiff", train_eval_gap(0.1)) end,
     try = {text = [[
Which momentum makes one step copy the batch statistics? Set it
(set{momentum = ...}); the check reruns the step with it. What is left
is the n - 1 in the stored variance.]],
            check = function(s)
              local g = train_eval_gap(s.momentum)
              return g < 0.25 or string.format("train and eval still differ by %.3f", g)
            end,
            hints = {"o and O halve and double the momentum",
                     [[set{momentum = 1}]]},
            show = {momentum = 1}}},

    {text = [[
An RMS-norm module for sequences: weight 1, eps 1e-6, reducing the last
axis. The input panel holds torch.randn(2, 5, 8) drawn right after
torch.manual_seed(12): 2 sequences x 5 tokens x 8 features. The output
keeps that shape, each token is divided by its own RMS, and the mean of
the 10 tokens' output RMS is just below 1 (eps takes a little). The
chapter's float32 run prints 0.99999934; this fp64 arithmetic on the
same float32 draws gives 0.99999929. (Alt-3)]],
     set = {x = SEQ, kind = "rms", eps = 1e-6, momentum = 0.1},
     focus = "output",
     claims = function(s)
       claim("n-torch-rmsnorm-mean-rms", result().y:square():mean({3}):sqrt():mean())
     end},
  },
}
