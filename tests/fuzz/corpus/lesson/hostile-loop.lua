-- hostile: an endless loop at top level (the instruction budget ends it)
local n = 0
while true do n = n + 1 end
