## src/audit: `normscope audit`. audit.c runs the checks on a tensor or a file (the
## verdicts, the report formats) on what scan.c's streaming pass leaves; plan.c reads and
## drafts the plan of a whole capture; cmd_audit.c is the command's body (options, the plan's
## run and summary, exit statuses). The Lua binding (ns.audit) and the screen's
## audit view call audit.c; nothing below the binding calls into it.
noinst_LTLIBRARIES += libnsaudit.la
libnsaudit_la_SOURCES = src/audit/audit.c src/audit/audit.h src/audit/scan.c src/audit/scan.h \
	src/audit/plan.c src/audit/plan.h
libnsaudit_la_CFLAGS = $(AM_CFLAGS)
