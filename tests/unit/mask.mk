## tests/unit/mask.mk: the spec's mask (normalize.h "Masks"): the bits of a mask of ones,
## padded sequences against the unpadded computation, masked Jacobians, spectra and vjp.
check_PROGRAMS += tests/unit/test_mask
TESTS += tests/unit/test_mask
tests_unit_test_mask_SOURCES = tests/unit/test_mask.c tests/unit/tap.h
tests_unit_test_mask_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
