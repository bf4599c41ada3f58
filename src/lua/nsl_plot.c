/* nsl_plot.c: ns.plot, figures as text (the renderer of src/plot/figure.h).
 *
 *   ns.plot.heatmap(t [, opts])     t: a matrix (rank-2 tensor or nested array), or a vector
 *   ns.plot.lines(series [, opts])  series: one y array (x = 1..n), a rank-2 tensor (one
 *                                   series per column, as matplotlib), or an array of
 *                                   series, each a y array or a table {x=, y=, label=}
 *                                   (x optional; several: at most 6)
 *   ns.plot.scatter(xs, ys [, opts]) xs, ys: arrays of the same length; or ys an array of
 *                                   arrays (several series) with xs one array for all or
 *                                   one array per series
 *   ns.plot.bars(values [, opts])   one signed bar per value (flattened)
 *   ns.plot.box(groups [, opts])    groups: an array of arrays (or a rank-2 tensor: one
 *                                   group per column); a flat array is one group
 *   ns.plot.hist(values [, opts])   values: an array (one set), or an array of arrays or a
 *                                   rank-2 tensor (one set per column, at most 6),
 *                                   overlaid on common bins
 * Every array may be a tensor or a Lua array; an empty one is no data (the figure says
 * so). Each returns the figure as a string of lines without a final newline.
 *
 * opts (all optional, checked against the one table below): width (10..1000, default
 * 64), height (3..500, default 16), ascii (pure ASCII), color (ANSI colours), glyphs
 * ("blocks", "braille", "ascii"), title, xlabel, ylabel, labels (an array of names:
 * series, bars, groups, heatmap columns; for a heatmap also {rows=, cols=}), legend
 * (false hides it, true shows it for one series too), range ({lo, hi}: the value axis;
 * the y axis of lines and scatter; the colour scale of a heatmap), log (true or "x":
 * the x axis, the values of box and hist; "y" or "xy" for lines and scatter), bins and
 * density (hist), values (heatmap: false never prints numbers in the cells), ref (box: a
 * reference line across every group at a value, e.g. the population value the groups
 * estimate: a number, or {value, label} to name it in the legend).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lua/nsl.h"
#include "lua/nsl_priv.h"
#include "plot/figure.h"

/* Box plots draw one group per row: more than this many cannot be a figure. */
#define NSL_PLOT_MAXSETS 1000

enum { K_HEATMAP = 1, K_LINES = 2, K_SCATTER = 4, K_BARS = 8, K_BOX = 16, K_HIST = 32, K_ALL = 63 };

/* Every option, and the kinds that take it. */
static const struct {
  const char *name;
  int kinds;
} options[] = {{"width", K_ALL},
               {"height", K_ALL},
               {"ascii", K_ALL},
               {"color", K_ALL},
               {"glyphs", K_ALL},
               {"title", K_ALL},
               {"xlabel", K_ALL},
               {"ylabel", K_ALL},
               {"labels", K_ALL},
               {"legend", K_ALL},
               {"range", K_ALL},
               {"log", K_LINES | K_SCATTER | K_BOX | K_HIST},
               {"bins", K_HIST},
               {"density", K_HIST},
               {"xint", K_LINES | K_SCATTER}, /* x values are indices: whole-number ticks */
               {"values", K_HEATMAP},
               {"ref", K_BOX},
               {NULL, 0}};
static const char *const kind_names[] = {"heatmap", "lines", "scatter", "bars", "box", "hist"};

typedef struct {
  plot_opts o;
  int color;
  int anchor; /* stack index of a table that keeps label strings alive */
} popts;

static const char *kind_name(int kind) {
  for (int i = 0; i < 6; i++)
    if (kind == 1 << i) return kind_names[i];
  return "plot";
}

int nsl_optglyphs(lua_State *L, int arg) {
  int ascii = nsl_optbool(L, arg, "ascii", 0);
  lua_getfield(L, arg, "glyphs");
  int g = nsl_choiceat(L, -1, arg, "opts.glyphs", plot_glyph_names, PLOT_GLYPHS_BLOCKS);
  int given = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (ascii && given && g != PLOT_GLYPHS_ASCII)
    nsl_argerror(L, arg, "opts.ascii=true and opts.glyphs='%s' disagree", plot_glyph_names[g]);
  return ascii ? PLOT_GLYPHS_ASCII : g;
}

/* A string field; the table at arg keeps it alive. */
static const char *opt_string(lua_State *L, int arg, const char *name) {
  const char *s = NULL;
  int ty = lua_getfield(L, arg, name);
  if (ty == LUA_TSTRING)
    s = lua_tostring(L, -1);
  else if (ty != LUA_TNIL)
    nsl_argerror(L, arg, "opts.%s must be a string, got %s", name, nsl_got(L, -1));
  lua_pop(L, 1);
  return s;
}

/* Names from the array at idx (strings or numbers) as a C array in Lua memory; the
 * strings are kept in the anchor table. */
static const char *const *names_at(lua_State *L, int idx, int arg, const char *what, int anchor,
                                   size_t *n) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be an array of strings, got %s", what, nsl_got(L, idx));
  size_t len = (size_t)lua_rawlen(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* only the keys 1..len */
    lua_pop(L, 1);
    lua_Integer k;
    if (!nsl_intat(L, -1, 1, (lua_Integer)len, &k))
      nsl_argerror(L, arg, "%s must be an array of strings, got a key %s", what, nsl_got(L, -1));
  }
  const char **v = lua_newuserdatauv(L, (len ? len : 1) * sizeof *v, 0);
  lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1); /* keep the array */
  for (size_t i = 0; i < len; i++) {
    int ty = lua_rawgeti(L, idx, (lua_Integer)i + 1);
    if (ty != LUA_TSTRING && ty != LUA_TNUMBER)
      nsl_argerror(L, arg, "%s[%d] must be a string, got %s", what, (int)i + 1, nsl_got(L, -1));
    luaL_tolstring(L, -1, NULL); /* a string copy of a number */
    v[i] = lua_tostring(L, -1);
    lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1); /* keep the string */
    lua_pop(L, 1);
  }
  *n = len;
  return v;
}

/* Every key of the table at idx must be one of names[]; errors blame argument arg. */
static void check_keys(lua_State *L, int idx, int arg, const char *what, const char *const *names) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1); /* keep the key */
    int ok = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (int i = 0; names[i]; i++) ok |= strcmp(lua_tostring(L, -1), names[i]) == 0;
    if (!ok) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (int i = 0; names[i]; i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, names[i]);
      }
      luaL_pushresult(&b);
      nsl_argerror(L, arg, "%s has an unknown field %s (known: %s)", what, nsl_got(L, -2),
                   lua_tostring(L, -1));
    }
  }
}

/* Reads opts at arg (absent: defaults) for a plot of the given kind. */
static void check_opts(lua_State *L, int arg, int kind, popts *p) {
  plot_opts *o = &p->o;
  plot_opts_init(o);
  p->color = 0;
  lua_newtable(L);
  p->anchor = lua_gettop(L);
  if (!nsl_opttable(L, arg, "opts")) return;
  arg = lua_absindex(L, arg);
  const char *names[sizeof options / sizeof options[0]];
  int nn = 0;
  for (int i = 0; options[i].name; i++) names[nn++] = options[i].name;
  names[nn] = NULL;
  nsl_checkfields(L, arg, "option", names);
  for (int i = 0; options[i].name; i++) {
    if (options[i].kinds & kind) continue;
    if (lua_getfield(L, arg, options[i].name) != LUA_TNIL)
      nsl_argerror(L, arg, "opts.%s does not apply to %s", options[i].name, kind_name(kind));
    lua_pop(L, 1);
  }
  o->width = nsl_optint(L, arg, "width", 10, 1000, o->width);
  o->height = nsl_optint(L, arg, "height", 3, 500, o->height);
  nsl_charge(L, 16 * (double)o->width * (double)o->height); /* cells drawn, then written */
  o->glyphs = (plot_glyphs)nsl_optglyphs(L, arg);
  p->color = nsl_optbool(L, arg, "color", 0);
  o->color = p->color;
  o->title = opt_string(L, arg, "title");
  o->xlabel = opt_string(L, arg, "xlabel");
  o->ylabel = opt_string(L, arg, "ylabel");
  o->legend = nsl_optbool(L, arg, "legend", -1);
  int ty = lua_getfield(L, arg, "labels");
  if (ty != LUA_TNIL) {
    if (kind == K_HEATMAP && ty == LUA_TTABLE && lua_rawlen(L, -1) == 0) {
      /* {rows=, cols=} */
      int t = lua_gettop(L);
      static const char *const rc[] = {"rows", "cols", NULL};
      check_keys(L, t, arg, "opts.labels", rc);
      if (lua_getfield(L, t, "rows") != LUA_TNIL)
        o->rowlabels = names_at(L, -1, arg, "opts.labels.rows", p->anchor, &o->nrowlabels);
      lua_pop(L, 1);
      if (lua_getfield(L, t, "cols") != LUA_TNIL)
        o->labels = names_at(L, -1, arg, "opts.labels.cols", p->anchor, &o->nlabels);
      lua_pop(L, 1);
    } else {
      o->labels = names_at(L, -1, arg, "opts.labels", p->anchor, &o->nlabels);
    }
  }
  lua_pop(L, 1);
  o->bins = nsl_optint(L, arg, "bins", 1, 1000, 0);
  o->density = nsl_optbool(L, arg, "density", 0);
  o->xint = nsl_optbool(L, arg, "xint", 0);
  o->values = nsl_optbool(L, arg, "values", -1);
  ty = lua_getfield(L, arg, "log");
  if (ty == LUA_TBOOLEAN) {
    o->logx = lua_toboolean(L, -1);
  } else if (ty == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    int xy = kind & (K_LINES | K_SCATTER);
    if (strcmp(s, "x") == 0)
      o->logx = 1;
    else if (xy && strcmp(s, "y") == 0)
      o->logy = 1;
    else if (xy && strcmp(s, "xy") == 0)
      o->logx = o->logy = 1;
    else
      nsl_argerror(L, arg, "opts.log must be true, false%s, got %s",
                   xy ? ", 'x', 'y' or 'xy'" : " or 'x'", nsl_got(L, -1));
  } else if (ty != LUA_TNIL) {
    nsl_argerror(L, arg, "opts.log must be a boolean or a string, got %s", nsl_got(L, -1));
  }
  lua_pop(L, 1);
  ty = lua_getfield(L, arg, "range");
  if (ty != LUA_TNIL) {
    if (ty != LUA_TTABLE || lua_rawlen(L, -1) != 2)
      nsl_argerror(L, arg, "opts.range must be {lo, hi}, got %s", nsl_got(L, -1));
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    int ilo = lua_gettop(L) - 1, ihi = ilo + 1;
    double lo = lua_tonumber(L, ilo), hi = lua_tonumber(L, ihi);
    if (lua_type(L, ilo) != LUA_TNUMBER || lua_type(L, ihi) != LUA_TNUMBER || !isfinite(lo) ||
        !isfinite(hi) || !(lo < hi)) {
      const char *a = nsl_got(L, ilo), *b = nsl_got(L, ihi);
      nsl_argerror(L, arg, "opts.range must be two finite numbers lo < hi, got {%s, %s}", a, b);
    }
    int value_log = (kind & (K_LINES | K_SCATTER)) ? o->logy : o->logx;
    if (value_log && lo <= 0)
      nsl_argerror(L, arg, "opts.range on a log axis must be positive, got lo = %f", lo);
    o->has_range = 1, o->lo = lo, o->hi = hi;
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  ty = lua_getfield(L, arg, "ref");
  if (ty == LUA_TNUMBER) {
    o->has_ref = 1, o->ref = lua_tonumber(L, -1);
  } else if (ty == LUA_TTABLE && lua_rawlen(L, -1) >= 1 && lua_rawlen(L, -1) <= 2) {
    int t = lua_gettop(L);
    if (lua_rawgeti(L, t, 1) != LUA_TNUMBER)
      nsl_argerror(L, arg, "opts.ref[1] must be a number, got %s", nsl_got(L, -1));
    o->has_ref = 1, o->ref = lua_tonumber(L, -1);
    int lt = lua_rawgeti(L, t, 2);
    if (lt == LUA_TSTRING) {
      o->ref_label = lua_tostring(L, -1);
      lua_rawseti(L, p->anchor, (lua_Integer)lua_rawlen(L, p->anchor) + 1); /* keep it */
      lua_pushnil(L); /* stands in for the string popped below */
    } else if (lt != LUA_TNIL) {
      nsl_argerror(L, arg, "opts.ref[2] must be a string (the legend's name), got %s",
                   nsl_got(L, -1));
    }
    lua_pop(L, 2); /* the label slot and the value */
  } else if (ty != LUA_TNIL) {
    nsl_argerror(L, arg, "opts.ref must be a number or {value, label}, got %s", nsl_got(L, -1));
  }
  if (o->has_ref && !isfinite(o->ref))
    nsl_argerror(L, arg, "opts.ref must be finite, got %f", o->ref);
  lua_pop(L, 1);
}

/* The numbers at idx (a tensor or an array, possibly empty) in Lua scratch (pushed);
 * *n their count; shape (rank, dims) when wanted. */
static double *numbers_at(lua_State *L, int idx, int arg, const char *what, size_t *n, int *rank,
                          size_t *shape) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TTABLE && lua_rawlen(L, idx) == 0) {
    lua_pushnil(L);
    if (lua_next(L, idx)) /* a table with keys but no array part */
      nsl_argerror(L, arg, "%s must be an array of numbers, got a table with other keys", what);
    *n = 0;
    if (rank) *rank = 1, shape[0] = 0, shape[1] = 1;
    return nsl_scratch(L, 1);
  }
  ns_tensor *t = nsl_tensorat(L, idx, arg, what);
  double *v = nsl_scratch(L, t->n);
  ns_tensor_read(t, v);
  *n = t->n;
  if (rank) {
    *rank = t->rank;
    for (int k = 0; k < NS_MAXRANK; k++) shape[k] = t->shape[k];
  }
  return v;
}

/* 1 when the value at idx is an array of arrays (its first element a table or a tensor). */
static int is_list(lua_State *L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) == 0) return 0;
  lua_rawgeti(L, idx, 1);
  int r = lua_type(L, -1) == LUA_TTABLE || nsl_totensor(L, -1) != NULL;
  lua_pop(L, 1);
  return r;
}

/* Pushes the canvas as text (ANSI with color) without the final newline; frees it. */
static int push_figure(lua_State *L, plot_canvas *c, const popts *p, const char *err) {
  if (!c) return luaL_error(L, "plot: %s", err);
  char *s = p->color ? plot_canvas_ansi(c) : plot_canvas_text(c);
  plot_canvas_free(c);
  if (!s) return luaL_error(L, "plot: out of memory");
  size_t len = strlen(s);
  if (len && s[len - 1] == '\n') len--;
  nsl_pushtext_free(L, s, len);
  return 1;
}

/* The columns of the rank-2 tensor t one after the other, in Lua scratch (pushed):
 * column k is v[k * rows .. (k + 1) * rows - 1]. */
static double *columns(lua_State *L, const ns_tensor *t) {
  size_t rows = t->shape[0], cols = t->shape[1];
  double *v = nsl_scratch(L, t->n);
  for (size_t r = 0; r < rows; r++)
    for (size_t k = 0; k < cols; k++) v[k * rows + r] = ns_tensor_get(t, r * cols + k);
  return v;
}

/* ns.plot.heatmap(t [, opts]) */
static int p_heatmap(lua_State *L) {
  popts p;
  check_opts(L, 2, K_HEATMAP, &p);
  size_t n, shape[NS_MAXRANK];
  int rank;
  double *m = numbers_at(L, 1, 1, "t", &n, &rank, shape);
  if (rank > 2) nsl_argerror(L, 1, "t must be a matrix (rank 1 or 2), got rank %d", rank);
  size_t rows = rank == 2 ? shape[0] : (n ? 1 : 0), cols = rank == 2 ? shape[1] : n;
  char err[PLOT_ERRLEN];
  return push_figure(L, plot_fig_heatmap(m, rows, cols, &p.o, err), &p, err);
}

/* One series from the value at idx (a y array, or {x=, y=, label=}) into s. */
static void series_at(lua_State *L, int idx, int arg, int k, plot_xy *s) {
  idx = lua_absindex(L, idx);
  char what[48];
  memset(s, 0, sizeof *s);
  if (lua_type(L, idx) == LUA_TTABLE && lua_rawlen(L, idx) == 0 &&
      lua_getfield(L, idx, "y") != LUA_TNIL) {
    static const char *const fields[] = {"x", "y", "label", NULL};
    int y = lua_gettop(L);
    snprintf(what, sizeof what, "series[%d]", k + 1);
    check_keys(L, idx, arg, what, fields);
    snprintf(what, sizeof what, "series[%d].y", k + 1);
    s->y = numbers_at(L, y, arg, what, &s->n, NULL, NULL);
    if (lua_getfield(L, idx, "x") != LUA_TNIL) {
      size_t nx;
      snprintf(what, sizeof what, "series[%d].x", k + 1);
      s->x = numbers_at(L, -1, arg, what, &nx, NULL, NULL);
      if (nx != s->n)
        nsl_argerror(L, arg, "series[%d].x has %d values but y has %d", k + 1, (int)nx, (int)s->n);
    }
    int ty = lua_getfield(L, idx, "label");
    if (ty == LUA_TSTRING)
      s->label = lua_tostring(L, -1); /* the series table keeps it */
    else if (ty != LUA_TNIL)
      nsl_argerror(L, arg, "series[%d].label must be a string, got %s", k + 1, nsl_got(L, -1));
    return;
  }
  snprintf(what, sizeof what, "series[%d]", k + 1);
  s->y = numbers_at(L, idx, arg, what, &s->n, NULL, NULL);
}

/* ns.plot.lines(series [, opts]) */
static int p_lines(lua_State *L) {
  popts p;
  check_opts(L, 2, K_LINES, &p);
  plot_xy s[PLOT_MAXSERIES];
  size_t ns = 0;
  ns_tensor *t = nsl_totensor(L, 1);
  if (t && t->rank > 2)
    nsl_argerror(L, 1, "series: a tensor must have rank 1 or 2, got rank %d", t->rank);
  if (t && t->rank == 2) {
    if (t->shape[1] > PLOT_MAXSERIES)
      nsl_argerror(L, 1, "series: at most %d columns (series), got %d", PLOT_MAXSERIES,
                   (int)t->shape[1]);
    double *v = columns(L, t);
    for (size_t k = 0; k < t->shape[1]; k++)
      s[ns++] = (plot_xy){NULL, v + k * t->shape[0], t->shape[0], NULL};
  } else if (t || lua_type(L, 1) != LUA_TTABLE || !is_list(L, 1)) {
    if (!t && lua_type(L, 1) != LUA_TTABLE)
      nsl_argerror(L, 1, "series must be an array of series or of numbers, got %s", nsl_got(L, 1));
    int single = 0; /* one {x=, y=, label=} table */
    if (!t && lua_rawlen(L, 1) == 0) {
      single = lua_getfield(L, 1, "y") != LUA_TNIL;
      lua_pop(L, 1);
    }
    if (single) {
      series_at(L, 1, 1, 0, &s[ns++]);
    } else {
      s[0] = (plot_xy){NULL, NULL, 0, NULL};
      s[0].y = numbers_at(L, 1, 1, "series", &s[0].n, NULL, NULL);
      ns = 1;
    }
  } else {
    size_t len = (size_t)lua_rawlen(L, 1);
    if (len > PLOT_MAXSERIES)
      nsl_argerror(L, 1, "series: at most %d series, got %d", PLOT_MAXSERIES, (int)len);
    for (size_t k = 0; k < len; k++) {
      lua_rawgeti(L, 1, (lua_Integer)k + 1);
      series_at(L, -1, 1, (int)k, &s[ns++]);
    }
  }
  char err[PLOT_ERRLEN];
  return push_figure(L, plot_fig_lines(s, ns, &p.o, 1, err), &p, err);
}

/* ns.plot.scatter(xs, ys [, opts]) */
static int p_scatter(lua_State *L) {
  popts p;
  check_opts(L, 3, K_SCATTER, &p);
  plot_xy s[PLOT_MAXSERIES];
  size_t ns = 0;
  if (is_list(L, 2)) {
    size_t len = (size_t)lua_rawlen(L, 2);
    if (len > PLOT_MAXSERIES)
      nsl_argerror(L, 2, "ys: at most %d series, got %d", PLOT_MAXSERIES, (int)len);
    int xs_list = is_list(L, 1);
    if (xs_list && lua_rawlen(L, 1) != len)
      nsl_argerror(L, 1, "xs has %d arrays but ys has %d", (int)lua_rawlen(L, 1), (int)len);
    size_t nx = 0;
    double *x = xs_list ? NULL : numbers_at(L, 1, 1, "xs", &nx, NULL, NULL);
    for (size_t k = 0; k < len; k++) {
      char what[32];
      snprintf(what, sizeof what, "ys[%d]", (int)k + 1);
      lua_rawgeti(L, 2, (lua_Integer)k + 1);
      s[ns].y = numbers_at(L, -1, 2, what, &s[ns].n, NULL, NULL);
      s[ns].label = NULL;
      if (xs_list) {
        snprintf(what, sizeof what, "xs[%d]", (int)k + 1);
        lua_rawgeti(L, 1, (lua_Integer)k + 1);
        s[ns].x = numbers_at(L, -1, 1, what, &nx, NULL, NULL);
      } else {
        s[ns].x = x;
      }
      if (nx != s[ns].n)
        nsl_argerror(L, 2, "ys[%d] has %d values but xs has %d", (int)k + 1, (int)s[ns].n, (int)nx);
      ns++;
    }
  } else {
    size_t nx;
    double *x = numbers_at(L, 1, 1, "xs", &nx, NULL, NULL);
    s[0].y = numbers_at(L, 2, 2, "ys", &s[0].n, NULL, NULL);
    s[0].x = x, s[0].label = NULL;
    if (nx != s[0].n) nsl_argerror(L, 2, "ys has %d values but xs has %d", (int)s[0].n, (int)nx);
    ns = 1;
  }
  char err[PLOT_ERRLEN];
  return push_figure(L, plot_fig_lines(s, ns, &p.o, 0, err), &p, err);
}

/* ns.plot.bars(values [, opts]) */
static int p_bars(lua_State *L) {
  popts p;
  check_opts(L, 2, K_BARS, &p);
  size_t n;
  double *v = numbers_at(L, 1, 1, "values", &n, NULL, NULL);
  char err[PLOT_ERRLEN];
  return push_figure(L, plot_fig_bars(v, n, &p.o, err), &p, err);
}

/* Sets from the value at arg: an array of arrays, a rank-2 tensor (rows) or one array.
 * At most max sets (0: any number, in Lua memory). Returns the sets (Lua memory). */
static plot_set *sets_at(lua_State *L, int arg, const char *what, size_t max, size_t *ns) {
  ns_tensor *t = nsl_totensor(L, arg);
  char name[48];
  plot_set *s;
  if (t && t->rank > 2)
    nsl_argerror(L, arg, "%s: a tensor must have rank 1 or 2, got rank %d", what, t->rank);
  if (t && t->rank == 2) {
    size_t rows = t->shape[0], cols = t->shape[1];
    if ((max && cols > max) || cols > NSL_PLOT_MAXSETS)
      nsl_argerror(L, arg,
                   "%s: at most %d columns (one set each), got %d; "
                   "t:reshape{#t} makes one set of all values",
                   what, (int)(max ? max : NSL_PLOT_MAXSETS), (int)cols);
    double *v = columns(L, t);
    s = lua_newuserdatauv(L, cols * sizeof *s, 0);
    for (size_t k = 0; k < cols; k++) s[k] = (plot_set){v + k * rows, rows, NULL};
    *ns = cols;
    return s;
  }
  if (!t && lua_type(L, arg) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be an array (of numbers or of arrays), got %s", what,
                 nsl_got(L, arg));
  if (!t && is_list(L, arg)) {
    size_t len = (size_t)lua_rawlen(L, arg);
    if (max && len > max)
      nsl_argerror(L, arg, "%s: at most %d sets, got %d", what, (int)max, (int)len);
    if (len > NSL_PLOT_MAXSETS)
      nsl_argerror(L, arg, "%s: at most %d, got %d", what, NSL_PLOT_MAXSETS, (int)len);
    s = lua_newuserdatauv(L, len * sizeof *s, 0);
    for (size_t k = 0; k < len; k++) {
      luaL_checkstack(L, 4, "too many sets");
      snprintf(name, sizeof name, "%s[%d]", what, (int)k + 1);
      lua_rawgeti(L, arg, (lua_Integer)k + 1);
      s[k].v = numbers_at(L, -1, arg, name, &s[k].n, NULL, NULL);
      s[k].label = NULL;
    }
    *ns = len;
    return s;
  }
  s = lua_newuserdatauv(L, sizeof *s, 0);
  s[0].v = numbers_at(L, arg, arg, what, &s[0].n, NULL, NULL);
  s[0].label = NULL;
  *ns = 1;
  return s;
}

/* ns.plot.box(groups [, opts]) */
static int p_box(lua_State *L) {
  popts p;
  check_opts(L, 2, K_BOX, &p);
  size_t ng;
  plot_set *g = sets_at(L, 1, "groups", 0, &ng);
  if (ng == 1 && g[0].n == 0 && lua_type(L, 1) == LUA_TTABLE) ng = 0; /* {} is no groups */
  char err[PLOT_ERRLEN];
  return push_figure(L, plot_fig_box(g, ng, &p.o, err), &p, err);
}

/* ns.plot.hist(values [, opts]) */
static int p_hist(lua_State *L) {
  popts p;
  check_opts(L, 2, K_HIST, &p);
  size_t ns;
  plot_set *s = sets_at(L, 1, "values", PLOT_MAXSERIES, &ns);
  char err[PLOT_ERRLEN];
  return push_figure(L, plot_fig_hist(s, ns, &p.o, err), &p, err);
}

void nsl_open_plot(lua_State *L) {
  static const luaL_Reg fns[] = {{"heatmap", p_heatmap},
                                 {"lines", p_lines},
                                 {"scatter", p_scatter},
                                 {"bars", p_bars},
                                 {"box", p_box},
                                 {"hist", p_hist},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  /* as package.loaded["normscope.plot"] too, so that errors name 'normscope.plot.bars' */
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "normscope.plot");
  lua_pop(L, 1);               /* drop package.loaded */
  lua_setfield(L, -2, "plot"); /* module.plot = the table */
}
