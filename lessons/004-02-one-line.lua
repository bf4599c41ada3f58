-- Text 004 (the essay), "One line": batch norm before tanh in the twenty-layer stack, table
-- 1 rebuilt (three inits, without and with batch norm), and why batch norm forgets a
-- positive factor: BN(cz) = BN(z) up to eps.

-- The essay's protocol (ns.stack): numpy default_rng(SEED), h_0 = normal(0, 1, (B, 256))
-- first, then W_1 .. W_20 = normal(0, 1, (256, 256)); z = h (init W), eps 1e-5 on the std.
local SEED, LAYERS, WIDTH, B = 0, 20, 256, 512
local INITS = {{name = "0.01", value = 0.01}, {name = "1.0", value = 1.0},
               {name = "Xavier", value = 1 / 16}}

-- Each run once per file: the table, the claims and the figure share them.
local runs = {}
local function run(norm, init)
  local key = norm .. "/" .. init
  if not runs[key] then
    local r = ns.stack{layers = LAYERS, width = WIDTH, batch = B, init = init, norm = norm,
                       seed = SEED}
    runs[key] = {std = r.std} -- the last layer's h is dropped: only the stds are kept
  end
  return runs[key]
end
local function last(norm, init) return run(norm, init).std[LAYERS] end

-- Layer 1's pre-activation of the Xavier stack at B = 512: the first two draws of the run.
local function layer1_z()
  local g = ns.rng(SEED)
  local h = g:normal(0, 1, {B, WIDTH})
  local W = g:normal(0, 1, {WIDTH, WIDTH})
  return ns.matmul(h, W * (1 / 16))
end
local function bn(z, eps) return ns.normalize(z, {kind = "batch", eps = eps, eps_at = "std"}) end

-- A small batch (8 examples, 3 features) for the explorer's panels.
local SMALL = ns.rng(4):normal(0, 1, {8, 3})

lesson{
  title = "One line: batch norm makes the initialisation irrelevant",
  source = "004_f7fd3ff892c4fe59.txt",
  section = "One line",
  steps = {
    {text = [[
The line goes between the matrix product and the activation
(mean_B, std_B: over the batch):
  z = h W
  z = (z-mean_B z)/(std_B z + 1e-5)
  h = tanh(z)
Over the batch means per neuron: each column of z (one neuron, all
examples) is standardised by itself. eps is added to the std, not the
variance. The output panel (Alt-3) does this to 8 examples of 3
features (kind batch, eps_at std): each column of y has mean 0, std
about 1.]],
     set = {x = SMALL, kind = "batch", eps = 1e-5, eps_at = "std", ddof = 0,
            gamma = {}, beta = {}, scale = 100},
     focus = "output"},

    {text = string.format([[
First the stack without that line: %d layers of width %d, a batch of %d,
h_0 and every W drawn from one numpy-compatible generator (seed %d), and W
multiplied by the init constant. The three inits share the same random
numbers; only the factor differs (Xavier is 1/sqrt(256) = 1/16 here).
The previous part of the series drew each init afresh, which is why its
Xavier row read 1.62e-01 and this one does not.

Layer 20's standard deviation then depends on the factor: about 1e-16 at
0.01 (the signal is gone), 0.974 at 1.0 (tanh saturates), 0.154 at
Xavier. That is the left column of table 1, and the "no norm" row of
the deep-stacks view (L) on screen.]], LAYERS, WIDTH, B, SEED),
     focus = "stacks",
     claims = function(s)
       claim("e-none-l20-001", last("none", 0.01))
       claim("e-none-l20-1", last("none", 1.0))
       claim("e-none-l20-xavier", last("none", 1 / 16))
     end},

    {text = [[
Now add the line to every layer. All three inits end at the same layer-20
standard deviation, 0.6310 to four decimals (the figure above is table
1, every cell computed by this lesson; L shows its "batch norm" row
live). The spread between the three is below 1e-4.]],
     view = "figure",
     figure = function(s)
       local lines = {"Table 1: std of layer-20 h (batch 512, seed 0)",
                      "  init      no normalisation   batch norm"}
       for _, i in ipairs(INITS) do
         lines[#lines + 1] = string.format("  %-8s  %16.3e   %10.4f", i.name,
                                           last("none", i.value), last("batch", i.value))
       end
       return table.concat(lines, "\n")
     end,
     claims = function(s)
       claim("e-bn-l20-512", last("batch", 1 / 16))
       local lo, hi = math.huge, -math.huge
       for _, i in ipairs(INITS) do
         local v = last("batch", i.value)
         lo, hi = math.min(lo, v), math.max(hi, v)
       end
       claim("e-bn-init-spread", hi - lo)
     end},

    {text = [[
BN standardises z, not tanh(z), whose std is then near 0.63 at every
layer: unnormalised inits drift apart, with BN the three curves meet (the
figure above; L: log axis).]],
     view = "figure",
     figure = function(s)
       local series = {}
       for _, i in ipairs(INITS) do
         series[#series + 1] = {y = run("batch", i.value).std, label = "BN, init " .. i.name}
       end
       series[#series + 1] = {y = run("none", 1 / 16).std, label = "none, Xavier"}
       series[#series + 1] = {y = run("none", 1.0).std, label = "none, init 1.0"}
       return ns.plot.lines(series, {width = 76, height = 14, xlabel = "layer",
                                     ylabel = "std of h", range = {0, 1},
                                     title = "std of each layer's output (batch 512)"})
     end},

    {text = [[
Why the inits agree: batch norm divides out any factor c > 0, BN(c z) =
BN(z). Nearly: eps is a constant. With z = layer 1's pre-activation of
the Xavier run (512 x 256) and c = 100, the largest change is about
4.6e-5, 0.007 % of 0.6310; without eps, rounding noise (about 4e-15).
The output panel's scale probe (Alt-3, a = 100) does this to the small
batch. So the argument needs inits that are multiples of each other: an
orthogonal init is not a multiple of a normal one.]],
     focus = "output",
     claims = function(s)
       local z = layer1_z()
       claim("e-bn-scale100-eps", (bn(z * 100, 1e-5) - bn(z, 1e-5)):abs():max())
       claim("e-bn-scale100-noeps", (bn(z * 100, 0) - bn(z, 0)):abs():max())
     end,
     try = {text = [[
Drop eps (set{eps = 0}): the scale probe's largest change falls below
1e-12.]],
            check = function(s)
              local d = result().scale_dev
              return d < 1e-12 or string.format("the scale probe still moves by %.2g", d)
            end,
            hints = {"e and E make eps ten times smaller or larger",
                     [[set{eps = 0}]]},
            show = {eps = 0}}},

    {text = [[
So with the line in place the init constant stops being a setting you
have to tune: twenty layers come out at the same scale whatever factor
the weights started with. The next two lessons are the price. The first
one is in the deep-stacks view (L) already, in its rows "layer-20 std
at batch".]],
     predict = {question = "The Xavier stack at batch 4 instead of 512: whose layer-20 std moves " ..
                  "more?",
                choices = {"batch norm's", "layer norm's", "neither moves"},
                answer = function(s)
                  local function l20(norm, b)
                    return ns.stack{layers = LAYERS, width = WIDTH, batch = b, init = 1 / 16,
                                    norm = norm, seed = SEED}.std[LAYERS]
                  end
                  local db = math.abs(l20("batch", 4) - last("batch", 1 / 16))
                  local dl = math.abs(l20("layer", 4) - l20("layer", B))
                  if db < 1e-3 and dl < 1e-3 then return 3 end
                  return db > dl and 1 or 2
                end},
     focus = "stacks"},
  },
}
