## tests/class: the classroom (issue 25): the frame format (C, TAP), a teacher and its
## followers in tmux, a hostile sender, the exports.
