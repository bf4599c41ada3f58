## tests/cli/bad_input.mk: the table of bad inputs (bad_input.tsv: Lua API, files, set{},
## state files, the command line), each with its exit status and message.
TESTS += tests/cli/bad_input.sh
EXTRA_DIST += tests/cli/bad_input.sh tests/cli/bad_input.tsv
