-- hostile: string.dump is not there
local b = string.dump(function() end)
