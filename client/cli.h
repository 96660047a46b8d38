/*-------------------------------------------------------------------------
 *
 * cli.h
 *	  What bloomfilter-cli's two files share: the exit statuses, the forms
 *	  a filter is written in, failing with a message, writing a filter,
 *	  and the sync command (clisync.c).  Private to the CLI.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFC_CLI_H
#define BFC_CLI_H

#include <stdio.h>

#include "bloomfilter.h"

#define EXIT_DATA 1
#define EXIT_USAGE 2
#define EXIT_IO 3

typedef enum Form
{
	FORM_BINARY,
	FORM_TEXT,
	FORM_HEX,
	FORM_DEFAULT
} Form;

extern const char *progname;

/* Print the message (and what it is about, unless NULL) and exit. */
extern void fail_usage(const char *message) __attribute__((noreturn));
extern void fail(int status, const char *what, const char *message) __attribute__((noreturn));

/* Writes a filter in a form to out, named name in messages; fails on error. */
extern void write_filter_to(FILE *out, const char *name, const bfc_filter *filter, Form form);

/* bloomfilter-cli sync CONNINFO INDEX FILE (clisync.c). */
extern int	command_sync(char **args, int nargs, const char *interval_text,
						 const char *count_text, Form form);

#endif							/* BFC_CLI_H */
