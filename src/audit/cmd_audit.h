/* cmd_audit.h: the `audit` command of the command line (src/audit/cmd_audit.c). */
#ifndef NS_CMD_AUDIT_H
#define NS_CMD_AUDIT_H

/* `normscope audit FILE [OPTION]...`: argv[first] is "audit". Returns the exit status. */
int cmd_audit(int argc, char **argv, int first);
/* Its --help text. */
extern const char cmd_audit_help[];

#endif
