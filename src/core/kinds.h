/* kinds.h: the normalization kinds, one row each. Everything that differs between kinds
 * and is not mathematics lives in this table: the enum and its count, the names, the
 * titles, the default axes, the default centering, which kinds keep running statistics,
 * how gamma/beta are laid out, and which kind splits the channels into groups. Every
 * list of kinds in the program (the `k` cycle, help texts, the Lua and command-line
 * validators) walks it, so a kind that only reduces differently is one row here.
 *
 * A row: K(ID, name, title, ax1, ax2, ax3, ax4, undefined, center, batch, per_element,
 *          grouped)
 *   ID           NS_KIND_<ID>
 *   name         what set{kind=...}, ns.normalize{kind=...} and --kind accept
 *   title        the module's usual name, as panel 3's header shows it
 *   ax1..ax4     default reduction axes at rank 1..4, a bit mask of 0-based axes
 *                (bit 1, axis 2, stands for "channels within a group" when grouped);
 *                0: the kind is undefined at that rank, and `undefined` says why
 *   undefined    printf format taking the rank (int), or NULL when every rank works
 *   center       default centering (subtract the mean) when spec.center is -1
 *   batch        1: its statistic mixes the examples, so it updates running statistics
 *                in train mode and normalizes with them in eval mode
 *   per_element  1: gamma/beta have one value per normalized element (the reduced
 *                axes' shape); 0: one per channel of axis 2
 *   grouped      1: axis 2 is reduced within `groups` channel groups only
 */
#ifndef NS_KINDS_H
#define NS_KINDS_H

#include <stddef.h>

/* clang-format off */
#define NS_KINDS(K)                                                                                \
  K(LAYER, "layer", "LayerNorm", 0x1, 0x2, 0x4, 0xE, NULL, 1, 0, 1, 0)                             \
  K(RMS, "rms", "RMSNorm", 0x1, 0x2, 0x4, 0xE, NULL, 0, 0, 1, 0)                                   \
  K(BATCH, "batch", "BatchNorm", 0x1, 0x1, 0x5, 0xD, NULL, 1, 1, 0, 0)                             \
  K(INSTANCE, "instance", "InstanceNorm", 0, 0, 0x4, 0xC,                                          \
    "instance norm needs a rank 3 (B, C, L) or rank 4 (N, C, H, W) input, got rank %d",            \
    1, 0, 0, 0)                                                                                    \
  K(GROUP, "group", "GroupNorm", 0, 0x2, 0x6, 0xE,                                                 \
    "group norm needs channels on axis 2: rank %d input is not supported", 1, 0, 0, 1)
/* clang-format on */

#define NS_KIND_ENUM_(ID, ...) NS_KIND_##ID,
typedef enum { NS_KINDS(NS_KIND_ENUM_) NS_KIND_COUNT } ns_kind;
#undef NS_KIND_ENUM_

/* The names separated by spaces, with a leading space, as a string literal for texts
 * built at compile time: "kinds:" NS_KIND_WORDS gives "kinds: layer rms batch ...". */
#define NS_KIND_WORD_(ID, name, ...) " " name
#define NS_KIND_WORDS NS_KINDS(NS_KIND_WORD_)

typedef struct {
  const char *name, *title;
  unsigned axes[4];      /* default axes at rank 1..4; 0: undefined there */
  const char *undefined; /* why a rank has no default axes (format taking the rank) */
  unsigned char center, batch, per_element, grouped;
} ns_kind_info;

/* The rows in enum order. ns_kind_get returns NULL for a value outside the enum, so a
 * caller that switches on a kind can refuse an unknown one instead of guessing. */
extern const ns_kind_info ns_kinds[NS_KIND_COUNT];
const ns_kind_info *ns_kind_get(int k);

#endif
