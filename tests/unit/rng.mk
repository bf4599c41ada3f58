## tests/unit/rng.mk
