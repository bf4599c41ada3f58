/* dtype.h: the four storage/accumulation formats and correct rounding into them.
 *
 * Every ns_round_* rounds a double ONCE to the nearest representable value of the
 * target format (ties to even), keeping subnormals and overflowing to +-inf; NaN
 * stays NaN. Going double -> float -> bf16 would round twice and is wrong for
 * values such as 1.00390625 + 1e-12, so fp16 and bf16 are rounded directly from
 * the double's bits.
 *
 *   double y = ns_round(1.00390625 + 1e-12, NS_BF16);   // 1.0078125
 */
#ifndef NS_DTYPE_H
#define NS_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { NS_FP64 = 0, NS_FP32, NS_FP16, NS_BF16, NS_DTYPE_COUNT } ns_dtype;

/* Correctly rounded value of v in dtype d, returned as a double (exact). */
double ns_round(double v, ns_dtype d);

/* Bit patterns of the 16-bit formats (round once from the double), and back (exact). */
uint16_t ns_fp16_bits(double v);
double ns_fp16_value(uint16_t bits);
uint16_t ns_bf16_bits(double v);
double ns_bf16_value(uint16_t bits);
/* The straightforward versions the four above are tested against (ns_bf16_value's widening
 * is its own reference): rounding by integer arithmetic on the double's bits, ldexp. */
uint16_t ns_fp16_bits_ref(double v);
double ns_fp16_value_ref(uint16_t bits);
uint16_t ns_bf16_bits_ref(double v);

/* "fp64", "fp32", "fp16", "bf16". */
/* The canonical names in enum order, NULL-terminated: "fp64", "fp32", "fp16", "bf16". */
extern const char *const ns_dtype_names[];
const char *ns_dtype_name(ns_dtype d);
/* Parses a name (also accepts "float64", "f8", "double", "float32", "f4", "float",
 * "float16", "f2", "half", "bfloat16"); returns 0 on success, -1 if unknown. */
int ns_dtype_parse(const char *name, ns_dtype *out);
/* Bytes per element in storage: 8, 4, 2, 2. */
size_t ns_dtype_size(ns_dtype d);
/* Machine epsilon: 2^-52, 2^-23, 2^-10, 2^-7. */
double ns_dtype_eps(ns_dtype d);

#endif
