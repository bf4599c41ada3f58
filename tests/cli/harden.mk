## tests/cli/harden.mk: the table of bad inputs (bad_input.tsv: Lua API, files, set{},
## state files, the command line), each with its exit status and message; and saving a
## state killed with SIGKILL again and again (test_atomic_kill.sh), the file always whole.
TESTS += tests/cli/bad_input.sh tests/cli/test_atomic_kill.sh
EXTRA_DIST += tests/cli/bad_input.sh tests/cli/bad_input.tsv tests/cli/test_atomic_kill.sh

## test_escapes.sh (issue 23): escape sequences from a lesson, a state file, a tensor name
## and a CSV token reach neither stdout nor stderr raw, in any command.
TESTS += tests/cli/test_escapes.sh
EXTRA_DIST += tests/cli/test_escapes.sh
## test_umask.sh: what normscope writes gets 0644 less the umask; the history 0600.
TESTS += tests/cli/test_umask.sh
EXTRA_DIST += tests/cli/test_umask.sh

## test_manpage.sh: doc/normscope.1 is clean under groff -man -ww and names every
## subcommand, option and Lua function (the module walked at run time).
TESTS += tests/cli/test_manpage.sh
EXTRA_DIST += tests/cli/test_manpage.sh tests/cli/manpage_names.lua

## test_install.sh: make install / make uninstall into a scratch DESTDIR, symmetric.
## The package's own folders go once they are empty: a prerequisite of uninstall-hook
## (which runs after every file is removed; its recipe is in src/lua/local.mk).
TESTS += tests/cli/test_install.sh
EXTRA_DIST += tests/cli/test_install.sh
AM_TESTS_ENVIRONMENT += MAKE='$(MAKE)'; export MAKE;
uninstall-hook: uninstall-package-dirs
uninstall-package-dirs:
	-rmdir $(DESTDIR)$(pkgdatadir)/lessons $(DESTDIR)$(pkgdatadir) $(DESTDIR)$(docdir) 2>/dev/null
.PHONY: uninstall-package-dirs

## SIGKILL during every kind of write: the REPL history (the real `normscope
## repl`, read back with history_dump, which reads it as normscope does), and the screen's
## writes on the way out (autosave, lesson progress, a recorded lesson: the real binary
## in tmux, SIGTERM then SIGKILL at a random moment; progress_dump reads the progress
## file with lesson_progress_load).
TESTS += tests/cli/test_kill_history.sh tests/cli/test_kill_exit.sh tests/cli/test_history_sessions.sh
EXTRA_DIST += tests/cli/test_kill_history.sh tests/cli/test_kill_exit.sh tests/cli/test_history_sessions.sh
check_PROGRAMS += tests/cli/history_dump tests/cli/progress_dump tests/cli/kill_on_write
tests_cli_kill_on_write_SOURCES = tests/cli/kill_on_write.c
tests_cli_history_dump_SOURCES = tests/cli/history_dump.c
tests_cli_history_dump_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS)
tests_cli_history_dump_LDADD = libnsrepl.la libnsaudit.la libnsexplore.la libnscore.la $(LUA_LIBS) \
	$(READLINE_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
tests_cli_progress_dump_SOURCES = tests/cli/progress_dump.c src/lesson/lesson_progress.c
tests_cli_progress_dump_LDADD = libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## test_progress_load.sh: a 50,000-line lesson-progress file read by lesson_progress_load
## (progress_dump) matches an awk reference of the file's rules (valid rows, first of
## duplicates kept, file order). The content only: the load's speed is not asserted.
TESTS += tests/cli/test_progress_load.sh
EXTRA_DIST += tests/cli/test_progress_load.sh

## test_history_lock.sh: three REPL sessions writing the history at once keep every entry
## (read-back and write under the lock on <history>.lock), and a lock held elsewhere
## (hold_lock) delays an entry by a bounded wait, with one warning, never loses it.
TESTS += tests/cli/test_history_lock.sh
EXTRA_DIST += tests/cli/test_history_lock.sh
check_PROGRAMS += tests/cli/hold_lock
tests_cli_hold_lock_SOURCES = tests/cli/hold_lock.c
