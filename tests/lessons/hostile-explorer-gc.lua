-- hostile: a finalizer of its own on the explorers' metatable (finalizers run unhooked)
local e = ns.explorer()
getmetatable(e).__gc = function() while true do end end
