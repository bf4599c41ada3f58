## tests/lua: TAP tests of the Lua module. The *.lua files run through
## LUA_LOG_COMPILER (Makefile.am: `normscope run`, which provides the global `ns`);
## stock-lua.sh runs them all again under stock lua5.4 with the C module normscope.so
## (through run-lua.sh, which also works as a LUA_LOG_COMPILER on its own).
LUA_MODULE_TESTS = \
	tests/lua/tensor.lua tests/lua/normalize.lua tests/lua/stats.lua \
	tests/lua/rng.lua tests/lua/torch_rng.lua tests/lua/estimators.lua tests/lua/vjp.lua \
	tests/lua/residual.lua tests/lua/io.lua tests/lua/claims.lua tests/lua/stack.lua \
	tests/lua/plot.lua tests/lua/figures.lua tests/lua/explorer.lua \
	tests/lua/experiments.lua tests/lua/kernels.lua \
	tests/lua/panelfig.lua
## tests/fuzz/lua_api_fuzz.lua: every function and method called with wrong arguments
## (a few seconds); must survive and name what was wrong each time.
LUA_MODULE_TESTS += tests/fuzz/lua_api_fuzz.lua
## the spec's mask against numpy (tests/data/mask.tsv)
LUA_MODULE_TESTS += tests/lua/mask.lua
# ns.spectrum at any size, with its checks (issue 24)
LUA_MODULE_TESTS += tests/lua/spectrum_any.lua
# ns.normalize into a given output (issue 24)
LUA_MODULE_TESTS += tests/lua/normalize_out.lua
TESTS += $(LUA_MODULE_TESTS) tests/lua/stock-lua.sh tests/lua/kernels-env.sh
EXTRA_DIST += $(LUA_MODULE_TESTS) tests/lua/tap.lua tests/lua/run-lua.sh tests/lua/stock-lua.sh \
	tests/lua/kernels-env.sh

## core tensor arithmetic (src/core/tensor_ops.c)
check_PROGRAMS += tests/unit/test_tensor_ops
tests_unit_test_tensor_ops_SOURCES = tests/unit/test_tensor_ops.c tests/unit/tap.h
tests_unit_test_tensor_ops_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
TESTS += tests/unit/test_tensor_ops
