## tests/cli/harden.mk: the table of bad inputs (bad_input.tsv: Lua API, files, set{},
## state files, the command line), each with its exit status and message; and saving a
## state killed with SIGKILL again and again (test_atomic_kill.sh), the file always whole.
TESTS += tests/cli/bad_input.sh tests/cli/test_atomic_kill.sh
EXTRA_DIST += tests/cli/bad_input.sh tests/cli/bad_input.tsv tests/cli/test_atomic_kill.sh

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
