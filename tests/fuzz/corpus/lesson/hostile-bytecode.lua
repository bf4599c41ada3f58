-- hostile: load a binary chunk (the signature of precompiled Lua)
local f = assert(load("\27Lua\x54\0\x19\x93\r\n\x1a\n"))
