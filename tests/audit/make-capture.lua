-- make-capture.lua PATH: writes a small .safetensors "capture" of a model's normalization
-- layers, as a forward hook would save them (inputs, parameters, buffers, an output), with
-- its own writer (string.pack and a JSON header: nothing of normscope's writing code):
--   stem.bn.input     (16, 8, 8, 8) clean, with running statistics that match it
--   block1.bn.input   (16, 8, 8, 8) channel 4 dead (constant 0), running statistics stale
--   block1.gn.input   (4, 16, 6, 6) clean
--   attn.ln.input     (4, 12, 64) offset 64, std 2: bf16 storage moves LayerNorm's outputs
--   mlp.rms.input     (4, 12, 64) one massive activation (feature 18 of token 1 at 500)
-- and parameters (weight, bias), num_batches_tracked (I64, a scalar) and an output, which a
-- plan leaves out.
local path = assert(arg[1], "usage: make-capture.lua PATH")
local g = ns.rng(20261222)
local tensors = {}
local function add(name, t) tensors[#tensors + 1] = {name = name, t = t} end

local function nchw(N, C, H, W, loc, scale)
  local x = g:normal(0, 1, {N, C, H, W})
  return x * ns.tensor(scale):reshape{1, C, 1, 1} + ns.tensor(loc):reshape{1, C, 1, 1}
end
local loc, scale = {0.5, -1, 2, 0, 1, -0.5, 0.2, 3}, {1, 2, 0.5, 1.5, 1, 3, 0.7, 1}
local stem = nchw(16, 8, 8, 8, loc, scale)
add("stem.bn.input", stem)
local m, v = {}, {}
for c = 1, 8 do
  local xc = stem:slice(2, c, c)
  m[c], v[c] = xc:mean(), xc:var()
end
add("stem.bn.running_mean", ns.tensor(m))
add("stem.bn.running_var", ns.tensor(v))
add("stem.bn.weight", ns.full({8}, 1))
add("stem.bn.bias", ns.zeros({8}))
local f = nchw(16, 8, 8, 8, loc, scale):flat()
for n = 0, 15 do for j = 1, 64 do f[(n * 8 + 3) * 64 + j] = 0 end end
add("block1.bn.input", ns.tensor(f, {16, 8, 8, 8}))
add("block1.bn.running_mean", ns.zeros({8}))
add("block1.bn.running_var", ns.full({8}, 1))
add("block1.gn.input", g:normal(0, 1, {4, 16, 6, 6}) * 2 + 1)
add("attn.ln.input", g:normal(64, 2, {4, 12, 64}))
local r = g:normal(0, 1, {4, 12, 64}):flat()
r[18] = 500
add("mlp.rms.input", ns.tensor(r, {4, 12, 64}))
add("head.out", g:normal(0, 1, {4, 10}))

-- the file: an 8-byte header length, the JSON header padded with spaces to 8 bytes, data
local parts, header, off = {}, {}, 0
for _, e in ipairs(tensors) do
  local vals = e.t:flat()
  local bytes = string.pack("<" .. string.rep("f", #vals), table.unpack(vals))
  local shape = table.concat(e.t:shape(), ",")
  header[#header + 1] = string.format('"%s":{"dtype":"F32","shape":[%s],"data_offsets":[%d,%d]}',
    e.name, shape, off, off + #bytes)
  parts[#parts + 1] = bytes
  off = off + #bytes
end
header[#header + 1] = string.format('"stem.bn.num_batches_tracked":{"dtype":"I64","shape":[],' ..
  '"data_offsets":[%d,%d]}', off, off + 8)
parts[#parts + 1] = string.pack("<i8", 60)
local h = "{" .. table.concat(header, ",") .. "}"
h = h .. string.rep(" ", (8 - #h % 8) % 8)
local out = assert(io.open(path, "wb"))
assert(out:write(string.pack("<I8", #h), h, table.concat(parts)))
assert(out:close())
