-- Text 004 (the essay), "Price 1: it depends on the batch", first half: table 2 (layer-20
-- std against the batch size, batch norm and layer norm), why the output std is 1 anyway,
-- the sqrt(n-1) bound and the kurtosis 3(n-1)/(n+1), and the two pieces of evidence
-- (a linear activation; a single layer fed exact normal values).

-- The essay's stack protocol (see 004-02): seed 0, h_0 first, then W_1 .. W_20; init 1/16.
local SEED, LAYERS, WIDTH, INIT = 0, 20, 256, 1 / 16
local SIZES = {4, 8, 32, 256, 512}
local EPS = 1e-5

local runs = {}
-- One ns.stack run per (norm, batch, act), kept for the whole file.
local function run(norm, batch, act)
  local key = norm .. "/" .. batch .. "/" .. act
  if not runs[key] then
    local r = ns.stack{layers = LAYERS, width = WIDTH, batch = batch, init = INIT, norm = norm,
                       act = act, seed = SEED}
    runs[key] = {std = r.std, kurtosis = r.kurtosis, maxabs = r.maxabs}
  end
  return runs[key]
end
local function last(norm, batch, act) return run(norm, batch, act or "tanh").std[LAYERS] end

-- h_0 of the protocol at batch n (its first draw), batch-normalized with eps on the std.
local function h0(n) return ns.rng(SEED):normal(0, 1, {n, WIDTH}) end

-- The statistical claims: N(0,1) values in batches of n, normalized by their own batch,
-- then tanh. Seed and number of batches are fixed here: the smallest counts we tried
-- (1000, 2000, 5000 batches of 4; 50, 100, 200 of 512) whose spread over 40 other seeds
-- stays under a fifth of the claim's tolerance (sd 0.0007 of tol 0.006; 0.0007 of 0.004).
local SINGLE = {{n = 4, batches = 2000, seed = 7}, {n = 512, batches = 100, seed = 7}}
local function single_layer(c)
  local x = ns.rng(c.seed):normal(0, 1, {c.n, c.batches}) -- one column per batch
  return ns.normalize(x, {kind = "batch", eps = EPS, eps_at = "std"}):tanh():std()
end

-- A batch of n with one outlier: 1 then n-1 zeros (as an n x 1 matrix, one feature).
local function outlier(n)
  local b = {{1}}
  for i = 2, n do b[i] = {0} end
  return b
end

lesson{
  title = "Price 1: the output depends on the batch size",
  source = "004_f7fd3ff892c4fe59.txt",
  section = "Price 1: it depends on the batch",
  steps = {
    {text = [[
Batch norm estimates its mean and standard deviation from the batch, so
the batch size is now part of the network. Run the same Xavier stack
(seed 0, 20 layers, width 256) at batch sizes 4 to 512 and read layer
20's std. With batch norm it climbs as the batch shrinks: 0.6310 at 512,
0.6756 at 4. Layer norm, which standardises each example over its 256
features, stays near 0.63 at every size (the small wobble is the draws:
each batch size starts the generator at a different place). The
deep-stacks view (L) has the same table live, in its rows "layer-20 std
at batch" (a taller screen plots it on the right); F shows the lesson's
copy.]],
     focus = "stacks",
     figure = function(s)
       local lines = {"Table 2: std of layer-20 h (Xavier init, seed 0)",
                      "  batch   batch norm   layer norm"}
       for _, n in ipairs(SIZES) do
         lines[#lines + 1] = string.format("  %5d   %10.4f   %10.4f", n, last("batch", n),
                                           last("layer", n))
       end
       return table.concat(lines, "\n")
     end,
     claims = function(s)
       for _, n in ipairs({4, 8, 32, 256}) do claim("e-bn-l20-batch" .. n, last("batch", n)) end
       for _, n in ipairs(SIZES) do claim("e-ln-l20-batch" .. n, last("layer", n)) end
     end},

    {text = [[
A tempting story: a small batch underestimates the std, dividing by too
small a number inflates z. Check it. A batch divided by its own std has
std exactly 1 (up to eps), however poor that std is as an estimate of the
population's. Here x is h_0 at batch 4 (4 x 256), normalized over the
batch with eps 1e-5 on the std: the output panel's std of y is 0.999983.
(Alt-3)]],
     set = {x = h0(4), kind = "batch", eps = EPS, eps_at = "std", ddof = 0, gamma = {},
            beta = {}},
     focus = "output",
     claims = function(s)
       claim("e-bnout-std-4", result().y_std)
     end},

    {text = [[
The same at batch 512 (512 x 256): 0.999990. The scale of z is the same
at both sizes, so the scale cannot be what moves layer 20.
(Alt-3)]],
     set = {x = h0(512)},
     focus = "output",
     claims = function(s)
       claim("e-bnout-std-512", result().y_std)
     end},

    {text = [[
What changes is the shape. When n values are standardised with their own
mean and std, none of them can land farther than sqrt(n - 1) from 0. The
extreme case is one outlier and n - 1 equal values: the batch panel (Alt-5)
holds (1, 0, 0, 0), and its batch-norm column starts at sqrt(3) = 1.732.
At batch 512 the same construction reaches sqrt(511) = 22.6.]],
     set = {batch = outlier(4), target = 1, companion = 2, eps = 0, baseline = false,
            x = {-2, -1, 1, 2}}, -- a small x again: the batch panel is what matters here
     focus = "batch",
     claims = function(s)
       claim("e-zbound-4", result().batch.bn:max())
       claim("e-zbound-512",
             ns.normalize(ns.tensor(outlier(512)), {kind = "batch", eps = 0}):max())
     end,
     try = {text = [[
Random batches never get there. Put any other values in the batch (say
set{batch = {{3}, {-1}, {0.5}, {2}}}) and check that no entry of the
batch-norm column goes past 1.732.]],
            check = function(s)
              local b = result().batch
              if s.batch:shape()[1] ~= 4 then return "keep 4 rows to compare with sqrt(3)" end
              if b.bn:max() >= math.sqrt(3) - 1e-9 then return "that is still the extreme batch" end
              return b.bn:abs():max() <= math.sqrt(3) + 1e-12 or "past the bound?"
            end,
            hints = {"type into the batch panel (Alt-5): the arrows move, a number and Enter set a cell",
                     [[set{batch = {{3}, {-1}, {0.5}, {2}}}]]},
            show = {batch = {{3}, {-1}, {0.5}, {2}}}}},

    {text = [[
Clipped tails mean a smaller kurtosis. For a batch of n normal values
standardised by itself, the expected kurtosis is exactly 3(n - 1)/(n + 1):
1.80 at n = 4, 2.99 at n = 512, against 3 for a normal distribution. The
figure shows the kurtosis of z in every layer of the batch-norm runs at
batch 4 and batch 512 (each a finite sample, so it wobbles around the
exact value).]],
     view = "figure",
     figure = function(s)
       return ns.plot.lines({{y = run("batch", 4, "tanh").kurtosis, label = "batch 4"},
                             {y = run("batch", 512, "tanh").kurtosis, label = "batch 512"}},
                            {width = 76, height = 12, xlabel = "layer",
                             ylabel = "kurtosis of z", range = {1.5, 3.5},
                             title = "kurtosis after batch norm (exact: 1.80 and 2.99)"})
     end,
     claims = function(s)
       local function kurt(n) return 3 * (n - 1) / (n + 1) end
       claim("e-kurtosis-4", kurt(4))
       claim("e-kurtosis-512", kurt(512))
     end},

    {text = [[
tanh squeezes large values; batch 4 leaves none, so its std is larger.
Check 1, a linear activation: layer 20's std is 1.0000 at batch 4 and 512.]],
     view = "figure",
     figure = function(s)
       local series = {}
       for _, c in ipairs{{"tanh", 4}, {"tanh", 512}, {"linear", 4}, {"linear", 512}} do
         series[#series + 1] = {y = run("batch", c[2], c[1]).std,
                                label = c[1] .. ", batch " .. c[2]}
       end
       return ns.plot.lines(series, {width = 76, height = 14, xlabel = "layer",
                                     ylabel = "std of h", range = {0.5, 1.05},
                                     title = "batch norm: tanh against a linear activation"})
     end,
     claims = function(s)
       claim("e-linear-l20", last("batch", 4, "linear"))
       claim("e-linear-l20-512", last("batch", 512, "linear"))
     end},

    {text = string.format([[
Second, one layer is enough. Draw exact N(0,1) values, standardise them
in batches, apply tanh once. Batches of %d (%d batches, seed %d): std
about 0.6768. Batches of %d (%d batches, seed %d): about 0.6281. The whole
gap is there after a single layer; twenty layers do not build it up.
These two are estimates: another seed moves them in the third decimal.
The bars compare them with layer 20 of the stacks at the same sizes.
(F: figure)]],
       SINGLE[1].n, SINGLE[1].batches, SINGLE[1].seed,
       SINGLE[2].n, SINGLE[2].batches, SINGLE[2].seed),
     figure = function(s)
       return ns.plot.bars({single_layer(SINGLE[1]), last("batch", 4),
                            single_layer(SINGLE[2]), last("batch", 512)},
                           {width = 64, height = 10,
                            labels = {"1 layer, 4", "20 layers, 4", "1 layer, 512",
                                      "20 layers, 512"},
                            title = "std after tanh: one layer against twenty"})
     end,
     claims = function(s)
       claim("e-single-layer-4", single_layer(SINGLE[1]))
       claim("e-single-layer-512", single_layer(SINGLE[2]))
     end},
  },
}
