## lessons/local.mk: the lesson scripts, in reading order (one file per section of a text,
## named NNN-SECTION-topic.lua). Installed to $(pkgdatadir)/lessons; `make check` plays
## each one headless, lints it (tests/lessons/local.mk) and runs `normscope verify`.
lessondir = $(pkgdatadir)/lessons
LESSON_FILES = \
	lessons/000-15.0-opening.lua lessons/000-15.1-two-maps.lua \
	lessons/000-15.2-epsilon.lua lessons/000-15.3-train-eval.lua \
	lessons/000-15.4-placement.lua lessons/000-15.5-names.lua \
	lessons/000-15.6-check-yourself.lua lessons/000-15.7-okay-so.lua \
	lessons/000-15.8-sources.lua lessons/000-15.9-exercises.lua
## text 001 (the review article)
LESSON_FILES += \
	lessons/001-s00-s02-specification.lua lessons/001-s03-centering.lua \
	lessons/001-s04-stabilizer.lua lessons/001-s05-jacobian.lua \
	lessons/001-s06-companion.lua lessons/001-s07-inference-state.lua \
	lessons/001-s08-scale-symmetry.lua lessons/001-s09-causal.lua \
	lessons/001-s10-what-tests-establish.lua lessons/001-s11-diagnostic-sequence.lua \
	lessons/001-s12-precision.lua
## text 002 (the textbook chapter "Normalisation")
LESSON_FILES += \
	lessons/002-01-problem.lua lessons/002-02-L1-intuition.lua \
	lessons/002-03-L2-three-operations.lua lessons/002-04-L2-batch-noise.lua \
	lessons/002-05-L2-stored-reference.lua lessons/002-06-L2-family.lua \
	lessons/002-07-L3-reduction-index.lua lessons/002-08-L3-group.lua \
	lessons/002-09-L3-rms.lua lessons/002-10-L3-pytorch.lua \
	lessons/002-11-L3-gradients.lua lessons/002-12-L4-motivation-architecture.lua \
	lessons/002-13-L4-distributed.lua lessons/002-14-L4-layout-precision.lua \
	lessons/002-15-L4-audit.lua lessons/002-16-misconceptions-1-6.lua \
	lessons/002-17-misconceptions-7-12.lua lessons/002-18-exercises-1-5.lua \
	lessons/002-19-exercises-6-10.lua lessons/002-20-exercises-11-16.lua \
	lessons/002-21-summary.lua
## end of text 002
## text 003 (the course lesson)
LESSON_FILES += \
	lessons/003-01-opening.lua lessons/003-02-batch-normalization.lua \
	lessons/003-03-forward-backward.lua lessons/003-04-train-inference.lua \
	lessons/003-05-why-it-helps.lua lessons/003-06-family.lua \
	lessons/003-07-placement.lua lessons/003-08-revisited-regularizing.lua
## text 004 (the essay)
LESSON_FILES += \
	lessons/004-01-opening.lua lessons/004-02-one-line.lua \
	lessons/004-03-price1-batch-dependence.lua lessons/004-04-price1-estimator.lua \
	lessons/004-05-price2-train-inference.lua lessons/004-06-what-remains-so.lua
dist_lesson_DATA = $(LESSON_FILES)
EXTRA_DIST += lessons/README.md
## the lesson texts, README.md and doc/ share no run of 9 words with the five source texts
## (skipped where ../shared/seeds is not next to the source tree; NORMSCOPE_SEEDS names it)
TESTS += lessons/test_originality.sh
EXTRA_DIST += lessons/test_originality.sh
## every prediction, typed answer (and its variants), check and show of the lessons computes
## at its step, no question prints its answer, every try has hints, no step shows nothing new
TESTS += lessons/test_exercises.sh
EXTRA_DIST += lessons/test_exercises.sh
