/* fuzz_cellnum.c: text typed into one of the screen's input cells. The first byte picks
 * the cell (an element of x, of the batch, or eps), the rest (at most what the screen's edit
 * line holds) is the text. tui_cell_number (src/tui/cellnum.h, the code the keys run)
 * must accept it or not without reading past the text; an accepted number goes through the
 * same edit as Enter on that cell, which either applies or refuses with a message and the
 * state unchanged, and an applied state must compute (or refuse with a message). */
#include <math.h>
#include <string.h>

#include "explore/explore.h"
#include "fuzz.h"
#include "tui/cellnum.h"

#define EDIT_LEN 64 /* the screen's edit line (app.h: char edit[64]) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  unsigned pick = data[0];
  char text[EDIT_LEN];
  size_t n = size - 1 < EDIT_LEN - 1 ? size - 1 : EDIT_LEN - 1;
  memcpy(text, data + 1, n);
  text[n] = '\0';
  double v;
  if (!text[0] || tui_cell_number(text, &v) != 0) return 0;
  if (!isnan(v)) { /* the value shown in the cell (%.17g) reads back as the same double */
    char shown[64];
    double w;
    snprintf(shown, sizeof shown, "%.17g", v);
    FUZZ_CHECK(tui_cell_number(shown, &w) == 0 && memcmp(&v, &w, sizeof v) == 0,
               "'%s' -> %.17g does not read back", text, v);
  }
  char err[NS_ERRLEN] = "";
  ns_state s, before;
  ns_history h;
  FUZZ_CHECK(ns_state_init(&s, err) == 0, "init: %s", err);
  FUZZ_CHECK(ns_state_copy(&before, &s, err) == 0, "copy: %s", err);
  ns_history_init(&h, 16);
  int rc;
  err[0] = '\0';
  switch (pick % 3) {
  case 0: /* x has 4 elements: indices 4.. are outside */
    rc = ns_edit_set_x(&s, &h, (pick / 3) % 6, v, err);
    break;
  case 1: /* the batch is 2 x 2 */
    rc = ns_edit_set_batch(&s, &h, (pick / 3) % 3, (pick / 9) % 3, v, err);
    break;
  default:
    rc = ns_edit_set_eps(&s, &h, v, err);
    break;
  }
  if (rc != 0) {
    FUZZ_CHECK(err[0] != '\0', "a refused edit without a message");
    FUZZ_CHECK(ns_state_equal(&s, &before), "a refused edit changed the state");
  } else {
    ns_result r;
    memset(&r, 0, sizeof r);
    err[0] = '\0';
    if (ns_explore_compute(&s, &r, err) != 0) FUZZ_CHECK(err[0] != '\0', "compute failed silently");
    ns_result_free(&r);
    int same = ns_state_equal(&s, &before); /* the value the cell had: no step */
    FUZZ_CHECK(ns_history_undo(&h, &s) == !same, "undo steps: %d for a change", same);
    FUZZ_CHECK(ns_state_equal(&s, &before), "undo did not restore the state");
  }
  ns_history_free(&h);
  ns_state_free(&before);
  ns_state_free(&s);
  return 0;
}
