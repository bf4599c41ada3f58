/* rng.c: not written yet */
