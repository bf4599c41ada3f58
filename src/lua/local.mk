## src/lua: the Lua binding of the core (module "normscope").
## libnslua.la is linked into the normscope binary (global `ns`); normscope.la is the
## same binding as a C module that stock lua5.4 can `require` (installed in luacmoddir).
## The module does not link liblua: the interpreter that loads it provides the API.
noinst_LTLIBRARIES += libnslua.la
libnslua_la_SOURCES = \
	src/lua/nsl.h src/lua/nsl_priv.h \
	src/lua/module.c \
	src/lua/nsl_args.c \
	src/lua/nsl_tensor.c \
	src/lua/nsl_normalize.c \
	src/lua/nsl_field.c src/lua/nsl_field.h \
	src/lua/nsl_stats.c \
	src/lua/nsl_rng.c \
	src/lua/nsl_io.c \
	src/lua/nsl_plot.c \
	src/lua/nsl_blas.c \
	src/lua/nsl_budget.c src/lua/nsl_budget.h src/lua/nsl_bounded.c \
	src/lua/explore_lua.c src/lua/explore_lua.h
libnslua_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(BLAS_CFLAGS) $(LAPACKE_CFLAGS)
# ns.plot draws with src/plot (no curses)
libnslua_la_LIBADD = libnsplot.la

luacmod_LTLIBRARIES += normscope.la
normscope_la_SOURCES =
normscope_la_LDFLAGS = -module -avoid-version -shared
normscope_la_LIBADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

# Lua looks only for normscope.so; libtool's normscope.la beside it is noise there.
# (Without the .la, libtool's uninstall cannot find the .so: remove it by name.)
install-data-hook: remove-luacmod-la
remove-luacmod-la:
	rm -f $(DESTDIR)$(luacmoddir)/normscope.la
uninstall-hook:
	rm -f $(DESTDIR)$(luacmoddir)/normscope.so
.PHONY: remove-luacmod-la
