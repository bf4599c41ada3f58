## lessons/local.mk: the lesson scripts, in reading order (one file per section of a text,
## named NNN-SECTION-topic.lua). Installed to $(pkgdatadir)/lessons; `make check` plays
## each one headless, lints it (tests/lessons/local.mk) and runs `normscope verify`.
lessondir = $(pkgdatadir)/lessons
LESSON_FILES = \
	lessons/000-15.0-opening.lua
dist_lesson_DATA = $(LESSON_FILES)
