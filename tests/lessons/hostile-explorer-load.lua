-- hostile: read a file through an explorer object
local ex = ns.explorer()
ex:load("/etc/hostname")
