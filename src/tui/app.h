/* app.h: the explorer screen's application state, shared by tui.c (start-up, main loop,
 * drawing) and keys.c (keys and mouse); not a public interface. */
#ifndef TUI_APP_H
#define TUI_APP_H

#include <lua.h>

#include "tui/screen.h"
#include "tui/tui.h"

typedef enum { EDIT_NONE = 0, EDIT_CELL, EDIT_EPS, EDIT_STEP, EDIT_ANSWER } edit_kind;
typedef struct tui_jacwork tui_jacwork;

typedef struct tui_app {
  tui_options opt;
  ns_state st;
  tui_viewstate view;    /* focus and cursor: the screen's, not the explorer's */
  tui_viewstate pending; /* a set{focus=, cursor=} being validated */
  ns_history hist;
  ns_result res;
  ns_explore_cache cache; /* what res was computed for: a key recomputes only what it touched */
  int have_res;
  lua_State *L;
  tui_prompt *prompt;
  tui_layout lay;
  WINDOW *win[TUI_PANEL_COUNT];
  WINDOW *header, *sb, *pwin, *status, *help;
  int colors;
  tui_panel tab;
  int help_open, help_scroll;
  int figure_open;      /* the focused panel's figure fills the screen */
  int figure_req;       /* a set{figure=} being validated: 0 none, 1 open, 2 close */
  tui_xview xview;      /* an experiment view fills the screen (TUI_XV_NONE: none) */
  tui_stack_data stack; /* the deep-stack view's runs, made once */
  int stack_shown;      /* their progress when last drawn */
  int xfigure;          /* with xview: its figure (f) instead of the view */
  edit_kind editing;
  char edit[64];
  char msg[NS_ERRLEN + 64];
  int msg_style;
  int changed; /* the state changed: recompute before drawing */
  double compute_ms;
  struct tui_player *player; /* the lesson played or the recording made (lesson_pane.c) */
  WINDOW *lwin;              /* the lesson pane */
  WINDOW *vwin;              /* with a lesson: the panels' region when a view fills it */
  struct tui_audit *audit;   /* the audit panel (auditview.c), or NULL before the first a */
  tui_jacwork *jacw;         /* the full Jacobian's worker (jacwork.c), NULL until needed */
  int busy;                  /* a recompute is running: the header says so */
  int folded;                /* keys folded into the coming recompute (after the first) */
  int calc_keys;             /* keys the last recompute covered (the header shows > 1) */
} app;

/* The main loop wakes at least this often (signals, pending redraws). */
#define TICK_MS 250
/* A recompute slower than this shows the busy mark in the header. */
#define TUI_BUSY_MS 100.0
/* How often the main loop looks for the Jacobian worker's result while it runs. */
#define TUI_JAC_POLL_MS 4

/* ---- jacwork.c: the full Jacobian in a worker thread ---- */
/* After a recompute: starts (or queues) the job the cache left, if any. */
void tui_jac_after_recompute(app *a);
/* 1 while a job runs or waits. */
int tui_jac_busy(const app *a);
/* Collects a finished job: 1 when its Jacobian went into a->res (redraw). */
int tui_jac_poll(app *a);
/* On the way out: stops and frees the worker. */
void tui_jac_stop(app *a);

/* ---- keys.c ---- */
/* Handles one key (code: a curses key code, else a character) by the keymap. Returns the
 * TUI_R_* flags for the main loop; it never calls back into tui.c. */
unsigned tui_key(app *a, int code, unsigned ch);
/* Puts a formatted message on the message line in a plot style; returns TUI_R_MESSAGE. */
unsigned tui_say(app *a, int style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The cell a number is typed into, 1-based as the panels label it ("x[2,3]", "batch[1,2]"). */
const char *tui_edit_cell_name(const app *a, char *buf, size_t len);

/* ---- lesson_pane.c: the lesson player and the recorder ---- */
/* Loads opt.lesson (or starts opt.record) before the screen starts; 0, or -1 with a message
 * printed. Without either it does nothing. */
int tui_player_open(app *a);
void tui_player_free(app *a);
/* After the layout: gives the lesson pane its rows and the focused panel (or the view the
 * step shows) the rows it needs, into *pane and *view (tui_layout_lesson). */
void tui_player_layout(app *a, tui_layout *L, tui_rect *pane, tui_rect *view);
/* 1 when what the step needs of the screen changed since the last layout (relayout). */
int tui_player_layout_stale(app *a);
/* 1 when the step's text and try-it fit the pane without scrolling; 2 when the text scrolls
 * above the try-it and its verdicts (on the pane's last rows, the bar saying "} more"; how
 * many rows it needs, into why); 0 when they cannot be seen (why, into why). */
int tui_player_fits(app *a, char *why, size_t len);
/* With a lesson: draws the view that fills the panels' region (an experiment view, a
 * figure) into a->vwin and returns 1; 0 when the panels are shown. */
int tui_player_draw_view(app *a, const tui_view *v);
/* The view of the panels' region into w (the step's figure, a panel's, an experiment view). */
void tui_draw_region_view(app *a, WINDOW *w, const tui_view *v);
/* tui.c: the open experiment view (or its figure, xfigure) into w. */
void tui_draw_xview_in(app *a, WINDOW *w, const tui_view *v);
/* 1 while a lesson is open (not the recorder). */
int tui_player_lesson_open(const app *a);
/* "= EXPR" (the pane's = or the prompt): the answer of the step's try.answer or prediction. */
unsigned tui_player_answer(app *a, const char *expr);
unsigned tui_player_answer_value(app *a, double v);
/* The last answer's verdict (or a prediction's truth), "" when none. */
const char *tui_player_note(const app *a);
/* The layout test (tui_layout_dump): the problems of the frame on screen ("; the focused panel
 * output is cut (4 of the 7 rows it needs at width 40)"), counted; the steps, and whether the
 * step shows its question; a prediction revealed without an answer. */
int tui_player_frame_problems(app *a, char *out, size_t len);
int tui_player_dump_steps(app *a, int *asking);
unsigned tui_player_dump_reveal(app *a);
/* Esc with a lesson open: closes the step's figure (TUI_R_RELAYOUT), or 0 when none is open. */
unsigned tui_player_escape(app *a);
/* After a recompute: the try-it's verdict on the learner's state. */
void tui_player_changed(app *a);
/* Every tick of the main loop: autoplay. Returns TUI_R_* flags. */
unsigned tui_player_tick(app *a);
/* Draws the pane into a->lwin (nothing without a lesson or a recording). */
void tui_player_draw(app *a);
/* --present: draws the whole screen and returns 1 (the caller draws nothing else); else 0. */
int tui_player_present(app *a, const tui_view *v);
/* The step number typed after # : goes there. */
unsigned tui_player_goto(app *a, double step);
/* On the way out: saves the progress, writes the recording. */
void tui_player_finish(app *a);
/* The keymap's lesson actions. */
unsigned tui_act_lesson_step(app *a, int which);
unsigned tui_act_lesson_jump(app *a, int which);
unsigned tui_act_lesson_reapply(app *a, int which);
unsigned tui_act_lesson_show(app *a, int which);
unsigned tui_act_lesson_pause(app *a, int which);
unsigned tui_act_lesson_mark(app *a, int which);
unsigned tui_act_lesson_answer(app *a, int which);
unsigned tui_act_lesson_variant(app *a, int which);
unsigned tui_act_lesson_figure(app *a, int which);
/* keys.c's actions a lesson key falls back on: = (eps exactly) and D B V L (which 0..3). */
unsigned tui_act_eps_exact(app *a, int which);
unsigned tui_act_view(app *a, int which);
/* The message line's hint while a lesson plays or a recording runs, or NULL. */
const char *tui_player_hint(const app *a);
/* 1 when a lesson is open in --present (the prompt is off). */
int tui_player_presenting(const app *a);
/* The lesson's current step (1-based) and, into *n, its count; 0 without a lesson. */
int tui_player_step(const app *a, int *n);
/* What the pane shows beyond the step (src/class: a follower shows the teacher's): the
 * question still asked, the hints revealed, the step's figure open, the text's scroll and the
 * last verdict. tui_player_pane: 0 without a lesson; tui_player_set_pane: TUI_R_* flags. */
typedef struct {
  int asking, hints, fig_open, scroll, note_good;
  char note[400];
} tui_pane_sync;
int tui_player_pane(const app *a, tui_pane_sync *out);
unsigned tui_player_set_pane(app *a, const tui_pane_sync *in);

/* ---- auditview.c: the audit panel (key a) ---- */
unsigned tui_act_audit(app *a, int which);
/* 1 while the panel is open: it takes the keys (tui_audit_key) and the screen. */
int tui_audit_is_open(const app *a);
unsigned tui_audit_key(app *a, int code, unsigned ch);
/* Draws the panel over the whole screen and returns 1, or returns 0 when it is closed. */
int tui_audit_draw(app *a, const tui_view *v);
/* 1 while the open panel waits for its audit (the main loop then wakes often); tick: 1 when
 * the progress or the report is new since the last draw. */
int tui_audit_busy(const app *a);
int tui_audit_tick(app *a);
/* Stops a running audit and frees the panel (on exit). */
void tui_audit_free(app *a);

#endif
