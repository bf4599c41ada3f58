## tests/unit/core.mk
