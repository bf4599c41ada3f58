## tests/cli/harden.mk: the table of bad inputs (bad_input.tsv: Lua API, files, set{},
## state files, the command line), each with its exit status and message; and saving a
## state killed with SIGKILL again and again (test_atomic_kill.sh), the file always whole.
TESTS += tests/cli/bad_input.sh tests/cli/test_atomic_kill.sh
EXTRA_DIST += tests/cli/bad_input.sh tests/cli/bad_input.tsv tests/cli/test_atomic_kill.sh
