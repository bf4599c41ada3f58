-- hostile: write a file through an explorer object
local ex = ns.explorer()
ex:save("/tmp/normscope-hostile-state.lua")
