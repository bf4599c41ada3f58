/* sha256.c: not written yet */
