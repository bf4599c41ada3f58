-- make-big.lua PATH EXAMPLES REPEAT [WRITTEN]: writes a .npy fp32 tensor of shape
-- (EXAMPLES * REPEAT, 8, 64, 64) made of one block of EXAMPLES examples written REPEAT
-- times, chunk by chunk (so writing it needs one block of memory, not the file's size).
-- Channel c holds normal(loc[c], scale[c]); channel 3 is nearly dead (scale 1e-4) and
-- channel 6 sits at an offset of 3000 with a spread of 0.01. With WRITTEN (< EXAMPLES),
-- only the first WRITTEN examples of each block hold values: the others are zeros, left
-- as holes, so the file is sparse and takes little disk. Repeating a block leaves every
-- channel's mean and population variance unchanged, so the audit of the big file must
-- agree with the audit of the block alone (written whole to PATH .. ".block.npy").
local path, examples, rep, written = arg[1], tonumber(arg[2]), tonumber(arg[3]), tonumber(arg[4])
assert(path and examples and rep, "usage: make-big.lua PATH EXAMPLES REPEAT [WRITTEN]")
written = written or examples
local C, H, W = 8, 64, 64
local loc = {0, 1, 0.25, -2, 0.5, 3000, 1, -1}
local scale = {1, 2, 1e-4, 1, 0.5, 0.01, 3, 1}
local g = ns.rng(77)
local parts = {}
for e = 1, written do
  for c = 1, C do
    local v = g:normal(loc[c], scale[c], H * W):flat()
    parts[#parts + 1] = string.pack("<" .. string.rep("f", #v), table.unpack(v))
  end
end
local data = table.concat(parts)
local ebytes = C * H * W * 4
local zeros = string.rep("\0", (examples - written) * ebytes)
local function header(n)
  local dict = string.format("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d, %d), }",
    n, C, H, W)
  local pad = 64 - (10 + #dict + 1) % 64
  if pad == 64 then pad = 0 end
  dict = dict .. string.rep(" ", pad) .. "\n"
  return "\x93NUMPY\x01\x00" .. string.pack("<I2", #dict) .. dict
end
local function write(p, n, times, holes)
  local f = assert(io.open(p, "wb"))
  local h = header(n)
  f:write(h)
  for t = 1, times do
    assert(f:seek("set", #h + (t - 1) * examples * ebytes))
    assert(f:write(data))
    if not holes then assert(f:write(zeros)) end
  end
  if holes and written < examples then -- the file's full length: its last byte
    assert(f:seek("set", #h + n * ebytes - 1))
    assert(f:write("\0"))
  end
  assert(f:close())
end
write(path, examples * rep, rep, true)
write(path .. ".block.npy", examples, 1, false)
