## tests/audit: the audit issue's tests: the safetensors reader, streaming moments and
## chunked file reading (C), the audit's checks on tensors built to trigger each one,
## the command line (exit statuses, formats, an out-of-core run under ulimit -v), and
## ns.load/ns.tensors/ns.running against PyTorch's own outputs (Lua).
check_PROGRAMS += tests/audit/test_safetensors
TESTS += tests/audit/test_safetensors
tests_audit_test_safetensors_SOURCES = tests/audit/test_safetensors.c
tests_audit_test_safetensors_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_audit_test_safetensors_LDADD = libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## Lua tests run through `normscope run` (LUA_LOG_COMPILER) and, by stock.sh, again under
## stock lua5.4 with normscope.so.
AUDIT_LUA_TESTS = tests/audit/checks.lua tests/audit/verdicts.lua tests/audit/torch.lua \
	tests/audit/torch_layernorm.lua tests/audit/torch_norms.lua
TESTS += $(AUDIT_LUA_TESTS) tests/audit/stock.sh tests/audit/test_audit_cli.sh
EXTRA_DIST += $(AUDIT_LUA_TESTS) tests/audit/stock.sh tests/audit/test_audit_cli.sh \
	tests/audit/make-big.lua tests/audit/make-capture.lua

check_PROGRAMS += tests/audit/test_audit
TESTS += tests/audit/test_audit
tests_audit_test_audit_SOURCES = tests/audit/test_audit.c
tests_audit_test_audit_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_audit_test_audit_LDADD = libnsaudit.la libnsexplore.la libnsplot.la libnscore.la $(LAPACKE_LIBS) \
	$(BLAS_LIBS) -lm

## `make bench` also times the audit of a (32, 256, 64, 64) float32 file against numpy's one
## pass over it (tests/audit/bench.sh).
EXTRA_DIST += tests/audit/bench.sh
bench: bench-audit
bench-audit: normscope$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' NORMSCOPE='$(abs_top_builddir)/normscope' \
	  $(SHELL) $(top_srcdir)/tests/audit/bench.sh
.PHONY: bench-audit
