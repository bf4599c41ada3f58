-- manpage_names.lua (run by test_manpage.sh through `normscope run`): prints, one a line,
-- every Lua function the module offers as the manual page must name it, found by walking
-- the tables at run time: ns.NAME, ns.plot.NAME, and the methods of the objects the module
-- makes (t:NAME for a tensor, e:NAME for an explorer, g:NAME for ns.rng and ns.torch_rng
-- generators, r:NAME for ns.running). Metamethods (__add, ...) are operators, not names.
local out = {}
local function functions(prefix, t)
  for k, v in pairs(t) do
    if type(k) == "string" and type(v) == "function" and k:sub(1, 2) ~= "__" then
      out[#out + 1] = prefix .. k
    end
  end
end
-- the method table of an object: its metatable's __index, or the table a C __index
-- closure keeps as its first upvalue
local function methods(prefix, obj)
  local mt = getmetatable(obj)
  local idx = mt and mt.__index
  if type(idx) == "function" then
    local _, up = debug.getupvalue(idx, 1)
    idx = up
  end
  if type(idx) ~= "table" then error("cannot find the methods of " .. prefix, 0) end
  functions(prefix, idx)
end

functions("ns.", ns)
functions("ns.plot.", ns.plot)
methods("t:", ns.tensor({1, 2}))
methods("e:", ns.explorer())
methods("g:", ns.rng(1))
methods("g:", ns.torch_rng(1))
methods("r:", ns.running({}))
table.sort(out)
local last
for _, name in ipairs(out) do
  if name ~= last then print(name) end
  last = name
end
