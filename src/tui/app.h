/* app.h: the explorer screen's application state, shared by tui.c (start-up, main loop,
 * drawing) and keys.c (keys and mouse); not a public interface. */
#ifndef TUI_APP_H
#define TUI_APP_H

#include <lua.h>

#include "tui/screen.h"
#include "tui/tui.h"

typedef enum { EDIT_NONE = 0, EDIT_CELL, EDIT_EPS, EDIT_STEP } edit_kind;
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
#define TUI_JAC_POLL_MS 40

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

/* ---- lesson_pane.c: the lesson player and the recorder ---- */
/* Loads opt.lesson (or starts opt.record) before the screen starts; 0, or -1 with a message
 * printed. Without either it does nothing. */
int tui_player_open(app *a);
void tui_player_free(app *a);
/* After the layout: gives the lesson pane its rows (the panels above shrink), into *pane. */
void tui_player_layout(app *a, tui_layout *L, tui_rect *pane);
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
/* The message line's hint while a lesson plays or a recording runs, or NULL. */
const char *tui_player_hint(const app *a);
/* 1 when a lesson is open in --present (the prompt is off). */
int tui_player_presenting(const app *a);
/* The lesson's current step (1-based) and, into *n, its count; 0 without a lesson. */
int tui_player_step(const app *a, int *n);

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
