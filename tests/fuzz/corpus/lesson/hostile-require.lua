-- hostile: load a module
local m = require("os")
