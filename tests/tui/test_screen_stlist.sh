#!/bin/sh
# test_screen_stlist.sh: opening a .safetensors file of several tensors without --tensor
# names every tensor, each whole (review N7: the list was cut mid-word at the message's
# length, so the last names could not be found), and says how many cannot be loaded.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# seven F32 tensors with long names and one I64, written with string.pack
"$NS" run - <<LUA
local names = {}
for i = 1, 7 do names[i] = ("encoder.layers.%d.post_attention_norm.weight"):format(i) end
names[8] = "position_ids"
local parts, data, off = {}, {}, 0
for i, n in ipairs(names) do
  local dt = i == 8 and "F8_E4M3" or "F32"
  local size = i == 8 and 4 or 4 * 4
  parts[#parts + 1] = ('"%s":{"dtype":"%s","shape":[4],"data_offsets":[%d,%d]}'):format(n, dt, off, off + size)
  data[#data + 1] = ("\0"):rep(size)
  off = off + size
end
local hdr = "{" .. table.concat(parts, ",") .. "}"
local f = assert(io.open("$tmp/many.safetensors", "wb"))
f:write(string.pack("<I8", #hdr), hdr, table.concat(data))
f:close()
LUA
out=$("$NS" "$tmp/many.safetensors" 2>&1 </dev/null)
st=$?
check "several tensors, none named: exit 1" test "$st" -eq 1
check "  says how many load and how many do not" \
  sh -c 'case "$1" in *"7 tensors (1 more not loadable); name one of "*) exit 0;; *) exit 1;; esac' - "$out"
# every name the message shows is whole: each comma-separated item is a name of the file
# or the closing "and N more"
items=$(printf '%s\n' "$out" | sed 's/.*name one of //' | tr ',' '\n' | sed 's/^ *//')
bad=$(printf '%s\n' "$items" | grep -vxE 'encoder\.layers\.[1-7]\.post_attention_norm\.weight|position_ids|and [0-9]+ more \(normscope audit FILE lists all\)' || true)
check "  every listed name is whole (cut: '$bad')" test -z "$bad"
shown=$(printf '%s\n' "$items" | grep -c 'weight\|position_ids')
more=$(printf '%s\n' "$items" | sed -n 's/^and \([0-9]*\) more.*/\1/p')
check "  the shown and the 'more' add up to the 8 tensors ($shown + ${more:-0})" \
  test $((shown + ${more:-0})) -eq 8
# a listed name opens
name=$(printf '%s\n' "$items" | grep weight | tail -1)
start 120 40 "$tmp/many.safetensors" --tensor "$name"
check "--tensor with a listed name opens it, named first in the title" wait_for "1 Input x (4) encoder.laye" 10
keys q
wait_for "EXIT=0"
done_testing
