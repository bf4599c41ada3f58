/* explore.h: the explorer model, all of it: the state and its field table (state.h,
 * fields.h), undo/redo (history.h), the undoable edits (edit.h) and the result record
 * (result.h). Include the one you need, or this one for all.
 *
 *   ns_state s;
 *   ns_history h;
 *   ns_result r = {0};
 *   char err[NS_ERRLEN];
 *   ns_state_init(&s, err);
 *   ns_history_init(&h, 256);
 *   ns_edit_eps_decade(&s, &h, +1, err);          // eps 1e-5 -> 1e-4, undoable
 *   if (ns_explore_compute(&s, &r, err) == 0) { ... r.norm.y, r.spec_closed ... }
 *   ns_history_undo(&h, &s);                      // back to eps 1e-5
 *   ns_result_free(&r);
 *   ns_history_free(&h);
 *   ns_state_free(&s);
 */
#ifndef NS_EXPLORE_H
#define NS_EXPLORE_H

#include "explore/edit.h"
#include "explore/history.h"
#include "explore/result.h"
#include "explore/state.h"

#endif
