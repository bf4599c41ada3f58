-- hostile: a format width of eleven digits (C's printf would pad to 100 GB)
local s = string.format("%99999999999d", 1)
lesson{title = "t", source = "000", section = "s", steps = {{text = s}}}
