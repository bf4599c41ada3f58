-- check_handout.lua HANDOUT.md STATES.txt: every step's block of a handout (normscope
-- lesson X --export FILE.md), pasted into a fresh explorer, gives that step's state as
-- `lesson --states X` prints it (dump() compared, so bit for bit); each exercise's answer,
-- pasted after its step's block, is a state too. Prints one TAP-like line per step
-- ("ok K" / "not ok K: why") and exits 1 on the first difference.
local md = assert(io.open(arg[1])):read("a")
local states = assert(io.open(arg[2])):read("a")

-- the snapshots: "-- step K" and the dump after it
local want, k, cur = {}, nil, {}
for line in (states .. "-- step 0\n"):gmatch("([^\n]*)\n") do
  local m = line:match("^%-%- step (%d+)$")
  if m then
    if k then want[k] = table.concat(cur, "\n") .. "\n" end
    k, cur = tonumber(m), {}
  else
    cur[#cur + 1] = line
  end
end

-- the handout's steps: "## Step K of N" and the first ```lua block after it
local blocks, answers = {}, {}
local step, inblock, buf, target = nil, false, {}, nil
local exercise_step = nil
for line in (md .. "\n"):gmatch("([^\n]*)\n") do
  if inblock then
    if line == "```" then
      target[#target + 1] = table.concat(buf, "\n")
      inblock = false
    else
      buf[#buf + 1] = line
    end
  else
    local s = line:match("^## Step (%d+) of %d+")
    local x = line:match("^### Exercise %d+ %(step (%d+)%)")
    if s then step, exercise_step = tonumber(s), nil end
    if x then exercise_step, step = tonumber(x), nil end
    if line == "```lua" then
      inblock, buf = true, {}
      if step then
        blocks[step] = blocks[step] or {}
        target = blocks[step]
      elseif exercise_step then
        answers[exercise_step] = answers[exercise_step] or {}
        target = answers[exercise_step]
      end
    end
  end
end

local function run(e, text, name)
  local env = {
    set = function(t) e:set(t) end,
    reset = function() e:reset() end,
    ns = {tensor = ns.tensor},
    math = {huge = math.huge},
  }
  local f, err = load(text, "=" .. name, "t", env)
  if not f then return nil, err end
  return pcall(f)
end

local n, bad = 0, 0
for s = 1, math.huge do
  if not want[s] then break end
  n = n + 1
  local e = ns.explorer()
  local b = blocks[s] and blocks[s][1]
  if not b then
    print(("not ok %d: the handout has no block for step %d"):format(s, s))
    os.exit(1)
  end
  e:set{eps = 0.123} -- a state that is not the default: the block must not rely on it
  local ok, err = run(e, b, "step " .. s)
  if not ok then
    print(("not ok %d: the block does not run: %s"):format(s, tostring(err)))
    os.exit(1)
  end
  if e:dump() ~= want[s] then
    print(("not ok %d: the block gives another state than the step's"):format(s))
    os.exit(1)
  end
  local a = answers[s] and answers[s][1]
  if a then
    local ok2, err2 = run(e, a, "answer " .. s)
    if not ok2 then
      print(("not ok %d: the answer's block does not run: %s"):format(s, tostring(err2)))
      os.exit(1)
    end
  end
  print(("ok %d"):format(s))
end
if n == 0 then
  print("not ok 0: no step states")
  os.exit(1)
end
