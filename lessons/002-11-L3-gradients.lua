-- Text 002, Level 3, "Gradients reveal the dependency structure": the 20 x 20 Jacobian of
-- the running matrix under batch norm couples observations; under layer or RMS norm it
-- is block diagonal.
local X = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}

-- The Jacobian of the state's map at its x (rows: outputs, row-major; columns: inputs).
local function jac(s) return ns.jacobian(s.x, {kind = s.kind, eps = s.eps}) end

-- max |d Y[1, j] / d X[5, l]|: the block of row 1's outputs against row 5's inputs.
local function coupling(s) return jac(s):slice(1, 1, 4):slice(2, 17, 20):abs():max() end

-- |J| as a heatmap without numbers: 5 blocks of 4 along each side.
local function jac_figure(s, title)
  return ns.plot.heatmap(jac(s):abs(), {width = 48, height = 26, values = false,
                                        title = title})
end

local function zeros(s)
  local n = 0
  for _, v in ipairs(jac(s):flat()) do if v == 0 then n = n + 1 end end
  return n
end

lesson{
  title = "Level 3: gradients show who depends on whom",
  source = "002_22013a1826c4c83c.txt",
  section = "Level 3 - Mathematics & Code: Gradients reveal the dependency structure",
  steps = {
    {text = [[
Under batch norm, output Y_ij uses mu_j and sigma_j, and those use every
observation. So dY_ij / dX_kl is not zero for other observations k: the
gradient has cross-observation terms. The figure (F) is |J| for X (20 x 20,
outputs down, inputs across, one 4 x 4 block per pair of observations):
every block has a diagonal. Row 1's outputs against row 5's inputs
reach 0.0504. (Alt-4)]],
     set = {x = X, kind = "batch", axes = "default", eps = 1e-5, gamma = {}, beta = {},
            dtype = "fp64"},
     focus = "spectrum",
     figure = function(s) return jac_figure(s, "|J| under batch norm") end,
     claims = function(s) claim("n-grad-coupling-bn", coupling(s)) end},

    {text = [[
Under layer norm each observation's outputs read only its own features:
the Jacobian is block diagonal, features couple within an observation
and never across. The row 1 / row 5 block is exactly 0.

So splitting a batch over devices changes ordinary batch norm (each
device sees other statistics) unless they are synchronised; layer and
RMS norm do not care.
(Alt-4; F: figure)]],
     set = {kind = "layer"},
     focus = "spectrum",
     figure = function(s) return jac_figure(s, "|J| under layer norm") end,
     claims = function(s) claim("n-grad-coupling-ln", coupling(s)) end,
     try = {text = [[
How many of the 400 entries of this Jacobian are zero by structure?
Type = and the count (RMS norm, k in the settings, has the same one).]],
            answer = {value = function(s) return zeros(s) end, tol = 0},
            hints = {"Only the blocks on the diagonal can be non-zero: an observation's " ..
                       "outputs read its own features only.",
                     "5 diagonal blocks of 4 x 4 = 16 entries each.",
                     "400 - 5 x 16 = 320."}}},
  },
}
