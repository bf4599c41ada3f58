/* screen.h: what the files of the explorer screen share (not a public interface).
 *
 * One file per panel (input.c, settings.c, output.c, spectrum.c, batch.c, traineval.c,
 * precision.c, help.c), each with a draw function that reads the state, the result
 * record and a few view options and never changes any of them. layout.c places the
 * panels, theme.c maps plot styles to curses attributes, prompt.c runs the Lua prompt
 * (readline through its callback interface), tui.c owns the main loop and keys.c the keys
 * (app.h holds what those two share).
 */
#ifndef TUI_SCREEN_H
#define TUI_SCREEN_H

#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>
#include <pthread.h>
#include <stddef.h>

#include "explore/explore.h"
#include "explore/panelfig.h"
#include "plot/figure.h"
#include "plot/plot.h"

/* Smallest terminal the screen draws in. */
#define TUI_MIN_W 80
#define TUI_MIN_H 24
/* At least this big, every panel has its own place. */
#define TUI_FULL_W 120
#define TUI_FULL_H 40

/* The panels: explore/panelfig.h's list, whose names set{focus = ...}, get() and
 * plot(panel) read. */
typedef enum {
  TUI_PANEL_INPUT = NS_PANEL_INPUT,
  TUI_PANEL_SETTINGS = NS_PANEL_SETTINGS,
  TUI_PANEL_OUTPUT = NS_PANEL_OUTPUT,
  TUI_PANEL_SPECTRUM = NS_PANEL_SPECTRUM,
  TUI_PANEL_BATCH = NS_PANEL_BATCH,
  TUI_PANEL_TRAIN = NS_PANEL_TRAIN,
  TUI_PANEL_PRECISION = NS_PANEL_PRECISION,
  TUI_PANEL_COUNT = NS_PANEL_COUNT
} tui_panel;
/* Their names (ns_panel_names), in panel order, NULL-terminated. */
extern const char *const *const tui_panel_names;

/* The view state: what the screen shows, as opposed to what the explorer computes. It is
 * never part of the explorer's state, undo or dump. */
typedef struct {
  tui_panel focus;            /* the panel with the keyboard */
  int cursor_row, cursor_col; /* 0-based cell of the focused matrix (input or batch); the
                                 output panel shares the input's */
  int row[TUI_PANEL_COUNT];   /* the selected line of a list panel: spectrum entry,
                                 settings row (input, output and batch use the cursor) */
} tui_viewstate;

/* Bit of panel p in a tui_binding's panel mask. */
#define TUI_PBIT(p) (1u << (p))
#define TUI_PALL ((1u << TUI_PANEL_COUNT) - 1)

/* ---- keymap.c: THE key table (htop's action table, tmux's bind -N) ----
 * Every key of the screen is one row: the codes it answers to, the action, where it
 * applies, a short label for the status line and the help text. The key handler, the ?
 * screen, the status line, the settings panel's key column and the man page's KEYS
 * section (checked by tests/tui/test_keymap) all come from it. */
#define TUI_KEY(k) (0x40000000 | (k)) /* a curses KEY_* code */
#define TUI_ALT(c) (0x20000000 | (c)) /* Esc then c, as terminals send Alt-c */
#define TUI_CTRL(c) ((c)&0x1f)
#define TUI_MAXCODES 12

/* What an action asks of the main loop (htop's Htop_Reaction): the loop acts on these;
 * an action never calls back into it. */
enum {
  TUI_R_NONE = 0,
  TUI_R_RECOMPUTE = 1u << 0, /* the state changed */
  TUI_R_RELAYOUT = 1u << 1,  /* the windows must be placed again */
  TUI_R_QUIT = 1u << 2,
  TUI_R_MESSAGE = 1u << 3, /* the message line has news */
  TUI_R_REPAINT = 1u << 4  /* clear and repaint the whole terminal */
};

typedef enum {
  TUI_SEC_MOVE = 0,
  TUI_SEC_EDIT,
  TUI_SEC_SETTINGS,
  TUI_SEC_PROBES,
  TUI_SEC_EXPERIMENTS,
  TUI_SEC_OTHER,
  TUI_SEC_LESSON, /* lesson_pane.c's keys */
  TUI_SEC_COUNT
} tui_section;
extern const char *const tui_section_names[TUI_SEC_COUNT];

struct tui_app;
typedef struct {
  const char *keys;       /* as help shows them, one word per code: "k K" */
  int code[TUI_MAXCODES]; /* 0-terminated: characters, TUI_KEY(), TUI_ALT() */
  /* which: the index in code[] of the key pressed. Returns TUI_R_* flags. */
  unsigned (*act)(struct tui_app *a, int which);
  unsigned panels;       /* TUI_PBIT()s of the panels it applies to */
  const char *elsewhere; /* what it does in the other panels, or NULL: there it says why not */
  const char *label;     /* status-line label, or NULL: not on the status line */
  const char *help;      /* what it does (the ? screen and the man page) */
  tui_section section;
  unsigned long long fields; /* NS_FIELDBIT()s of the settings it changes (settings panel) */
} tui_binding;
/* Bits of a row's panels beyond the panels': the row is in force only while a lesson is
 * open (TUI_LESSON_ONLY) or only while none is (TUI_NO_LESSON); else always. */
#define TUI_LESSON_ONLY (1u << 30)
#define TUI_NO_LESSON (1u << 31)
extern const tui_binding tui_keymap[];
extern const int tui_nkeymap;
/* The state fields no key changes, each with the way to change it instead. */
typedef struct {
  int field; /* ns_field */
  const char *how;
} tui_unbound;
extern const tui_unbound tui_unbound_fields[];
extern const int tui_nunbound;
/* The binding of a key code (the first row that has it, whatever its mode), or NULL. */
const tui_binding *tui_binding_of(int code);
/* The binding of a key code in force with a lesson open (lesson 1) or not, or NULL. */
const tui_binding *tui_binding_in(int code, int lesson);
/* The keys of the bindings that change field f ("e E ="), into buf. */
const char *tui_field_keys(int f, char *buf, size_t len);
/* What those keys do, from the same rows ("o O: momentum halved / doubled; C: ..."). */
const char *tui_field_help(int f, char *buf, size_t len);
/* The name of key code as the key table spells it ('D' -> "D", TUI_ALT('a') -> "M-a"),
 * into buf; "?" when no binding holds it. Hints on screen name keys through it (or
 * tui_field_keys), so they cannot drift from the table. */
const char *tui_key_name(int code, char *buf, size_t len);

/* Read-only drawing context handed to every panel. */
typedef struct {
  const tui_viewstate *vs; /* focus and cursor */
  int ascii;               /* no Unicode drawing characters */
  int colors;              /* 0 (none), 8 or 256 */
  int focused;             /* this panel has the keyboard */
  int small;               /* the compact (tabbed) layout */
  const char *edit;        /* the number being typed into the focused cell, or NULL */
} tui_view;

/* Panel draw functions: (state, result, window, view). The window is the panel's inside
 * and frame; each draws its own frame with tui_frame. */
typedef void (*tui_draw_fn)(const ns_state *, const ns_result *, WINDOW *, const tui_view *);

/* How the arrows, PgUp/PgDn and Home/End move in a panel: the cursor of a matrix (input,
 * batch), the cursor through x's elements in order (output), the selected line of a list
 * (spectrum, settings), or nothing (the paging keys then scroll the Lua output). */
typedef enum { TUI_NAV_CELLS, TUI_NAV_FLAT, TUI_NAV_LIST, TUI_NAV_NONE } tui_nav;
/* Where a panel sits in one arrangement (layout.c walks these): its column (0 on the left),
 * and its rows in percent of the body's, rounded down; 0: what its column has left, under
 * the others. Panels of a column stack in tui_panel order. In the compact layout every
 * tabbed panel has the same place, which the one on top takes. */
typedef struct {
  int col;
  int rows;
} tui_place;
/* A panel as the screen knows it (panels.c), by tui_panel. */
typedef struct {
  tui_draw_fn draw;  /* the panel's own file: reads the state and result, draws */
  const char *title; /* "1 Input": the frame and the help screen */
  int tabbed;        /* shares the tabbed place of the compact layout */
  tui_nav nav;
  const char *meaning; /* the help screen: what it shows, what its bare numbers mean */
  tui_place full;      /* its place in the full (>= 120x40) layout */
  tui_place compact;   /* and in the compact one */
  /* the panels a lesson step most likely reads with this one: placed under it when it takes
     the whole width */
  int partners[2];
} tui_panel_desc;
extern const tui_panel_desc tui_panels[TUI_PANEL_COUNT];

void tui_draw_input(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_settings(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_output(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_spectrum(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_batch(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_traineval(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_precision(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);

/* Where the input panel puts its cells for an inside width iw: label columns, cell
 * width, cells per line (used by the mouse too). */
void tui_input_geometry(const ns_state *s, int iw, int *lab, int *cw, int *per);

/* The figure view: the focused panel's figure filling w (figure.c). */
void tui_draw_figure(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
/* What every figure of the screen shares (figure.c): plot options sized w x h with the view's
 * glyphs and colours, and painting a canvas at (y, x) (then freeing it; a NULL canvas shows
 * err). */
void tui_fig_opts(plot_opts *o, int w, int h, const tui_view *v, const char *title);
void tui_fig_paint(WINDOW *w, int y, int x, plot_canvas *c, const char *err);

/* Where the batch panel puts its cells for an inside width iw (used by the mouse too),
 * and the first matrix row it shows for a cursor row and an inside height ih. */
void tui_batch_geometry(const ns_state *s, int iw, int *lab, int *cw);
int tui_batch_first_row(const ns_state *s, int cursor_row, int iw, int ih);

/* The settings panel's rows, as fields in screen order (settings.c). */
extern const int tui_settings_rows[];
extern const int tui_nsettings;

/* Panel titles, by tui_panel. */
const char *tui_panel_title(tui_panel p);

/* ---- theme.c ---- */
/* Starts colours (unless disabled) in theme `which` (tui.h's tui_theme_names): returns 0,
 * 8 or 256. */
int tui_theme_init(int want_color, int which);
/* The curses attribute of a plot style (role + flags) under the current colours. */
attr_t tui_attr(int style);
short tui_pair(int style);
/* Frame with a title; a focused panel's frame is highlighted. */
void tui_frame(WINDOW *w, const char *title, const tui_view *v);
/* The cells a title of w has before tui_frame cuts it (the frame, its corners and the
 * focus marker taken off). */
int tui_title_room(WINDOW *w, const tui_view *v);
/* A space that does not break: "rms" TUI_GLUES "%s" keeps a label with its value. */
#define TUI_GLUE 0x1f
#define TUI_GLUES "\x1f"
/* Writes a UTF-8 string at (y, x) clipped to the window's inside (x..width-2): a line
 * that does not fit ends at a space, never inside a number. */
void tui_puts(WINDOW *w, int y, int x, int style, const char *s);
void tui_printf(WINDOW *w, int y, int x, int style, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Writes text from (y, x) wrapped at spaces to the window's inside, at most maxlines
 * lines; returns the lines used. tui_wrap_lines counts them without drawing. */
int tui_wrap(WINDOW *w, int y, int x, int style, const char *text, int maxlines);
int tui_wrap_lines(WINDOW *w, int x, const char *text);
/* Copies a canvas into the window at (y, x). */
void tui_blit(WINDOW *w, int y, int x, const plot_canvas *c);
/* A canvas sized for a window area, with the view's ASCII and colour settings. */
plot_canvas *tui_canvas(int w, int h, const tui_view *v);
/* Inside width and height of a framed window. */
int tui_iw(WINDOW *w);
int tui_ih(WINDOW *w);
/* %.6g-style number, "nan"/"inf" readable, into buf; tui_num_prec with prec digits. */
const char *tui_num(double v, char *buf, size_t len);
const char *tui_num_prec(double v, int prec, char *buf, size_t len);
/* "rank 3 of 4": the rank of an n x n map, in the one wording every panel and view uses. */
const char *tui_rank(int rank, size_t n, char *buf, size_t len);
/* One field of a statistics line: "label value", the value a number or a text. */
typedef struct {
  const char *label;     /* NULL or "": the value alone */
  const char *shrt;      /* a shorter label tried before fewer digits ("": the value alone);
                            NULL: none */
  const char *text;      /* a text value ("fp64", "1-8/300"); NULL: the number v */
  const char *shrt_text; /* a shorter text, with the short labels; NULL: none */
  double v;
  int style;
  int brk; /* starts a line, while the fields fit so */
  int opt; /* left out with the short labels (the screen says it elsewhere) */
} tui_field;
/* Lays n fields out on at most maxlines lines of width cells, each field whole (a label
 * is never parted from its value, a number never cut): the numbers with the most digits
 * (6 down to 3) at which every field fits, two spaces apart or one, starting the lines
 * the fields ask for while that fits. tui_fields_fit returns the lines that takes and (in
 * quality, may be NULL) how roomy the form is, from 1 up to TUI_FIELDS_ROOMY (6 digits,
 * two spaces and the line breaks; TUI_FIELDS_DIGITS gives its digits), or 0 when not even
 * 3 digits fit them all. tui_fields
 * draws them from (y, x) and returns the lines drawn; when they do not all fit, it shows
 * as many as do, then "(K more)". */
#define TUI_FIELDS_ROOMY 16
#define TUI_FIELDS_DIGITS(quality) (3 + ((quality)-1) / 4)
int tui_fields_fit(int width, int maxlines, const tui_field *f, int n, int *quality);
int tui_fields(WINDOW *w, int y, int x, int width, int maxlines, const tui_field *f, int n);

/* ---- the experiment views: each fills the screen like the figure view and is
 * redrawn live from the state and result; keys R B V L open and close them ---- */
typedef enum {
  TUI_XV_NONE = 0,
  TUI_XV_PLACEMENT, /* placement.c: J_pre and J_post of the residual block */
  TUI_XV_BACKWARD,  /* backward.c: dL/dx and its three paths, the checks */
  TUI_XV_SHIFT,     /* evalshift.c: the train/eval gap under a shifted evaluation */
  TUI_XV_STACK,     /* stackview.c: the deep stacks of chapter 004 */
  TUI_XV_COUNT
} tui_xview;
void tui_draw_placement(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_backward(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);
void tui_draw_evalshift(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v);

/* The deep-stack view's runs (stackview.c): they depend on no state field, so the screen
 * keeps them. tui_stack_start (when the view first opens) starts a thread that makes the
 * runs (0.1-0.3 s each) one after the other, off the key path; the fields below `lock`
 * are the thread's until it has counted a run in runs_done (read them under the lock:
 * tui_draw_stack does). tui_stack_stop ends and joins it (on exit). */
#define TUI_STACK_LAYERS 20
#define TUI_STACK_NINIT 3
#define TUI_STACK_NB 5
#define TUI_STACK_RUNS (2 * TUI_STACK_NINIT + 2 * TUI_STACK_NB - 1)
extern const double tui_stack_inits[TUI_STACK_NINIT]; /* 1/16, 0.01, 1 */
extern const int tui_stack_batches[TUI_STACK_NB];     /* 4 8 32 256 512 */
typedef struct {
  int started, thread_on;
  pthread_t thread;
  pthread_mutex_t lock;
  int stop, runs_done, failed;
  char err[NS_ERRLEN];
  double std[2][TUI_STACK_NINIT][TUI_STACK_LAYERS]; /* [none, batch norm][init][layer], B 512 */
  double l20[2][TUI_STACK_NB]; /* layer-20 std, [batch, layer norm][batch size], init 1/16 */
} tui_stack_data;
/* Starts the runs once (later calls do nothing). */
void tui_stack_start(tui_stack_data *d);
/* Runs made so far (TUI_STACK_RUNS: all), or -1 after a failure; 0 before the start. */
int tui_stack_progress(tui_stack_data *d);
/* Asks the thread to stop after its current run and waits for it. */
void tui_stack_stop(tui_stack_data *d);
/* The figure view (f) of experiment view xview (xfigure.c). */
void tui_draw_xfigure(const ns_state *s, const ns_result *r, tui_stack_data *stack, int xview,
                      WINDOW *w, const tui_view *v);
/* The view: "computing..." until every run is in; it depends on no state or result. */
void tui_draw_stack(tui_stack_data *d, WINDOW *w, const tui_view *v);

/* ---- layout.c ---- */
typedef struct {
  int y, x, h, w; /* h == 0: not shown */
} tui_rect;

typedef struct {
  int cols, lines;
  int too_small;
  int small;       /* compact layout: panels 2, 5, 6, 7 share a tabbed slot */
  tui_rect header; /* title and panel tabs */
  tui_rect panel[TUI_PANEL_COUNT];
  tui_rect scrollback;        /* Lua results (may be empty when the prompt is closed) */
  tui_rect prompt;            /* the prompt line */
  tui_rect status;            /* keys / messages */
  tui_panel tab;              /* panel shown in the tabbed slot (compact layout) */
  int tab_x[TUI_PANEL_COUNT]; /* header columns of each panel's tab label, -1 if none */
  int tab_w[TUI_PANEL_COUNT];
} tui_layout;

/* Places everything for a cols x lines terminal. tab: the panel the compact layout
 * shows in its shared slot; prompt_open: the prompt has the keyboard (the compact
 * layout then gives the slot to the scrollback). */
void tui_layout_make(tui_layout *L, int cols, int lines, tui_panel tab, int prompt_open);
/* A panel smaller than this (frame and one line) is not shown. */
#define TUI_PANEL_MIN_H 3
/* A list longer than this many rows may scroll in a lesson's layout: its panel then needs
 * a window of this many rows, saying which it lists ("rows 3-10/300"), and the lines under
 * it (lesson_pane.c measures it so); shorter lists are shown whole. */
#define TUI_LIST_MIN 8
/* What a lesson step needs of the screen (tui_layout_lesson). */
typedef struct {
  tui_panel focus; /* the focused panel */
  int view;        /* 1: an experiment view or a figure fills the panels' region */
  int region_need; /* rows the focused panel (at the full width) or the view needs */
  /* rows the focused panel needs at width w (NULL: region_need) */
  int (*need_at)(void *ud, tui_panel p, int w);
  void *ud;
  int pane_want, pane_min; /* the pane's rows at the screen's width: all its lines; the fewest
                              it may have */
  int pane_extra;          /* of pane_want, the rows that may be scrolled to (the figure's) */
  /* the pane's rows (bar, text and try-it; not the figure) at width w, and its minimum */
  int (*pane_at)(void *ud, int w, int *min);
} tui_lesson_need;
/* With a lesson open, after tui_layout_make: the lesson pane (*pane, under the panels), the
 * panels' region above it (the focused panel gets the rows it needs: grown in its column,
 * or alone across the whole width with two partners under it) or, for a view, *view. The
 * Lua output, while the prompt is open, goes under the pane. 1 when the focused panel or
 * view got what it needs. */
int tui_layout_lesson(tui_layout *L, const tui_lesson_need *n, tui_rect *pane, tui_rect *view);
/* The panel under a screen position, or -1. */
int tui_layout_hit(const tui_layout *L, int y, int x);
/* 1 if panel p is in the compact layout's shared slot. */
int tui_panel_tabbed(tui_panel p);

/* ---- help.c ---- */
/* Draws the help screen in w from line `scroll`: the focused panel's keys and meaning
 * first, then every key, then the glossary. Returns the number of lines. */
int tui_draw_help(WINDOW *w, int scroll, const tui_view *v);
int tui_help_lines(tui_panel focus, int width);
/* The status line: the labels of the focused panel's keys, then the others, as many
 * whole ones as fit in width; when some do not, it ends in "? more" (the help key). */
const char *tui_status_keys(tui_panel focus, int width, char *buf, size_t len);

/* ---- prompt.c ---- */
struct lua_State;
typedef struct tui_prompt tui_prompt;
/* Sets up readline's callback interface for state L (not owned). Never touches the
 * terminal. */
tui_prompt *tui_prompt_new(struct lua_State *L);
void tui_prompt_free(tui_prompt *p);
void tui_prompt_open(tui_prompt *p);
void tui_prompt_close(tui_prompt *p);
int tui_prompt_is_open(const tui_prompt *p);
/* Feeds one curses key. Returns 1 when a chunk was evaluated (the state may have
 * changed), 0 otherwise. Esc closes the prompt. */
int tui_prompt_key(tui_prompt *p, int is_key_code, unsigned int ch);
/* Ctrl-C at the prompt: drop the line being typed. */
void tui_prompt_cancel(tui_prompt *p);
/* A line that starts with '=' goes to fn(ud, the rest) first; fn returns 1 when it took it
 * (a lesson's answer), 0 to let Lua read the line. */
void tui_prompt_set_answer(tui_prompt *p, int (*fn)(void *ud, const char *expr), void *ud);
/* Adds a line of text to the scrollback (style PLOT_S_TEXT, PLOT_S_MARK for errors...). */
void tui_prompt_echo(tui_prompt *p, const char *text, int style);
void tui_prompt_scroll(tui_prompt *p, int lines);
void tui_draw_scrollback(const tui_prompt *p, WINDOW *w, const tui_view *v);
void tui_draw_prompt(const tui_prompt *p, WINDOW *w, const tui_view *v);

#endif
