-- Text 002, Level 2, "Batch normalisation has separate training and evaluation
-- mechanics": train mode uses the batch, eval mode the stored estimates; the noise of
-- batch means at sizes 2 to 128 (Fig. 13.3: default_rng(124), 600 batches of N(3, 2)).
local SIZES = {2, 4, 8, 16, 32, 64, 128}
local SEED, BATCHES = 124, 600

-- The chapter's simulation, run once when the file loads: for each size in turn, 600
-- batches drawn from the one stream, and their 600 means.
local means, sds = {}, {}
do
  local g = ns.rng(SEED)
  for k, b in ipairs(SIZES) do
    means[k] = g:normal(3, 2, {BATCHES, b}):mean({2}):reshape({BATCHES})
    sds[k] = means[k]:std()
  end
end

local function labels()
  local l = {}
  for k, b in ipairs(SIZES) do l[k] = "b=" .. b end
  return l
end

lesson{
  title = "Level 2: train mode, eval mode, and noisy batch statistics",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 2 - Mechanics: Batch normalisation has separate training and " ..
              "evaluation mechanics",
  steps = {
    {text = [[
In training, batch norm normalises with the mini-batch's statistics and
updates running estimates of each feature's mean and variance; in
evaluation it uses the stored estimates, so a prediction does not depend
on its batch-mates. The train/eval panel (Alt-6) shows the running
estimates and how far the evaluation batch moves under them. The output
panel: one feature (five values), batch norm, train mode.]],
     set = {x = {{1}, {2}, {4}, {7}, {11}}, kind = "batch", eps = 1e-5, mode = "train",
            gamma = {}, beta = {}},
     focus = "train",
     try = {text = [[
Switch to evaluation (set{mode = "eval"}): the output panel says where
its statistics now come from, and y is no longer centred at 0.]],
            check = function(s)
              if s.mode ~= "eval" then return "mode is still " .. s.mode end
              return math.abs(result().y_mean) > 1e-6 or "y is still centred"
            end,
            hints = {"m switches between train and eval mode",
                     [[set{mode = "eval"}]]},
            show = {mode = "eval"}}},

    {text = [[
A small batch estimates the population's statistics badly. Draw 600
batches of 2 values from N(3, 2) (numpy's default_rng(124)) and take each
batch's mean: their standard deviation is 1.383. With 128 values per
batch it is 0.172. Fig. 13.3 shows the 600 means per size; the
population mean is 3. (Alt-6; F: figure)]],
     set = {mode = "train"},
     focus = "train",
     figure = function(s)
       return ns.plot.box(means, {width = 72, height = 16, labels = labels(),
                                  xlabel = "batch mean", ref = {3, "population mean 3"},
                                  title = "Fig. 13.3: 600 batch means per batch size"})
     end,
     claims = function(s)
       claim("n-batchmean-sd-2", sds[1])
       claim("n-batchmean-sd-128", sds[7])
     end},

    {text = [[
In between, the spread follows the standard error 2 / sqrt(b): halve it
by taking four times as many values. The table has the simulated
spread beside that formula for every size. (F: figure)]],
     figure = function(s)
       local lines = {"    b   sd of 600 means   2/sqrt(b)"}
       for k, b in ipairs(SIZES) do
         lines[#lines + 1] = string.format("%5d   %15.4f   %9.4f", b, sds[k], 2 / math.sqrt(b))
       end
       return table.concat(lines, "\n")
     end,
     claims = function(s)
       claim("n-batchmean-sd-4", sds[2])
       claim("n-batchmean-sd-8", sds[3])
       claim("n-batchmean-sd-16", sds[4])
       claim("n-batchmean-sd-32", sds[5])
       claim("n-batchmean-sd-64", sds[6])
     end},

    {text = [[
Some of that noise may help a little, as a regulariser. The rest is a
cost: what the layer computes now depends on which examples were put in
a batch together, and at the tiny batch sizes a memory budget can force
on you, batch norm stops being reliable. The
train/eval panel (Alt-6) draws its batches from N(4, 2); its "exact" row is the
gap between an evaluation batch under its own statistics and under the
exactly merged training statistics.]],
     set = {kind = "batch", batch_size = 32},
     focus = "train",
     try = {text = [[
Make the batches tiny (set{batch_size = 2}) and watch that gap grow,
then large (128) and watch it shrink.]],
            check = function(s)
              if s.batch_size > 4 then return "batch_size is " .. s.batch_size .. ": go to 2" end
              return result().train.exact.gap > 1 or "the gap is still small"
            end,
            hints = {"batch_size has no key: set it at the prompt (:)",
                     [[set{batch_size = 2}]]},
            show = {batch_size = 2}}},
  },
}
