/* tensor_ops.h: not written yet */
