/* spectrum.c: not written yet */
