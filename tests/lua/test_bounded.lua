-- test_bounded.lua: the sandbox's string and table functions (nsl_bounded.c, table B and T)
-- against the standard ones: the same results and the same messages on every pattern of a
-- fixed list and on random ones; a budget ends a runaway one; TAP.
local n, failed = 0, 0
local function ok(cond, name, why)
  n = n + 1
  if cond then print("ok " .. n .. " - " .. name) else
    failed = failed + 1
    print("not ok " .. n .. " - " .. name)
    if why then print("#   " .. why) end
  end
end

local function pack(...) return {n = select("#", ...), ...} end
-- the results of f(...), or its message (without the position) when it raises
local function run(f, ...)
  local r = pack(pcall(f, ...))
  if not r[1] then return "error: " .. tostring(r[2]):gsub("^[^:]*:%d+: ", "") end
  local out = {}
  for i = 2, r.n do out[#out + 1] = type(r[i]) .. ":" .. tostring(r[i]) end
  return table.concat(out, ", ")
end
local function iter(g, s, p, init)
  local ok_, it = pcall(g, s, p, init)
  if not ok_ then return "error: " .. tostring(it):gsub("^[^:]*:%d+: ", "") end
  local out = {}
  for k = 1, 50 do
    local r = pack(pcall(it))
    if not r[1] then out[#out + 1] = "error: " .. tostring(r[2]):gsub("^[^:]*:%d+: ", ""); break end
    if r[2] == nil then break end
    for i = 2, r.n do out[#out + 1] = tostring(r[i]) end
    out[#out + 1] = "|"
  end
  return table.concat(out, " ")
end

local subjects = {"", "a", "aaa", "hello world", "  key = value  ", "a.b.c", "x(y(z))w",
  "THE (quick) [brown] fox", "abc123def456", "\0a\0b", "line1\nline2\n", "%d%%", "aaab",
  "f(a,b) g(c)", "the the cat", "ab]cd", "caret^dollar$", "--x--", "tab\there"}
local patterns = {"", "a", "a*", "a+", "a-", "a?", ".", ".-", "^a", "a$", "^$", "%a+", "%d+",
  "%s*", "%w+", "%p", "%c", "%x+", "%u", "%l+", "%g+", "%S+", "%D", "[abc]", "[^abc]+",
  "[a-c]+", "[%d%s]+", "[]]", "[^]]", "[a-]", "[-a]", "%b()", "%bxy", "%f[%w]%w+",
  "%f[%W]", "(a)(b)", "()a()", "(%w+)=(%w+)", "%s*(%w+)%s*=%s*(%w+)%s*", "(a*(.)%w(%s*))",
  "(h)(e)(l)", "(.)%1", "(%w+) %1", "^(%w+)", "(.-)%.", "([^.]+)", "^%s*(.-)%s*$", "%$",
  "%^", "%.", "%%", "%", "[", "[a", "(", ")", "%1", "(()", "%b", "%bx", "%f", "%fx",
  "a%", "%z", "[%]", "[a-%]", "(x)%2", "^(a)$", "$a", "a^", "x*$", "[%a-z]", "[z-a]",
  "%[%(", "\0", "%z+", "[\0-\31]", "(%d)(%d)(%d)", ".*", "(.*)$", "(a-)", "b*", "(()())"}
local inits = {nil, 1, 2, -1, -3, 0, 5, 100, -100}

-- find, match, gmatch and gsub against the standard ones
local diffs = {}
local function check(name, a, b, what)
  if a ~= b then diffs[#diffs + 1] = what .. "\n#     standard: " .. a .. "\n#     bounded:  " .. b end
end
for _, s in ipairs(subjects) do
  for _, p in ipairs(patterns) do
    for k = 1, #inits + 1 do
      local i = inits[k]
      local function what(f) return string.format("(%q):%s(%q, %s)", s, f, p, tostring(i)) end
      check("find", run(string.find, s, p, i), run(B.find, s, p, i), what("find"))
      check("find plain", run(string.find, s, p, i, true), run(B.find, s, p, i, true),
            what("find plain"))
      check("match", run(string.match, s, p, i), run(B.match, s, p, i), what("match"))
      check("gmatch", iter(string.gmatch, s, p, i), iter(B.gmatch, s, p, i), what("gmatch"))
    end
    for _, r in ipairs({"<%0>", "%1-%2", "%%", "x", "%", "%9", 7, function(a, b) return b or a end,
                        {a = "A", hello = false, x = 1}}) do
      for _, m in ipairs({nil, 0, 1, 2}) do
        local what = string.format("(%q):gsub(%q, %s, %s)", s, p, tostring(r), tostring(m))
        check("gsub", run(string.gsub, s, p, r, m), run(B.gsub, s, p, r, m), what)
      end
    end
  end
end
ok(#diffs == 0, "find, match, gmatch, gsub: as the standard ones on a fixed list",
   #diffs > 0 and (#diffs .. " differ; first: " .. diffs[1]) or nil)

-- random subjects and patterns from a small alphabet (seeded)
local seed = 12345
local function rnd(k)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % k + 1
end
local pieces = {"a", "b", ".", "%a", "%d", "[ab]", "[^a]", "*", "+", "-", "?", "(", ")", "()",
  "%1", "^", "$", "%b()", "%f[a]", "%%", "[a-c]", "1", "(", ")"}
local alpha = {"a", "b", "c", "1", "(", ")", " ", "%"}
diffs = {}
for t = 1, 20000 do
  local p, s = {}, {}
  for k = 1, rnd(6) do p[#p + 1] = pieces[rnd(#pieces)] end
  for k = 1, rnd(12) - 1 do s[#s + 1] = alpha[rnd(#alpha)] end
  p, s = table.concat(p), table.concat(s)
  local i = rnd(5) - 2
  check("find", run(string.find, s, p, i), run(B.find, s, p, i), string.format("(%q):find(%q, %d)", s, p, i))
  check("match", run(string.match, s, p), run(B.match, s, p), string.format("(%q):match(%q)", s, p))
  check("gmatch", iter(string.gmatch, s, p), iter(B.gmatch, s, p), string.format("(%q):gmatch(%q)", s, p))
  check("gsub", run(string.gsub, s, p, "<%0>"), run(B.gsub, s, p, "<%0>"),
        string.format("(%q):gsub(%q, '<%%0>')", s, p))
end
ok(#diffs == 0, "20000 random patterns: as the standard ones",
   #diffs > 0 and (#diffs .. " differ; first: " .. diffs[1]) or nil)

-- rep
ok(B.rep("ab", 3, ",") == "ab,ab,ab" and B.rep("x", 0) == "" and B.rep("", 1 << 62) == "" and
   B.rep("", 1 << 62, "") == "", "rep: the standard results, and 2^62 empty copies at once")
ok(select(2, pcall(B.rep, "x", 1 << 62)):find("resulting string too large", 1, true) ~= nil,
   "rep: the standard message for a result too large")

-- the table functions: the same results
local t = {1, 2, 3}
T.insert(t, 4); T.insert(t, 1, 0)
ok(table.concat(t, ",") == "0,1,2,3,4" and T.remove(t) == 4 and T.remove(t, 1) == 0 and
   T.concat(t, "-") == "1-2-3" and T.concat(t, "", 2, 3) == "23", "insert, remove, concat")
local m = T.move({1, 2, 3}, 1, 3, 2, {})
ok(m[2] == 1 and m[4] == 3, "move")
local u = {3, 1, 2}
T.sort(u); ok(u[1] == 1 and u[3] == 3, "sort")
T.sort(u, function(a, b) return a > b end); ok(u[1] == 3, "sort with a comparator")
ok(select("#", T.unpack({1, 2, 3})) == 3 and select(2, T.unpack({1, 2, 3}, 2)) == 3, "unpack")
local e = select(2, pcall(T.insert, nil, 1))
ok(e:find("bad argument #1 to '", 1, true) ~= nil and e:find("insert'", 1, true) ~= nil and
   not e:find("'?'", 1, true), "an argument error names the function", e)

-- a budget ends what would run for hours, with its message
local r = {pcall(with_budget, 1000000, function()
  return B.find(("a"):rep(40), ("a*"):rep(40) .. "b")
end)}
ok(not r[1] and tostring(r[2]):find("work budget exceeded", 1, true), "a budget ends a backtracking pattern",
   tostring(r[2]))
r = {pcall(with_budget, 1000000, function() return T.move({}, 1, math.maxinteger - 1, 1, {}) end)}
ok(not r[1] and tostring(r[2]):find("work budget exceeded", 1, true), "a budget ends table.move of 2^63",
   tostring(r[2]))
r = {pcall(with_budget, 1000000, function()
  return B.find(("a"):rep(100000), ("a"):rep(1000) .. "b", 1, true)
end)}
ok(not r[1] and tostring(r[2]):find("work budget exceeded", 1, true), "a budget ends a long plain find",
   tostring(r[2]))
r = {pcall(with_budget, 0, function()
  for k = 1, 3 do local s = ("x"):rep(1000) end
  return B.gsub(("ab"):rep(1000), "(a)(b)", "%2%1")
end)}
ok(r[1] and r[2] == ("ba"):rep(1000), "no limit: a gsub runs whole", tostring(r[2]))

print("1.." .. n)
tap_failed = failed
