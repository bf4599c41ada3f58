/* tensor.c: not written yet */
