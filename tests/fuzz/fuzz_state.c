/* fuzz_state.c: arbitrary bytes as a state file (what save() writes and load() and
 * --state read). load() must apply it or raise a message, leave the state unchanged when
 * it refuses, reach nothing outside its sandbox (no new globals), and an applied state must
 * round-trip through dump() -> load(). */
#include "fuzz_lua.h"

static const char program[] =
    "-- The bytes are a state file: load() applies it or raises a message, never anything\n"
    "-- else; a refused file leaves the state as it was; an applied one round-trips through\n"
    "-- dump() -> load(); the file reaches nothing outside its sandbox (no new globals).\n"
    "local file = FUZZ_TMP .. \"/f2\"\n"
    "local function globals()\n"
    "  local n = 0\n"
    "  for _ in pairs(_G) do n = n + 1 end\n"
    "  return n\n"
    "end\n"
    "function fuzz(s)\n"
    "  local f = assert(io.open(file, \"wb\"))\n"
    "  f:write(s)\n"
    "  f:close()\n"
    "  local e = ns.explorer()\n"
    "  local before, nglobals = e:dump(), globals()\n"
    "  local ok, msg = pcall(e.load, e, file)\n"
    "  if globals() ~= nglobals then error(\"a state file changed the globals\", 0) end\n"
    "  if not ok then\n"
    "    if type(msg) ~= \"string\" or msg == \"\" then error(\"a refusal without a message\", 0) "
    "end\n"
    "    if e:dump() ~= before then error(\"a refused state file changed the state: \" .. msg, 0) "
    "end\n"
    "    return\n"
    "  end\n"
    "  local d = e:dump()\n"
    "  f = assert(io.open(file, \"wb\"))\n"
    "  f:write(d)\n"
    "  f:close()\n"
    "  local e2 = ns.explorer()\n"
    "  local lok, lmsg = pcall(e2.load, e2, file)\n"
    "  if not lok then error(\"load of a dump failed: \" .. tostring(lmsg) .. \"\\n\" .. d, 0) "
    "end\n"
    "  if e2:dump() ~= d then error(\"dump -> load -> dump differs:\\n\" .. d .. \"\\n\" .. "
    "e2:dump(), 0) end\n"
    "end\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_lua_run(fuzz_lua_state(program), data, size);
  return 0;
}
