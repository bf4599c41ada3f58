## tests/unit/jacobian.mk: the Jacobian (analytic vs finite differences), the LAPACK
## wrappers and labelled spectra, and the three batch-norm backward paths.
check_PROGRAMS += tests/unit/test_jacobian tests/unit/test_spectrum tests/unit/test_backward
TESTS += tests/unit/test_jacobian tests/unit/test_spectrum tests/unit/test_backward
tests_unit_test_jacobian_SOURCES = tests/unit/test_jacobian.c tests/unit/tap.h
tests_unit_test_jacobian_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
tests_unit_test_spectrum_SOURCES = tests/unit/test_spectrum.c tests/unit/tap.h
tests_unit_test_spectrum_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
tests_unit_test_backward_SOURCES = tests/unit/test_backward.c tests/unit/tap.h
tests_unit_test_backward_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## The chapters' experiments in the core: vjp, residual Jacobians, the deep stack, and the
## estimator helpers (argument checks and closed forms).
check_PROGRAMS += tests/unit/test_experiments
TESTS += tests/unit/test_experiments
tests_unit_test_experiments_SOURCES = tests/unit/test_experiments.c tests/unit/tap.h
tests_unit_test_experiments_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## The closed-form Jacobian-vector product, the line walks and the O(n) spectrum with its
## eigenvector checks (test_jvp.c).
check_PROGRAMS += tests/unit/test_jvp
TESTS += tests/unit/test_jvp
tests_unit_test_jvp_SOURCES = tests/unit/test_jvp.c tests/unit/tap.h
tests_unit_test_jvp_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
