-- normalize_out.lua: ns.normalize(x, spec, {out = t}) writes y into t and returns t itself:
-- the same bits as a new output for every kind and dtype, the masked and torch-order
-- paths included; a wrong shape or dtype, x itself or a non-tensor are errors that leave
-- t as it was.
local T = dofile((arg and arg[0] or "tests/lua/normalize_out.lua"):gsub("[^/]*$", "") .. "tap.lua")
local ns = T.ns

local function same_bits(a, b)
  local fa, fb = a:flat(), b:flat()
  if #fa ~= #fb then return false end
  for i = 1, #fa do
    local x, y = fa[i], fb[i]
    if not (x == y or (x ~= x and y ~= y)) then return false end
    if x == 0 and 1 / x ~= 1 / y then return false end -- -0 and +0 differ
  end
  return true
end

local x = ns.rng(7):normal(3, 2, {4, 6, 5, 5})
for _, case in ipairs({
  {kind = "layer"}, {kind = "rms"}, {kind = "batch"}, {kind = "instance"},
  {kind = "group", groups = 2}, {kind = "layer", dtype = "fp32"}, {kind = "rms", dtype = "fp16"},
  {kind = "batch", dtype = "bf16", eps = 0.1}, {kind = "layer", order = "pairwise"},
  {kind = "layer", order = "torch", dtype = "fp32"},
  {kind = "layer", axes = {4}, mask = ns.tensor({1, 1, 0, 1, 1}, {1, 1, 1, 5})},
}) do
  local name = case.kind .. " " .. (case.dtype or "fp64") .. (case.order and " " .. case.order or "")
      .. (case.mask and " mask" or "")
  local y0, s0 = ns.normalize(x, case)
  local out = ns.zeros({4, 6, 5, 5}, case.dtype)
  local y1, s1 = ns.normalize(x, case, {out = out})
  T.ok(rawequal(y1, out), name .. ": y is the out tensor itself")
  T.ok(same_bits(y1, y0), name .. ": the same bits as a new output")
  T.ok(same_bits(ns.tensor(s1.var), ns.tensor(s0.var)), name .. ": the same statistics")
  -- a second call into the same tensor (a loop)
  local y2 = ns.normalize(x * 2, case, {out = out})
  T.ok(same_bits(y2, ns.normalize(x * 2, case)), name .. ": written again in place")
end

local out = ns.zeros({4, 6, 5, 5}) + 42
T.err("the output must have x's shape (4, 6, 5, 5) and the spec's dtype fp32, got (4, 6, 5, 5) fp64",
      "a dtype that is not the spec's", ns.normalize, x, {dtype = "fp32"}, {out = out})
T.err("the output must have x's shape", "another shape", ns.normalize, x, {}, {out = ns.zeros({3})})
T.err("the output is the input tensor itself", "x itself", ns.normalize, x, {}, {out = x})
T.err("opts.out must be a tensor, got 3", "not a tensor", ns.normalize, x, {}, {out = 3})
T.err("unknown option 'nope'", "an unknown option", ns.normalize, x, {}, {nope = 1})
T.is(out:min(), 42, "a refused out is left as it was")
T.done()
