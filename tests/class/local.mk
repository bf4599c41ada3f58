## tests/class: the classroom (issue 25). test_follow.sh: a teacher and three followers in
## tmux (equal panels after a sequence of steps, detach and rejoin, a teacher killed with
## SIGKILL).
CLASS_TESTS = tests/class/test_follow.sh
TESTS += $(CLASS_TESTS)
EXTRA_DIST += $(CLASS_TESTS)
