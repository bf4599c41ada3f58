/* normalize.c: not written yet */
