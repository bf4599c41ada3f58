-- Text 004 (the essay), "What remains" and "So": normalization equalises the scale, not the
-- directions the weights were drawn with; the norm layer's own gamma and beta; the summary.

-- Small batch-norm stacks (batch 32, 20 layers, width 256) to compare last layers.
local B = 32
local runs = {}
local function last_h(seed, init)
  local key = seed .. "/" .. init
  if not runs[key] then
    local r = ns.stack{batch = B, init = init, norm = "batch", seed = seed}
    runs[key] = {h = r.h, std = r.std[#r.std]}
  end
  return runs[key]
end

-- cosine of the angle between two tensors taken as vectors
local function cosine(a, b)
  return (a * b):sum() / math.sqrt((a * a):sum() * (b * b):sum())
end

local X8 = {0.3, -1.2, 2.5, 0.7, -0.4, 1.9, -2.2, 0.1}

lesson{
  title = "What remains, and the summary",
  source = "004_f7fd3ff892c4fe59.txt",
  section = "What remains; So",
  steps = {
    {text = [[
Normalisation does not make initialisation unnecessary. It evened out
the one thing the three inits differed in, the scale. Which way each
weight vector points was never touched: that is still decided by the
random draws. The figure compares layer 20 of three
batch-norm stacks (batch 32): seed 0 with init 1/16 and with init 1.0
(the same random numbers times another factor), and seed 1 with 1/16
(other random numbers, for the inputs and the weights alike; ns.stack
draws both from one seed). All three have the same std of about 0.63,
but only the two with the same draws have the same activations: the
cosine between the other pair is near 0 (the table above).]],
     view = "figure",
     figure = function(s)
       local a, b, c = last_h(0, 1 / 16), last_h(0, 1.0), last_h(1, 1 / 16)
       local rows = {"layer 20 of three batch-norm stacks (batch 32)",
                     "                        std of h   max |h - h(seed 0, 1/16)|   cosine",
                     string.format("  seed 0, init 1/16  %9.4f   %25s   %6s", a.std, "-", "-")}
       for _, r in ipairs({{"seed 0, init 1.0 ", b}, {"seed 1, init 1/16", c}}) do
         rows[#rows + 1] = string.format("  %s  %9.4f   %25.3g   %6.3f", r[1], r[2].std,
                                         (r[2].h - a.h):abs():max(), cosine(r[2].h, a.h))
       end
       return table.concat(rows, "\n")
     end},

    {text = [[
The normalisation layer also brings parameters of its own: a scale gamma
and a shift beta applied after standardising, and they need initial
values too (usually 1 and 0). The output panel (Alt-3) layer-normalises eight
values with gamma 1 and beta 0: y has mean 0 and std 1.]],
     set = {x = X8, kind = "layer", eps = 0, gamma = {}, beta = {}},
     focus = "output",
     try = {text = [[
Give the layer a scale and a shift (set{gamma = 2, beta = 0.5}): the
output's std becomes 2 and its mean 0.5, whatever x was.]],
            check = function(s)
              local r = result()
              if math.abs(r.y_std - 2) < 1e-9 and math.abs(r.y_mean - 0.5) < 1e-9 then
                return true
              end
              return string.format("y has mean %.3g and std %.3g", r.y_mean, r.y_std)
            end,
            hints = {"w cycles gamma and beta (none, gamma 2, gamma 2 and beta 0.5); other values at the prompt (:)",
                     [[set{gamma = 2, beta = 0.5}]]},
            show = {gamma = 2, beta = 0.5}}},

    {text = [[
The essay in five lines:
- Every layer restarts from one scale: three inits, one number (0.6310; 004-02).
- What that buys first, before any speed-up: the init constant stops mattering.
- BN's std is 1 at every batch size; small batches rise as self-standardising
  clips the tails at sqrt(n - 1), gone with a linear activation (004-03).
- Estimation error is a batch-to-batch wobble, not a change of scale:
  bias about -3/(4n), spread about 1/sqrt(2n) (004-04).
- Layer norm ignores the batch and avoids both prices: another axis, a
  different map, not a strictly better one (004-05).
The deep-stacks view (L) holds lines 1 and 3 (plots on a taller screen).]],
     focus = "stacks"},
  },
}
