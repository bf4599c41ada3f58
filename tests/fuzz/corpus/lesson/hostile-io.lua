-- hostile: open a file
local f = io.open("/etc/passwd")
