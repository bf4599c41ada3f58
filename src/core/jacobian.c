/* jacobian.c: not written yet */
