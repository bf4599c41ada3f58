## src/audit: `normscope audit`. audit.c runs the checks on a tensor or a file (streamed
## moments, the verdicts, the report formats); cmd_audit.c is the command's body (options,
## the plan of a whole capture, exit statuses). The Lua binding (ns.audit) and the screen's
## audit view call audit.c; nothing below the binding calls into it.
noinst_LTLIBRARIES += libnsaudit.la
libnsaudit_la_SOURCES = src/audit/audit.c src/audit/audit.h src/audit/scan.c src/audit/scan.h
libnsaudit_la_CFLAGS = $(AM_CFLAGS)
