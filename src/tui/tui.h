/* tui.h: the explorer screen. */
#ifndef TUI_H
#define TUI_H

#include <stddef.h>

struct tui_app;
/* A classroom joined to the screen (src/class: the teacher's broadcast, a student's follow).
 * The screen knows it only through these calls; any may be NULL. */
typedef struct tui_hook {
  void *ud;
  /* A descriptor the main loop waits on besides the keys, or -1 (asked before every wait). */
  int (*fd)(void *ud);
  /* The descriptor is readable, or the loop woke without a key: returns TUI_R_* flags. */
  unsigned (*ready)(void *ud, struct tui_app *a);
  /* After every frame drawn: what the screen shows now may be published. */
  void (*drawn)(void *ud, struct tui_app *a);
  /* A key (tui_binding code) before the keymap has it: TUI_R_* flags, or TUI_HOOK_PASS. */
  unsigned (*key)(void *ud, struct tui_app *a, int code);
  /* The header's words: a title in place of "normscope" (at most 9 columns) and a note. */
  void (*tag)(void *ud, const struct tui_app *a, char *title, char *note, size_t len);
} tui_hook;
#define TUI_HOOK_PASS 0x8000u

typedef struct {
  const char *file;       /* .npy/.csv to open, or NULL for the default example */
  int ascii;              /* --ascii: no Unicode drawing characters */
  int no_mouse;           /* --no-mouse */
  int no_color;           /* --no-color (NO_COLOR in the environment does the same) */
  const char *state_file; /* --state FILE (or the last session's, for --resume), or NULL */
  int resume;             /* --resume: state_file is the autosave (a failed one is offered
                             to be set aside) */
  const char *tensor;     /* --tensor NAME: the tensor of a .safetensors file, or NULL */
  const char *theme;      /* --theme NAME (tui_theme_names), or NULL: dark */
  const char *lesson;     /* normscope lesson X: the lesson file to play, or NULL */
  int lesson_step;        /* the step to start at (1-based; 0: 1, or --continue's) */
  int present;            /* --present: the lesson and its panel fill the screen */
  double autoplay;        /* --autoplay SECONDS between steps, 0: off */
  int show_answers;       /* --show-answers: autoplay plays a try-it's answer and goes on */
  const char *record;     /* normscope record FILE.lua: where the recording goes, or NULL */
  int record_each;        /* record --every-change: each change is a step (no M needed) */
  const tui_hook *hook;   /* --broadcast, follow: the classroom (src/class), or NULL */
} tui_options;

/* The colour themes, NULL-terminated ("dark", "light", "contrast"), and the index of a
 * name in it or -1. */
extern const char *const tui_theme_names[];
int tui_theme_find(const char *name);

/* Where the explorer autosaves its state on exit ($XDG_STATE_HOME/normscope/last.lua, or
 * ~/.local/state/normscope/last.lua) into buf; NULL when neither variable is set. */
const char *tui_last_state_path(char *buf, size_t len);

/* The panels' names (set{focus = ...}, a lesson step's focus, plot(panel)), NULL-terminated:
 * explore/panelfig.h's ns_panel_names. */
extern const char *const *const tui_panel_names;

/* Runs the explorer until the user quits; restores the terminal on every exit path.
 * Returns the process exit status (0, or 1 when the file could not be opened). */
int tui_run(const tui_options *opt);
/* termcheck.c: 1 when the terminal type ($TERM) is in the terminfo database (the screen can
 * start), 0 when it is not; asked before newterm, which leaks what it took on a type it does
 * not know. */
int tui_term_known(void);

/* The layout test (`lesson --layout-dump SIZES NAME`): plays every step of opt->lesson at each
 * size of SIZES ("80x24,100x30,120x40") on a terminal that is not there (curses drawing to
 * /dev/null) and prints one line per step: ok, or FAIL with what is wrong (a region off the
 * screen, two that overlap, a panel or view with fewer rows than it needs, a step text and
 * try-it that do not fit the pane), followed by the screen as text when it fails (always
 * with screens). 0 when every step is ok. */
int tui_layout_dump(const tui_options *opt, const char *sizes, int screens);

#endif
