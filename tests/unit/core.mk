## tests/unit/core.mk: unit tests of the numerics core (dtype, tensor, moments, normalize).
check_PROGRAMS += tests/unit/test_dtype tests/unit/test_tensor tests/unit/test_moments \
	tests/unit/test_normalize
TESTS += tests/unit/test_dtype tests/unit/test_tensor tests/unit/test_moments \
	tests/unit/test_normalize
tests_unit_test_dtype_SOURCES = tests/unit/test_dtype.c tests/unit/tap.h
tests_unit_test_dtype_LDADD = libnscore.la
tests_unit_test_tensor_SOURCES = tests/unit/test_tensor.c tests/unit/tap.h
tests_unit_test_tensor_LDADD = libnscore.la
tests_unit_test_moments_SOURCES = tests/unit/test_moments.c tests/unit/tap.h
tests_unit_test_moments_LDADD = libnscore.la
tests_unit_test_normalize_SOURCES = tests/unit/test_normalize.c tests/unit/tap.h
tests_unit_test_normalize_LDADD = libnscore.la
check_PROGRAMS += tests/unit/test_kernels
TESTS += tests/unit/test_kernels
tests_unit_test_kernels_SOURCES = tests/unit/test_kernels.c tests/unit/tap.h tests/unit/testdata.h
tests_unit_test_kernels_LDADD = libnscore.la
