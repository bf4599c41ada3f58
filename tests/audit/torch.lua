-- torch.lua: ns.tensors, ns.load(FILE.safetensors, NAME) and ns.running{mean=, var=,
-- count=, momentum=} on a state dict of real PyTorch modules (BatchNorm2d after a
-- Conv2d, GroupNorm, LayerNorm; float32) written by tests/data/make-safetensors.py with
-- Python's struct and json only, and normscope's outputs against torch's own (computed
-- by torch 1.13 on CPU and stored in the same file). Also the small fixture's values and
-- the refusals of malformed files, from Lua.
local T = dofile((arg and arg[0] or "tests/audit/torch.lua"):gsub("[^/]*$", "") ..
  "../lua/tap.lua")
local ns = T.ns
local top = os.getenv("top_srcdir") or "."
local dir = top .. "/tests/data/safetensors/"
local f = dir .. "torch.safetensors"

local function maxdiff(a, b)
  local fa, fb = a:flat(), b:flat()
  if #fa ~= #fb then return math.huge end
  local d = 0
  for i = 1, #fa do d = math.max(d, math.abs(fa[i] - fb[i])) end
  return d
end

-- ---- listing
local list = ns.tensors(f)
T.is(list.x_bn.dtype, "F32", "ns.tensors: x_bn is F32")
T.is(table.concat(list.x_bn.shape, ","), "32,4,12,12", "ns.tensors: x_bn's shape")
T.is(list["bn.num_batches_tracked"].dtype, "I64", "num_batches_tracked is listed as I64")
T.is(#list["bn.num_batches_tracked"].shape, 0, "a 0-d buffer has an empty shape")
T.is(list["bn.num_batches_tracked"].loadable, true, "and loads (I64, as one value)")
local ok, err = pcall(ns.load, f)
-- names alone when the dtypes and shapes do not all fit, each whole (explorer review N7)
T.ok(not ok and tostring(err):find("name one of", 1, true) and
  tostring(err):find("bn.running_mean, bn.running_var", 1, true),
  "ns.load without a name lists the tensors", tostring(err))
ok, err = pcall(ns.load, f, "bn.runing_mean")
T.ok(not ok and tostring(err):find('no tensor named "bn.runing_mean"', 1, true),
  "a misspelt name is refused, naming it", tostring(err))

-- ---- BatchNorm2d: eval mode with the module's buffers, train mode with batch statistics
local x = ns.load(f, "x_bn")
T.is(x:dtype(), "fp32", "x_bn loads as fp32")
local gamma, beta = ns.load(f, "bn.weight"), ns.load(f, "bn.bias")
local run = ns.running{mean = ns.load(f, "bn.running_mean"), var = ns.load(f, "bn.running_var"),
  count = 5, momentum = 0.1}
T.is(run.count, 5, "ns.running takes num_batches_tracked as count")
T.close(run.mean[3], ns.load(f, "bn.running_mean")[3], 0, "ns.running starts from the buffers")
local spec = {kind = "batch", dtype = "fp32", acc = "fp64", gamma = gamma, beta = beta}
local y_train = ns.normalize(x, spec)
local d = maxdiff(y_train, ns.load(f, "y_bn_train"))
T.ok(d <= 5e-7, string.format("BatchNorm2d train mode, acc=fp64: within 5e-7 of torch (%.3g)", d))
local d32 = maxdiff(ns.normalize(x, {kind = "batch", dtype = "fp32", acc = "fp32", gamma = gamma,
  beta = beta}), ns.load(f, "y_bn_train"))
T.ok(d32 > d, string.format("sequential fp32 accumulation is farther (%.3g): torch uses double", d32))
spec.mode, spec.running = "eval", run
d = maxdiff(ns.normalize(x, spec), ns.load(f, "y_bn_eval"))
T.ok(d <= 5e-7, string.format("BatchNorm2d eval mode with ns.running buffers: within 5e-7 (%.3g)", d))
T.is(run.count, 5, "eval mode leaves the running statistics alone")

-- the running statistics update as torch's: one more train step from these buffers
do
  local r2 = ns.running{mean = ns.load(f, "bn.running_mean"), var = ns.load(f, "bn.running_var"),
    count = 5, momentum = 0.1}
  ns.normalize(x, {kind = "batch", running = r2})
  local m = x:slice(2, 1, 1):mean()
  T.close(r2.mean[1], 0.9 * ns.load(f, "bn.running_mean")[1] + 0.1 * m, 1e-12,
    "an update from the buffers follows mean = 0.9 mean + 0.1 batch mean")
  T.is(r2.count, 6, "and counts on from num_batches_tracked")
end

-- ---- GroupNorm(4, 8) and LayerNorm(32)
d = maxdiff(ns.normalize(ns.load(f, "x_gn"), {kind = "group", groups = 4, dtype = "fp32",
  acc = "fp64", gamma = ns.load(f, "gn.weight"), beta = ns.load(f, "gn.bias")}), ns.load(f, "y_gn"))
T.ok(d <= 5e-7, string.format("GroupNorm(4, 8), acc=fp64: within 5e-7 of torch (%.3g)", d))
-- torch's LayerNorm kernel folds 1/std into the affine step ((x*rstd - mean*rstd)*w + b in
-- fp32), another rounding order than (x - mean)/std: a few ulps of the output, not 5e-7.
d = maxdiff(ns.normalize(ns.load(f, "x_ln"), {kind = "layer", dtype = "fp32", acc = "fp64",
  gamma = ns.load(f, "ln.weight"), beta = ns.load(f, "ln.bias")}), ns.load(f, "y_ln"))
T.ok(d <= 2e-6, string.format("LayerNorm(32), acc=fp64: within 2e-6 of torch (%.3g)", d))
d = maxdiff(ns.normalize(ns.load(f, "x_ln"), {kind = "layer", dtype = "fp32", order = "torch",
  gamma = ns.load(f, "ln.weight"), beta = ns.load(f, "ln.bias")}), ns.load(f, "y_ln"))
T.ok(d == 0, string.format("LayerNorm(32), order=torch (torch's own order): equal to torch (%.3g)", d))

-- ---- the audit of the module's input with its running buffers
local r = ns.audit(f, {tensor = "x_bn", kind = "batch", running = run})
T.is(r.train_eval_gap.verdict, "warn", "audit: the buffers come from other batches: warn")
do -- reference: the rms of eval - train output per channel, without the affine
  local yt = ns.normalize(x, {kind = "batch"})
  local ye = ns.normalize(x, {kind = "batch", mode = "eval", running = run})
  local worst = 0
  for c = 1, 4 do
    local dd = ye:slice(2, c, c) - yt:slice(2, c, c)
    worst = math.max(worst, math.sqrt(dd:square():mean()))
  end
  T.close(r.train_eval_gap.value, worst, 1e-9, "audit: the gap equals the eval - train rms")
end
T.ok(r.precision.detail:find("BatchNorm sums in double", 1, true) and
  r.precision.detail:find("order=torch", 1, true), "audit: precision runs torch's own arithmetic",
  r.precision.detail)

-- ---- the small fixture, value by value, and the malformed files
local small = dir .. "small.safetensors"
local want = {}
for line in io.lines(dir .. "small.tsv") do
  local name, i, v = line:match("^([^#\t]+)\t(%d+)\t(%S+)$")
  if name then
    want[name] = want[name] or {}
    want[name][tonumber(i) + 1] = tonumber(v)
  end
end
for name, vals in pairs(want) do
  T.all_close(ns.load(small, name), vals, 0, "small." .. name .. " bit for bit")
end
T.is(ns.load(small, {tensor = "bf"}):dtype(), "bf16", "BF16 loads as bf16 ({tensor=})")
T.is(ns.load(dir .. "one.safetensors"):dtype(), "fp64", "a single tensor needs no name")
for line in io.lines(dir .. "bad.tsv") do
  local file, word = line:match("^([^#\t]+)\t(.+)$")
  if file then
    local ok2, e = pcall(ns.load, dir .. file, "x")
    T.ok(not ok2 and tostring(e):find(word, 1, true), file .. " refused", tostring(e))
  end
end
ok, err = pcall(ns.load, dir .. "small.tsv")
T.ok(not ok and tostring(err):find("unknown file type", 1, true), "a .tsv is not a tensor file")
ok, err = pcall(ns.load, top .. "/tests/data/npy/f8.npy", "x")
T.ok(not ok and tostring(err):find("for .safetensors files", 1, true), "a name for a .npy refused",
  tostring(err))
ok, err = pcall(ns.running, {mean = {1, 2}, var = {1}})
T.ok(not ok and tostring(err):find("mean has 2 values, var 1", 1, true), "running: unequal buffers")
ok, err = pcall(ns.running, {mean = {1}, var = {-1}})
T.ok(not ok and tostring(err):find("var >= 0", 1, true), "running: a negative variance refused")
ok, err = pcall(ns.running, {mean = {1}})
T.ok(not ok and tostring(err):find("together", 1, true), "running: mean without var refused")

-- round trip through ns.save as .safetensors
local tmp = os.tmpname()
os.remove(tmp)
local p = tmp .. ".safetensors"
local t = ns.tensor({1.5, -2, 3.25, 1e-3}, {2, 2}, "fp32")
ns.save(p, t)
T.all_close(ns.load(p, "x"), t:flat(), 0, "ns.save writes a .safetensors tensor named x")
os.remove(p)

T.done()
