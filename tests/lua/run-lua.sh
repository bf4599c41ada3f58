#!/bin/sh
# run-lua.sh FILE.lua [ARG...]: runs a Lua test with the stock interpreter (lua5.4) and
# the freshly built C module normscope.so, with the module as the global `ns` (as in
# `normscope run`). Prints a TAP skip when lua5.4 or the module is missing.
# Usable as automake's LUA_LOG_COMPILER: $(SHELL) $(top_srcdir)/tests/lua/run-lua.sh
lua=${LUA_INTERP:-}
[ -n "$lua" ] || lua=$(command -v lua5.4 2>/dev/null)
if [ -z "$lua" ] || [ ! -x "$lua" ]; then
  echo "1..0 # SKIP lua5.4 not found"
  exit 0
fi
libs=${top_builddir:-.}/.libs
if [ ! -f "$libs/normscope.so" ]; then
  echo "1..0 # SKIP normscope.so not built in $libs"
  exit 0
fi
NSL_CPATH="$libs/?.so"
export NSL_CPATH
# A sanitizer build (--enable-sanitizers) gives a module that needs the ASan runtime
# loaded before anything else: preload it into the stock interpreter.
if command -v ldd >/dev/null 2>&1 && ldd "$libs/normscope.so" 2>/dev/null | grep -q libasan; then
  asan=$(ldd "$libs/normscope.so" | sed -n 's/.*libasan[^ ]* => \([^ ]*\).*/\1/p' | head -n 1)
  LD_PRELOAD="$asan${LD_PRELOAD:+ $LD_PRELOAD}"
  ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export LD_PRELOAD ASAN_OPTIONS
elif [ -n "${NS_ASAN_RUNTIME:-}" ]; then # clang (--enable-fuzz): the runtime is not linked in
  LD_PRELOAD="$NS_ASAN_RUNTIME${LD_PRELOAD:+ $LD_PRELOAD}"
  ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export LD_PRELOAD ASAN_OPTIONS
fi
exec "$lua" -e 'package.cpath = os.getenv("NSL_CPATH") .. ";" .. package.cpath
ns = require "normscope"' "$@"
