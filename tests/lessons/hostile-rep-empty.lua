-- hostile: 2^62 copies of the empty string: an empty result after 2^62 turns of a C loop
local s = string.rep("", 1 << 62)
local t = ("").rep("", 1 << 62, "")
assert(s == "" and t == "")
local u = string.rep("ab", 1 << 40)
