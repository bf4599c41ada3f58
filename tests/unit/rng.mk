## tests/unit/rng.mk: the numpy-compatible generator, SHA-256, .npy/CSV.
## test_rng_portable builds rng.c again without the compiler's 128-bit integers so the
## two-halves fallback is checked against the same numpy vectors.
check_PROGRAMS += tests/unit/test_rng tests/unit/test_rng_portable tests/unit/test_sha256 \
	tests/unit/test_npy
TESTS += tests/unit/test_rng tests/unit/test_rng_portable tests/unit/test_sha256 \
	tests/unit/test_npy
EXTRA_DIST += src/core/LICENSE.numpy

tests_unit_test_rng_SOURCES = tests/unit/test_rng.c tests/unit/tap.h tests/unit/testdata.h
tests_unit_test_rng_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_rng_LDADD = libnscore.la

tests_unit_test_rng_portable_SOURCES = tests/unit/test_rng.c tests/unit/testdata.h src/core/rng.c \
	src/core/sha256.c
tests_unit_test_rng_portable_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit -DNS_RNG_PORTABLE
tests_unit_test_rng_portable_LDADD = -lm

tests_unit_test_sha256_SOURCES = tests/unit/test_sha256.c tests/unit/tap.h
tests_unit_test_sha256_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_sha256_LDADD = libnscore.la

tests_unit_test_npy_SOURCES = tests/unit/test_npy.c tests/unit/tap.h tests/unit/testdata.h
tests_unit_test_npy_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_npy_LDADD = libnscore.la -lm

## A deterministic mutation run over the .npy fixtures and some CSV (tests/fuzz/fuzz_parse.c
## also builds as a libFuzzer target; see its header).
check_PROGRAMS += tests/fuzz/fuzz_parse
TESTS += tests/fuzz/fuzz_parse
tests_fuzz_fuzz_parse_SOURCES = tests/fuzz/fuzz_parse.c
tests_fuzz_fuzz_parse_LDADD = libnscore.la -lm

## PyTorch's CPU generator against torch's own values (tests/data/torch-rng-vectors.tsv).
check_PROGRAMS += tests/unit/test_torch_rng
TESTS += tests/unit/test_torch_rng
tests_unit_test_torch_rng_SOURCES = tests/unit/test_torch_rng.c tests/unit/tap.h tests/unit/testdata.h
tests_unit_test_torch_rng_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_torch_rng_LDADD = libnscore.la -lm
