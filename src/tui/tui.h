/* tui.h: the explorer screen. */
#ifndef TUI_H
#define TUI_H

typedef struct {
  const char *file;       /* .npy/.csv to open, or NULL for the default example */
  int ascii;              /* --ascii: no Unicode drawing characters */
  int no_mouse;           /* --no-mouse */
  int no_color;           /* --no-color (NO_COLOR in the environment does the same) */
  const char *state_file; /* --state FILE (or the last session's, for --resume), or NULL */
  const char *tensor;     /* --tensor NAME: the tensor of a .safetensors file, or NULL */
  const char *theme;      /* --theme NAME (tui_theme_names), or NULL: dark */
  const char *lesson;     /* normscope lesson X: the lesson file to play, or NULL */
  int lesson_step;        /* the step to start at (1-based; 0: 1, or --continue's) */
  int present;            /* --present: the lesson and its panel fill the screen */
  double autoplay;        /* --autoplay SECONDS between steps, 0: off */
  const char *record;     /* normscope record FILE.lua: where the recording goes, or NULL */
  int record_each;        /* record --every-change: each change is a step (no M needed) */
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

#endif
