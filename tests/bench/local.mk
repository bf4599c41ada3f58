## tests/bench
