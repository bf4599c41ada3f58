## src/core: the numerics library (no I/O, no globals, no curses, no Lua).
## -ffp-contract=off (AM_CFLAGS) everywhere: no fused multiply-add, so emulated fp32/fp16
## arithmetic and the numpy-compatible normal draws round exactly as specified.
noinst_LTLIBRARIES += libnscore.la
libnscore_la_SOURCES = \
	src/core/err.c src/core/err.h \
	src/core/dtype.c src/core/dtype.h src/core/round.h src/core/lanes.h \
	src/core/tensor.c src/core/tensor.h \
	src/core/tensor_ops.c src/core/tensor_ops.h \
	src/core/estimators.c src/core/estimators.h \
	src/core/moments.c src/core/moments.h \
	src/core/torchorder.c src/core/torchorder.h \
	src/core/kinds.h src/core/normalize.c src/core/normalize.h \
	src/core/running.c src/core/running.h \
	src/core/normalize_ref.c src/core/norm_kernels.c src/core/norm_kernels.h src/core/half.h \
	src/core/split.c src/core/split.h \
	src/core/norm_kernels_avx2.c src/core/norm_kernels_impl.h src/core/norm_kernels_body.h \
	src/core/norm_kernels_tanh.c src/core/norm_kernels_tanh.h \
	src/core/jacobian.c src/core/jacobian.h \
	src/core/stack.c src/core/stack.h \
	src/core/linalg.c src/core/linalg.h src/core/blasdl.c src/core/blasdl.h \
	src/core/spectrum.c src/core/spectrum.h \
	src/core/jvp.c src/core/jvp.h \
	src/core/rng.c src/core/rng.h src/core/ziggurat_tables.h \
	src/core/torch_rng.c src/core/torch_rng.h \
	src/core/sha256.c src/core/sha256.h \
	src/core/npy.c src/core/npy.h src/core/csv.c src/core/csv.h \
	src/core/safetensors.c src/core/safetensors.h \
	src/core/stream.c src/core/stream.h \
	src/core/text.c src/core/text.h
libnscore_la_CFLAGS = $(AM_CFLAGS) -pthread $(LAPACKE_CFLAGS) $(BLAS_CFLAGS)
## LAPACKE_LIBS is empty and BLAS_LIBS only the dlopen library: src/core/blasdl.c opens them
libnscore_la_LIBADD = $(LAPACKE_LIBS) $(BLAS_LIBS) -lm -lpthread
## masked normalization (the spec's mask): its path, Jacobian spectra
libnscore_la_SOURCES += src/core/normalize_mask.c
