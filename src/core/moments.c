/* moments.c: not written yet */
