#!/bin/sh
# The exercises of every lesson can be answered: each step's sets are replayed on an
# explorer (normscope run), and at the step's state
#   - a prediction's answer (a choice in range) or value (a finite number) computes;
#   - a try.answer's value computes, also on variants 2 to 4 of the step, and neither the
#     step's text nor the try's text prints it (the answer is the last hint);
#   - a try.check does not pass yet, and passes with try.show applied;
#   - every try has hints (or is an invitation that names its set{} in its text);
#   - no step leaves the screen as it was (no state change, no new focus, no figure, no
#     view) unless it asks something (a try or a prediction).
# One TAP line per lesson file.
NS=${NORMSCOPE:-./normscope}
top=${top_srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-exercises.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/drive.lua" <<'EOF'
local path = arg[1]
local L, e
local env = setmetatable({}, {__index = _G})
env.claim = function() end
env.result = function() return e:result() end
env.set = function(t) return e:set(t) end
env.get = function() return e:get() end
-- shown(a, b [, digits]): the player's judge, the same rule (agree to the printed digits)
local function shown1(a, b, d)
  local m = math.max(math.abs(a), math.abs(b))
  if m == 0 then return true end
  return math.abs(a - b) <= 10 ^ (math.floor(math.log(m, 10)) - (d - 1)) * (1 + 1e-9)
end
env.shown = function(a, b, d)
  d = d or 6
  if type(a) ~= "table" then return shown1(a, b, d) end
  for i = 1, #a do if not shown1(a[i], b[i], d) then return false end end
  return true
end
env.plot = function() return "" end
env.lesson = function(t) L = t end
assert(loadfile(path, "t", env))()
local steps, problems = L.steps, {}
local function bad(k, msg) problems[#problems + 1] = "step " .. k .. ": " .. msg end
local function replay(k)
  e = ns.explorer()
  for i = 1, k do if steps[i].set then e:set(steps[i].set) end end
end
local function finite(v) return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge end
-- the answer as the pane would print it, found as a whole number in a text
local function shows(text, v)
  if not text or not finite(v) then return nil end
  for _, f in ipairs{"%.3g", "%.4g"} do
    local d = string.format(f, v)
    if #d >= 2 then
      local pat = d:gsub("%p", "%%%0")
      if text:find("%f[%w.]" .. pat .. "%f[^%w.]") then return d end
    end
  end
end
local prev_dump, prev_focus = ns.explorer():dump(), nil
for k, st in ipairs(steps) do
  replay(k)
  local d = e:dump()
  if not (d ~= prev_dump or (st.focus and st.focus ~= prev_focus) or st.figure or st.view or
          st.try or st.predict) then
    bad(k, "changes nothing visible")
  end
  prev_dump, prev_focus = d, st.focus or prev_focus
  local p = st.predict
  if p then
    local ok, v = pcall(function()
      if p.choices then
        return type(p.answer) == "function" and p.answer(e:get()) or p.answer
      end
      return p.value(e:get())
    end)
    if not ok then bad(k, "predict: " .. tostring(v))
    elseif p.choices and not (math.type(v) == "integer" and v >= 1 and v <= #p.choices) then
      bad(k, "predict.answer is not a choice: " .. tostring(v))
    elseif not p.choices and not finite(v) then bad(k, "predict.value is " .. tostring(v)) end
  end
  local t = st.try
  if t then
    -- hints, or an invitation whose text names the set{} that does it
    if (not t.hints or #t.hints == 0) and not (t.text or ""):find("set{[^.}]") then
      bad(k, "a try without hints")
    end
    if t.answer and t.answer.value then
      replay(k)
      local ok, v = pcall(t.answer.value, e:get())
      if not ok or not finite(v) then bad(k, "try.answer.value: " .. tostring(v))
      else
        local shown = shows(st.text, v) or shows(t.text, v)
        if shown then bad(k, "the question prints its answer " .. shown) end
      end
      if st.variant then
        for seed = 2, 4 do
          replay(k)
          local ok2, w = pcall(function()
            e:set(st.variant(seed, e:get()))
            return t.answer.value(e:get())
          end)
          if not ok2 or not finite(w) then bad(k, "variant " .. seed .. ": " .. tostring(w)) end
        end
      end
    end
    if t.check then
      replay(k)
      local ok, r = pcall(t.check, e:get())
      if not ok then bad(k, "try.check: " .. tostring(r))
      elseif r == true then bad(k, "try.check passes at the step's own state") end
      if t.show then
        e:set(t.show)
        local ok2, r2 = pcall(t.check, e:get())
        if not ok2 or r2 ~= true then bad(k, "try.show does not pass: " .. tostring(r2)) end
      end
    end
  end
end
for _, m in ipairs(problems) do print(m) end
EOF
n=0
for f in "$top"/lessons/[0-9]*.lua; do
  n=$((n + 1))
  if "$NS" run "$tmp/drive.lua" "$f" >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ]; then
    echo "ok $n - $(basename "$f")"
  else
    echo "not ok $n - $(basename "$f")"
    sed 's/^/#   /' "$tmp/out"
  fi
done
echo "1..$n"
exit 0
