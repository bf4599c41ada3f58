## tests/unit/jacobian.mk
