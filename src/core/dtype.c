/* dtype.c: not written yet */
