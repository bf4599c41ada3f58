/* npy.c: not written yet */
