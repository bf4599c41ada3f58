/* tensor_ops.c: not written yet */
