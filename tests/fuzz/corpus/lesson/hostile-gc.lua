-- hostile: a finalizer that never ends (Lua runs finalizers with hooks off)
local t = {}
setmetatable(t, {__gc = function() while true do end end})
