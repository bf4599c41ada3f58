## tests/class: the classroom (issue 25). test_follow.sh: a teacher and three followers in
## tmux (equal panels after a sequence of steps, detach and rejoin, a teacher killed with
## SIGKILL). test_hostile.sh: a follower against a fake teacher speaking a Python copy of
## the protocol (hostile_teacher.py).
CLASS_TESTS = tests/class/test_follow.sh tests/class/test_hostile.sh
TESTS += $(CLASS_TESTS)
EXTRA_DIST += $(CLASS_TESTS) tests/class/hostile_teacher.py
