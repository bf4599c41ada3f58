-- Text 002, Level 4, "A normalisation audit tests dependencies, not only moments": the
-- record (from get()), the realised statistics along the intended axes, and the two
-- perturbation tests (another observation changed; the target alone, in another batch
-- and in eval mode).
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}
local EPS = 1e-5

local function axes_text(a)
  if type(a) ~= "table" then return tostring(a) end
  return "{" .. table.concat(a, ", ") .. "}"
end

local function list(t)
  if type(t) ~= "table" then return tostring(t) end
  if #t == 0 then return "none" end
  local out = {}
  for i, v in ipairs(t) do out[i] = string.format("%g", v) end
  return table.concat(out, ", ")
end

-- The target row 1 as batch norm gives it: in X, in another batch, alone, in eval mode.
local function target_runs()
  local x = ns.tensor(X)
  local other = ns.tensor{X[1], {0, 0, 0, 0}, {9, 9, 9, 9}}
  local alone = ns.tensor{X[1]}
  local r = ns.running{momentum = 0.1}
  r:update(x)
  local bn = {kind = "batch", eps = EPS}
  return {{"in X", ns.normalize(x, bn):slice(1, 1, 1)},
          {"another batch", ns.normalize(other, bn):slice(1, 1, 1)},
          {"alone", ns.normalize(alone, bn)},
          {"eval mode", ns.normalize(alone, {kind = "batch", eps = EPS, mode = "eval",
                                              running = r})}}
end

lesson{
  title = "Level 4: an audit of a normalisation layer",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 4 - Research & Systems: A normalisation audit tests dependencies, " ..
              "not only moments",
  steps = {
    {text = [[
An audit first writes down what the layer is: method, reduction axes,
eps, affine parameters, train or eval mode, running-statistics momentum,
tensor layout, batch size per device, synchronisation, precision, and
what happens to padding. Most of these are fields of the explorer's
state; the figure (F) prints them from get(). Layout, devices, sync and
padding are not state fields: an audit has to ask for them.
(Alt-2)]],
     set = {x = X, batch = X, target = 1, companion = 5, baseline = X[5], kind = "batch",
            axes = "default", eps = EPS, gamma = {}, beta = {}, mode = "train",
            dtype = "fp64", acc = "default"},
     focus = "settings",
     figure = function(s)
       return table.concat({
         "method    " .. s.kind, "axes      " .. axes_text(s.axes),
         "eps       " .. string.format("%g", s.eps) .. " (at " .. s.eps_at .. ")",
         "gamma     " .. list(s.gamma), "beta      " .. list(s.beta),
         "mode      " .. s.mode, "momentum  " .. tostring(s.momentum),
         "batch     " .. s.x:shape()[1] .. " rows",
         "precision " .. s.dtype .. ", accumulate " .. s.acc}, "\n")
     end},

    {text = [[
Then it measures: the realised means and variances (or RMS values)
along the axes the layer is meant to reduce, and the learned gamma and
beta as training goes on. The output panel's statistics line is that
measurement for the state: four column means of X and their variances.
(Alt-3)]],
     focus = "output"},

    {text = [[
Perturbation test 1: change another observation; does the target move?
The batch panel (Alt-5) watches row 1 while you change row 5: under batch
norm it moves, as the kind couples observations (a bug, if unexpected).]],
     focus = "batch",
     try = {text = [[
Change row 5 (e.g. set{batch = {...}} with row 5 = {0, 0, 0, 0}) and
count how many of row 1's outputs moved or changed sign.]],
            check = function(s)
              local b = result().batch
              for j = 1, #b.target_now do
                if b.target_now[j] ~= b.target_base[j] then return true end
              end
              return "row 1 has not moved: change row 5"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {0, 0, 0, 0}}}]]},
            show = {batch = {X[1], X[2], X[3], X[4], {0, 0, 0, 0}}}}},

    {text = [[
Perturbation test 2: keep row 1, change its surroundings. The table has
row 1 under batch norm four ways (in X, among two other rows, alone, in
eval mode after one step on X): four outputs, and the code path picks one.
Passing both tests says the layer computes what was declared, not that
training is stable (weights, residual scale, optimiser, data matter too:
judge the whole network). (Alt-5; F: figure)]],
     focus = "batch",
     figure = function(s)
       local l = {"row 1 of X      feature 1  feature 2  feature 3  feature 4"}
       for _, run in ipairs(target_runs()) do
         local f = run[2]:flat()
         l[#l + 1] = string.format("%-13s   %9.3f  %9.3f  %9.3f  %9.3f", run[1],
                                   f[1], f[2], f[3], f[4])
       end
       return table.concat(l, "\n")
     end},
  },
}
