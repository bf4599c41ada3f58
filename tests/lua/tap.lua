-- tap.lua: TAP output for the Lua tests (automake's tap-driver reads it).
-- Loaded with dofile by each test; works under stock lua5.4 (tests/lua/run-lua.sh)
-- and under `normscope run`. Every check prints "ok N - name" or "not ok N - name"
-- with the values involved; T.done() prints the plan and exits 1 if anything failed.
local T = {n = 0, failed = 0}

-- The module: the global `ns` when the runner provides it, else require it.
T.ns = rawget(_G, "ns") or require("normscope")

local function report(cond, name, detail)
  T.n = T.n + 1
  print(string.format("%sok %d - %s", cond and "" or "not ", T.n, name))
  if not cond then
    T.failed = T.failed + 1
    if detail then print("#   " .. detail:gsub("\n", "\n#   ")) end
  end
  return cond
end

function T.ok(cond, name, detail) return report(not not cond, name, detail) end

function T.is(got, want, name)
  return report(got == want, name,
    string.format("got %s, want %s", tostring(got), tostring(want)))
end

-- |got - want| <= tol (NaN equals NaN).
function T.close(got, want, tol, name)
  local ok = type(got) == "number" and
    ((got ~= got and want ~= want) or got == want or math.abs(got - want) <= tol)
  return report(ok, name, string.format("got %.17g, want %.17g (tol %g)",
    type(got) == "number" and got or 0 / 0, want, tol) ..
    (type(got) ~= "number" and " [got a " .. type(got) .. "]" or ""))
end

-- Every element of array/tensor got within tol of the array want.
function T.all_close(got, want, tol, name)
  local g = type(got) == "table" and got or got:flat()
  if #g ~= #want then
    return report(false, name, string.format("got %d values, want %d", #g, #want))
  end
  for i = 1, #want do
    local a, b = g[i], want[i]
    if not ((a ~= a and b ~= b) or a == b or math.abs(a - b) <= tol) then
      return report(false, name, string.format("element %d: got %.17g, want %.17g (tol %g)",
        i, a, b, tol))
    end
  end
  return report(true, name)
end

-- f(...) must raise an error whose message contains `pattern` (plain text).
function T.err(pattern, name, f, ...)
  local ok, msg = pcall(f, ...)
  if ok then return report(false, name, "no error raised, expected: " .. pattern) end
  msg = tostring(msg)
  return report(msg:find(pattern, 1, true) ~= nil, name,
    "message: " .. msg .. "\nexpected to contain: " .. pattern)
end

function T.diag(s) print("# " .. tostring(s)) end

function T.done()
  print("1.." .. T.n)
  os.exit(T.failed == 0 and 0 or 1, true) -- close the state: __gc frees C memory
end

-- Source directory of the tests (for data files): $top_srcdir, else next to this file.
function T.srcdir()
  local top = os.getenv("top_srcdir")
  if top and top ~= "" then return top end
  local here = (arg and arg[0] or ""):match("^(.*)/tests/lua/[^/]*$")
  return here or "."
end

-- claims.tsv rows by id: {expected=, tol=, kind=}.
function T.claims()
  local path = T.srcdir() .. "/data/claims.tsv"
  local f = assert(io.open(path, "r"), "cannot open " .. path)
  local rows = {}
  for line in f:lines() do
    if line:sub(1, 1) ~= "#" then
      local id, _, _, exp, tol, kind = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)")
      if id then rows[id] = {expected = tonumber(exp), tol = tonumber(tol), kind = kind} end
    end
  end
  f:close()
  return rows
end

-- Checks value against the claim's expected value and tolerance.
function T.claim(rows, id, value)
  local c = rows[id]
  if not c then return report(false, "claim " .. id, "no such claim in claims.tsv") end
  return T.close(value, c.expected, c.tol, "claim " .. id)
end

return T
