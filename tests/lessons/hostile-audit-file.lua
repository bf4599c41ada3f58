-- hostile: map a file through the audit
local r = ns.audit("/tmp/normscope-hostile.npy")
