/*-------------------------------------------------------------------------
 *
 * cli.c
 *	  bloomfilter-cli: the client library (bloomfilter.h) for shell scripts,
 *	  and `sync`, which keeps a file current with a bloomfilter index
 *	  through libpq.  See usage() for the commands; docs/client.md has
 *	  examples.
 *
 * Files hold a filter in any of its forms: binary (bloom::bytea), text
 * ("bloom:..." as bloom_out writes it and psql -At prints it) or hex ("\x..."
 * as psql prints f::bytea); each is recognised by its start.  Keys come
 * from the arguments or, if there are none, one per line from stdin; a key
 * is the whole line without its newline, blanks included.
 *
 * Exit status: 0 done; 1 invalid data (a filter, a key, filters that cannot
 * be combined; for sync, an error of the server's that retrying would not
 * mend); 2 usage; 3 a file could not be read or written.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "bloomfilter.h"

#define EXIT_DATA 1
#define EXIT_USAGE 2
#define EXIT_IO 3

static const char *progname = "bloomfilter-cli";

typedef enum Form
{
	FORM_BINARY,
	FORM_TEXT,
	FORM_HEX,
	FORM_DEFAULT
} Form;

static void
usage(FILE *out)
{
	fprintf(out,
			"Usage: %s COMMAND [OPTION]... [ARGUMENT]...\n"
			"Bloom filters of the bloomfilter PostgreSQL extension, outside the server.\n"
			"\n"
			"Commands:\n"
			"  info FILE                 bloom_info's fields, one \"name<TAB>value\" per line\n"
			"  contains FILE [KEY]...    one \"KEY<TAB>t\" (maybe present) or \"KEY<TAB>f\"\n"
			"                            (absent) per key\n"
			"  add FILE [KEY]...         FILE with the keys added, on stdout\n"
			"  build --kind KIND --capacity N [--fpr P] [--growth G]\n"
			"                            a new filter of the keys, on stdout (fpr 0.01\n"
			"                            by default); as bloom_empty(N, P, G) plus the\n"
			"                            keys: with a growth factor G from 2 to 16, a\n"
			"                            filter that grows as keys come (0, the default:\n"
			"                            of fixed size)\n"
			"  union FILE FILE...        the union of the filters, on stdout\n"
			"  convert FILE              FILE in another form, on stdout: text if it\n"
			"                            was binary, else binary\n"
			"  sync CONNINFO INDEX FILE [--interval SECONDS] [--count N]\n"
			"                            keep FILE a current copy of a bloomfilter\n"
			"                            index's filter: a snapshot, then every SECONDS\n"
			"                            (1 by default) the index's changes, or a new\n"
			"                            snapshot when the server says so.  FILE is\n"
			"                            replaced atomically after each sync, and\n"
			"                            \"synced LSN reload|delta BYTES\" printed; a\n"
			"                            lost or refused connection is reported on\n"
			"                            stderr and retried at the next round.  Stops\n"
			"                            after N syncs with --count.  CONNINFO is a\n"
			"                            libpq connection string or URI (\"\": PGHOST,\n"
			"                            PGPORT, ... from the environment)\n"
			"\n"
			"Options:\n"
			"  --format binary|text|hex  form of a filter written to stdout or by sync\n"
			"                            (default: binary for build and sync, the\n"
			"                            input's form for add and union)\n"
			"  --v1-utf8                 a version 1 filter was built in a UTF8 database\n"
			"                            (its non-ASCII text keys are refused otherwise)\n"
			"  --help, --version\n"
			"\n"
			"FILE is a filter in binary (bloom::bytea), text (bloom:...) or hex (\\x...,\n"
			"psql's output of f::bytea) form; - reads it from stdin.  Without KEY\n"
			"arguments, keys are read from stdin, one per line.  KIND is number, float,\n"
			"text, bytea, uuid, boolean, date, timestamp or timestamptz; keys are\n"
			"spelled as SQL input spells them (bytea as \\x and hex digits).\n"
			"\n"
			"Exit status: 0 done, 1 invalid filter, key or combination (sync: an\n"
			"error of the server's that retrying would not mend, such as a missing\n"
			"index or privilege), 2 usage, 3 a file could not be read or written.\n",
			progname);
}

static void
fail_usage(const char *message)
{
	fprintf(stderr, "%s: %s\nTry \"%s --help\".\n", progname, message, progname);
	exit(EXIT_USAGE);
}

static void
fail(int status, const char *what, const char *message)
{
	if (what != NULL)
		fprintf(stderr, "%s: %s: %s\n", progname, what, message);
	else
		fprintf(stderr, "%s: %s\n", progname, message);
	exit(status);
}

/* ---------------------------------------------------------------------
 * Files and forms
 * ---------------------------------------------------------------------
 */

static char *
read_all(FILE *in, const char *name, size_t *len)
{
	size_t		room = 1 << 16;
	size_t		used = 0;
	char	   *data = malloc(room);

	while (data != NULL)
	{
		size_t		got = fread(data + used, 1, room - used, in);

		used += got;
		if (got == 0)
			break;
		if (used == room)
		{
			char	   *bigger = realloc(data, room * 2);

			if (bigger == NULL)
			{
				free(data);
				data = NULL;
				break;
			}
			data = bigger;
			room *= 2;
		}
	}
	if (data == NULL)
		fail(EXIT_IO, name, "out of memory");
	if (ferror(in))
		fail(EXIT_IO, name, strerror(errno));
	*len = used;
	return data;
}

static Form
form_of(const char *data, size_t len)
{
	if (len >= 6 && memcmp(data, "bloom:", 6) == 0)
		return FORM_TEXT;
	if (len >= 2 && data[0] == '\\' && data[1] == 'x')
		return FORM_HEX;
	return FORM_BINARY;
}

/* Loads FILE (- for stdin); *form says which form it was in. */
static bfc_filter *
load_file(const char *name, Form *form, bool v1_utf8)
{
	FILE	   *in = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
	char	   *data;
	size_t		len;
	bfc_error	err;
	bfc_filter *filter;

	if (in == NULL)
		fail(EXIT_IO, name, strerror(errno));
	data = read_all(in, name, &len);
	if (in != stdin)
		fclose(in);
	if (form != NULL)
		*form = form_of(data, len);
	filter = bfc_load(data, len, &err);
	free(data);
	if (filter == NULL)
		fail(err.code == BFC_ERR_NOMEM ? EXIT_IO : EXIT_DATA, name, err.message);
	bfc_set_v1_utf8(filter, v1_utf8);
	return filter;
}

static void
write_or_fail(FILE *out, const char *name, const void *data, size_t len)
{
	if (len > 0 && fwrite(data, 1, len, out) != len)
		fail(EXIT_IO, name, strerror(errno));
}

/* Writes a filter in a form to out, named name in messages. */
static void
write_filter_to(FILE *out, const char *name, const bfc_filter *filter, Form form)
{
	size_t		len;
	const uint8_t *bytes = bfc_bytes(filter, &len);

	if (form == FORM_BINARY)
	{
		if (out == stdout && isatty(STDOUT_FILENO))
			fail(EXIT_USAGE, NULL,
				 "not writing a binary filter to a terminal; redirect it, or use --format text");
		write_or_fail(out, name, bytes, len);
	}
	else if (form == FORM_TEXT)
	{
		char	   *text = malloc(bfc_text_size(filter));
		size_t		n;

		if (text == NULL)
			fail(EXIT_IO, NULL, "out of memory");
		n = bfc_write_text(filter, text);
		text[n] = '\n';
		write_or_fail(out, name, text, n + 1);
		free(text);
	}
	else
	{
		static const char digits[] = "0123456789abcdef";
		char	   *hex = malloc(2 * len + 3);

		if (hex == NULL)
			fail(EXIT_IO, NULL, "out of memory");
		hex[0] = '\\';
		hex[1] = 'x';
		for (size_t i = 0; i < len; i++)
		{
			hex[2 + 2 * i] = digits[bytes[i] >> 4];
			hex[3 + 2 * i] = digits[bytes[i] & 15];
		}
		hex[2 * len + 2] = '\n';
		write_or_fail(out, name, hex, 2 * len + 3);
		free(hex);
	}
	if (fflush(out) != 0)
		fail(EXIT_IO, name, strerror(errno));
}

static void
write_filter(const bfc_filter *filter, Form form)
{
	write_filter_to(stdout, "stdout", filter, form);
}

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

typedef int (*KeyAction) (bfc_filter *filter, const char *key, size_t len, bfc_error *err);

/*
 * Calls action on each key: the arguments, or the lines of stdin.  Stops
 * at the first key that fails, saying which.
 */
static void
for_each_key(bfc_filter *filter, char **keys, int nkeys, KeyAction action)
{
	bfc_error	err;

	if (nkeys > 0)
	{
		for (int i = 0; i < nkeys; i++)
			if (action(filter, keys[i], strlen(keys[i]), &err) < 0)
				fail(EXIT_DATA, keys[i], err.message);
	}
	else
	{
		char	   *line = NULL;
		size_t		room = 0;
		ssize_t		len;
		unsigned long lineno = 0;

		while ((len = getline(&line, &room, stdin)) >= 0)
		{
			lineno++;
			if (len > 0 && line[len - 1] == '\n')
				len--;
			if (action(filter, line, (size_t) len, &err) < 0)
			{
				char		where[64];

				snprintf(where, sizeof(where), "stdin line %lu", lineno);
				fail(EXIT_DATA, where, err.message);
			}
		}
		if (ferror(stdin))
			fail(EXIT_IO, "stdin", strerror(errno));
		free(line);
	}
}

static int
print_answer(bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	int			answer = bfc_contains_str(filter, key, len, err);

	if (answer < 0)
		return -1;
	fwrite(key, 1, len, stdout);
	fputs(answer ? "\tt\n" : "\tf\n", stdout);
	return 0;
}

static int
add_key(bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	return bfc_add_str(filter, key, len, err);
}

/* ---------------------------------------------------------------------
 * Commands
 * ---------------------------------------------------------------------
 */

/* A double as float8out would print it: the shortest text that reads back. */
static void
print_double(const char *name, double value)
{
	char		text[40];

	if (value != value)
		strcpy(text, "NaN");
	else if (isinf(value))
		strcpy(text, value > 0 ? "Infinity" : "-Infinity");
	else
		for (int precision = 1; precision <= 17; precision++)
		{
			snprintf(text, sizeof(text), "%.*g", precision, value);
			if (strtod(text, NULL) == value)
				break;
		}
	printf("%s\t%s\n", name, text);
}

static int
command_info(char **args, int nargs, bool v1_utf8)
{
	bfc_filter *filter;
	bfc_info	info;

	if (nargs != 1)
		fail_usage("info takes one FILE");
	filter = load_file(args[0], NULL, v1_utf8);
	bfc_get_info(filter, &info);
	printf("format_version\t%d\n", info.format_version);
	printf("layout\t%s\n", info.layout);
	printf("bits\t%lld\n", (long long) info.bits);
	printf("bytes\t%lld\n", (long long) info.bytes);
	printf("hashes\t%d\n", info.hashes);
	printf("capacity\t%lld\n", (long long) info.capacity);
	print_double("target_fpr", info.target_fpr);
	printf("inserted\t%lld\n", (long long) info.inserted);
	printf("bits_set\t%lld\n", (long long) info.bits_set);
	print_double("fill_ratio", info.fill_ratio);
	print_double("estimated_distinct", info.estimated_distinct);
	print_double("estimated_fpr", info.estimated_fpr);
	printf("key_kind\t%s\n", info.key_kind);
	printf("seed\t%lld\n", (long long) info.seed);
	printf("key_environment\t%s\n", info.key_environment);
	printf("over_capacity\t%s\n", info.over_capacity ? "t" : "f");
	printf("segments\t%d\n", bfc_segments(filter));
	if (bfc_growth(filter) != 0)
		printf("growth\t%d\n", bfc_growth(filter));
	else
		printf("growth\t\n");	/* NULL in bloom_info, like key_environment */
	bfc_free(filter);
	return 0;
}

static int
command_contains(char **args, int nargs, bool v1_utf8)
{
	bfc_filter *filter;

	if (nargs < 1)
		fail_usage("contains takes a FILE and keys");
	if (nargs == 1 && strcmp(args[0], "-") == 0)
		fail_usage("with the filter on stdin, the keys must be arguments");
	filter = load_file(args[0], NULL, v1_utf8);
	for_each_key(filter, args + 1, nargs - 1, print_answer);
	if (fflush(stdout) != 0)
		fail(EXIT_IO, "stdout", strerror(errno));
	bfc_free(filter);
	return 0;
}

static int
command_add(char **args, int nargs, Form form, bool v1_utf8)
{
	bfc_filter *filter;
	Form		input_form;

	if (nargs < 1)
		fail_usage("add takes a FILE and keys");
	if (nargs == 1 && strcmp(args[0], "-") == 0)
		fail_usage("with the filter on stdin, the keys must be arguments");
	filter = load_file(args[0], &input_form, v1_utf8);
	for_each_key(filter, args + 1, nargs - 1, add_key);
	write_filter(filter, form == FORM_DEFAULT ? input_form : form);
	bfc_free(filter);
	return 0;
}

static int
command_build(char **args, int nargs, const char *kind_name, const char *capacity_text,
			  const char *fpr_text, const char *growth_text, Form form)
{
	int			kind;
	char	   *end;
	unsigned long long capacity;
	double		fpr = 0.01;
	long		growth = 0;
	bfc_error	err;
	bfc_filter *filter;

	if (kind_name == NULL || capacity_text == NULL)
		fail_usage("build needs --kind and --capacity");
	kind = bfc_kind_from_name(kind_name);
	if (kind <= BFC_KIND_NONE || kind >= BFC_KIND_OTHER)
		fail_usage("--kind must be number, float, text, bytea, uuid, boolean, date, timestamp or timestamptz");
	errno = 0;
	capacity = strtoull(capacity_text, &end, 10);
	if (errno != 0 || *end != '\0' || end == capacity_text || capacity_text[0] == '-')
		fail_usage("--capacity must be a positive integer");
	if (fpr_text != NULL)
	{
		fpr = strtod(fpr_text, &end);
		if (*end != '\0' || end == fpr_text)
			fail_usage("--fpr must be a number in (0, 0.5]");
	}
	if (growth_text != NULL)
	{
		errno = 0;
		growth = strtol(growth_text, &end, 10);
		if (errno != 0 || *end != '\0' || end == growth_text || growth < 0 || growth > 255)
			fail_usage("--growth must be an integer: 0 (a filter of fixed size) or 2 to 16");
	}
	filter = bfc_create_growing((bfc_kind) kind, capacity, fpr, (int) growth, &err);
	if (filter == NULL)
		fail(err.code == BFC_ERR_NOMEM ? EXIT_IO : EXIT_DATA, NULL, err.message);
	for_each_key(filter, args, nargs, add_key);
	write_filter(filter, form == FORM_DEFAULT ? FORM_BINARY : form);
	bfc_free(filter);
	return 0;
}

static int
command_union(char **args, int nargs, Form form, bool v1_utf8)
{
	bfc_filter *result;
	Form		input_form;
	bfc_error	err;

	if (nargs < 2)
		fail_usage("union takes two or more FILEs");
	result = load_file(args[0], &input_form, v1_utf8);
	for (int i = 1; i < nargs; i++)
	{
		bfc_filter *next = load_file(args[i], NULL, v1_utf8);

		if (bfc_union(result, next, &err) != 0)
			fail(EXIT_DATA, args[i], err.message);
		bfc_free(next);
	}
	write_filter(result, form == FORM_DEFAULT ? input_form : form);
	bfc_free(result);
	return 0;
}

static int
command_convert(char **args, int nargs, Form form)
{
	bfc_filter *filter;
	Form		input_form;

	if (nargs != 1)
		fail_usage("convert takes one FILE");
	filter = load_file(args[0], &input_form, false);
	if (form == FORM_DEFAULT)
		form = input_form == FORM_BINARY ? FORM_TEXT : FORM_BINARY;
	write_filter(filter, form);
	bfc_free(filter);
	return 0;
}

/* ---------------------------------------------------------------------
 * sync: a file that follows a bloomfilter index, through libpq
 * ---------------------------------------------------------------------
 */

/*
 * A follower of an index: its connection, its copy, and the copy's
 * position, timeline and build, kept as the server's text: the server says
 * reload for a copy of another timeline (a failover since) or of another
 * build of the index (REINDEX CONCURRENTLY builds the new index while
 * copies of the old one are still made).  has_build is false for an index
 * without a change log.
 */
typedef struct Follower
{
	const char *conninfo;
	const char *index;
	const char *file;
	Form		form;
	PGconn	   *conn;
	bfc_filter *copy;
	char		lsn[32];
	char		timeline[24];
	char		build[32];
	bool		has_build;
} Follower;

/*
 * A temporary file not yet renamed over FILE, removed if we exit early: by
 * fail(), or by a signal that stops a follower (kill, ^C).
 */
static char *volatile pending_temp;

static void
remove_pending_temp(void)
{
	if (pending_temp != NULL)
		unlink(pending_temp);
}

static void
stop_on_signal(int signo)
{
	remove_pending_temp();		/* unlink is async-signal-safe */
	signal(signo, SIG_DFL);
	raise(signo);
}

static void
warn_sync(const char *what, const char *message)
{
	size_t		len = strlen(message);

	/* libpq's messages end with a newline */
	while (len > 0 && message[len - 1] == '\n')
		len--;
	fprintf(stderr, "%s: sync: %s: %.*s\n", progname, what, (int) len, message);
	fflush(stderr);
}

/*
 * Whether a failed query is worth trying again at the next round: the
 * connection is gone, or the error's class says the server cannot answer
 * now: 08 connection exception, 40 transaction rollback (a standby's
 * recovery conflict), 53 insufficient resources, 57 operator intervention
 * (a shutdown, a server starting up or in recovery), 58 system error.
 * Anything else (no such index, no privilege, not a bloomfilter index)
 * would fail the same way again.
 */
static bool
worth_retrying(PGconn *conn, const PGresult *result)
{
	static const char *const transient[] = {"08", "40", "53", "57", "58"};
	const char *state = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;

	if (PQstatus(conn) != CONNECTION_OK || state == NULL)
		return true;
	for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
		if (strncmp(state, transient[i], 2) == 0)
			return true;
	return false;
}

static bool
connect_follower(Follower *f)
{
	const char *const keywords[] = {"dbname", "fallback_application_name", NULL};
	const char *const values[] = {f->conninfo, "bloomfilter-cli sync", NULL};

	if (f->conn != NULL && PQstatus(f->conn) == CONNECTION_OK)
		return true;
	if (f->conn != NULL)
		PQfinish(f->conn);
	f->conn = PQconnectdbParams(keywords, values, 1);
	if (PQstatus(f->conn) == CONNECTION_OK)
		return true;
	warn_sync("cannot connect", PQerrorMessage(f->conn));
	PQfinish(f->conn);
	f->conn = NULL;
	return false;
}

/*
 * Runs a query of one row of ncolumns, results in binary (the bytea as
 * its bytes).  On failure says why and returns NULL; an error retrying
 * would not mend ends the program.
 */
static PGresult *
query_row(Follower *f, const char *sql, int nparams, const char *const *params, int ncolumns,
		  const char *what)
{
	PGresult   *result = PQexecParams(f->conn, sql, nparams, NULL, params, NULL, NULL, 1);

	if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1 &&
		PQnfields(result) == ncolumns)
		return result;
	if (PQresultStatus(result) == PGRES_TUPLES_OK)
		fail(EXIT_DATA, what, "the server returned an unexpected result");
	warn_sync(what, result != NULL && PQresultErrorMessage(result)[0] != '\0'
			  ? PQresultErrorMessage(result) : PQerrorMessage(f->conn));
	if (!worth_retrying(f->conn, result))
	{
		PQclear(result);
		fprintf(stderr, "%s: sync: not retrying: the error would recur\n", progname);
		exit(EXIT_DATA);
	}
	PQclear(result);
	if (PQstatus(f->conn) != CONNECTION_OK)
	{
		PQfinish(f->conn);
		f->conn = NULL;
	}
	return NULL;
}

/* Copies a pg_lsn returned as text into out, after checking it is one. */
static void
take_lsn(char *out, size_t room, const PGresult *result, int column, const char *what)
{
	const char *lsn = PQgetvalue(result, 0, column);
	int			len = PQgetlength(result, 0, column);

	if (PQgetisnull(result, 0, column) || len < 3 || len >= (int) room ||
		strspn(lsn, "0123456789ABCDEFabcdef/") != (size_t) len || strchr(lsn, '/') == NULL)
		fail(EXIT_DATA, what, "the server returned no position (pg_lsn)");
	memcpy(out, lsn, len);
	out[len] = '\0';
}

/*
 * Copies a returned position and its timeline, the text of two columns,
 * into the follower, after checking they look like a pg_lsn and a bigint:
 * both go back into the next query.
 */
static void
take_position(Follower *f, const PGresult *result, int lsn_column, int timeline_column,
			  const char *what)
{
	const char *timeline = PQgetvalue(result, 0, timeline_column);
	int			timeline_len = PQgetlength(result, 0, timeline_column);

	if (PQgetisnull(result, 0, timeline_column) || timeline_len < 1 ||
		timeline_len >= (int) sizeof(f->timeline) ||
		strspn(timeline, "0123456789") != (size_t) timeline_len)
		fail(EXIT_DATA, what, "the server returned no timeline");
	take_lsn(f->lsn, sizeof(f->lsn), result, lsn_column, what);
	memcpy(f->timeline, timeline, timeline_len);
	f->timeline[timeline_len] = '\0';
}

/* A new snapshot into f->copy; *bytes its size. */
static bool
load_snapshot(Follower *f, size_t *bytes)
{
	const char *params[] = {f->index};
	PGresult   *result;
	bfc_error	err;
	bfc_filter *copy;

	result = query_row(f, "SELECT lsn::text, filter::bytea, timeline::text, build::text "
					   "FROM bloom_index_snapshot($1::regclass)",
					   1, params, 4, "bloom_index_snapshot");
	if (result == NULL)
		return false;
	if (PQgetisnull(result, 0, 1))
		fail(EXIT_DATA, "bloom_index_snapshot", "the server returned no filter");
	copy = bfc_from_bytes(PQgetvalue(result, 0, 1), (size_t) PQgetlength(result, 0, 1), &err);
	if (copy == NULL)
		fail(err.code == BFC_ERR_NOMEM ? EXIT_IO : EXIT_DATA, "bloom_index_snapshot", err.message);
	take_position(f, result, 0, 2, "bloom_index_snapshot");
	f->has_build = !PQgetisnull(result, 0, 3);
	if (f->has_build)
		take_lsn(f->build, sizeof(f->build), result, 3, "bloom_index_snapshot");
	*bytes = (size_t) PQgetlength(result, 0, 1);
	PQclear(result);
	bfc_free(f->copy);
	f->copy = copy;
	return true;
}

/*
 * One round: the changes since the copy's position applied, or a snapshot
 * when there is no copy, the server says to reload, or the delta does not
 * fit the copy.  False, the copy as it was, when the server could not be
 * asked.
 */
static bool
sync_round(Follower *f, bool *reloaded, size_t *bytes)
{
	const char *params[] = {f->index, f->lsn, f->timeline, f->has_build ? f->build : NULL};
	PGresult   *result;
	bfc_error	err;

	if (!connect_follower(f))
		return false;
	*reloaded = true;
	if (f->copy != NULL)
	{
		result = query_row(f, "SELECT upto::text, reload, delta, timeline::text "
						   "FROM bloom_index_changes($1::regclass, $2::pg_lsn, $3::bigint, "
						   "$4::pg_lsn)",
						   4, params, 4, "bloom_index_changes");
		if (result == NULL)
			return false;
		if (PQgetisnull(result, 0, 1) || PQgetlength(result, 0, 1) != 1)
			fail(EXIT_DATA, "bloom_index_changes", "the server returned no reload flag");
		if (PQgetvalue(result, 0, 1)[0] == 0)
		{
			if (PQgetisnull(result, 0, 2))
				fail(EXIT_DATA, "bloom_index_changes", "the server returned no delta");
			*bytes = (size_t) PQgetlength(result, 0, 2);
			if (bfc_apply_changes(f->copy, PQgetvalue(result, 0, 2), *bytes, &err) == 0)
			{
				take_position(f, result, 0, 3, "bloom_index_changes");
				PQclear(result);
				*reloaded = false;
				return true;
			}
			if (err.code == BFC_ERR_NOMEM)
				fail(EXIT_IO, "bloom_index_changes", err.message);
			warn_sync("delta refused, loading a snapshot instead", err.message);
		}
		PQclear(result);
	}
	return load_snapshot(f, bytes);
}

/*
 * Replaces path by the filter, atomically: a new file in the same
 * directory, flushed to disk, renamed over it, and the directory flushed,
 * so that a reader (or a crash) sees the old file or the new, never a part.
 * The file's times are as_of, when the copy's data was current: readers
 * bound its staleness by its modification time, and a round that took
 * long (a slow link, a large snapshot) must not make it look younger.
 */
static void
replace_file(const char *path, const bfc_filter *filter, Form form, mode_t mode,
			 const struct timespec *as_of)
{
	struct timespec times[2];
	size_t		len = strlen(path);
	char	   *temp = malloc(len + sizeof(".XXXXXX"));
	char	   *dir_path = strdup(path);
	int			fd;
	int			dir;
	FILE	   *out;

	if (temp == NULL || dir_path == NULL)
		fail(EXIT_IO, NULL, "out of memory");
	memcpy(temp, path, len);
	memcpy(temp + len, ".XXXXXX", sizeof(".XXXXXX"));
	fd = mkstemp(temp);
	if (fd < 0)
		fail(EXIT_IO, path, strerror(errno));
	pending_temp = temp;
	if (fchmod(fd, mode) != 0 || (out = fdopen(fd, "wb")) == NULL)
		fail(EXIT_IO, temp, strerror(errno));
	write_filter_to(out, temp, filter, form);
	times[0] = times[1] = *as_of;
	if (fflush(out) != 0 || futimens(fileno(out), times) != 0 ||
		fsync(fileno(out)) != 0 || fclose(out) != 0)
		fail(EXIT_IO, temp, strerror(errno));
	if (rename(temp, path) != 0)
		fail(EXIT_IO, path, strerror(errno));
	pending_temp = NULL;
	free(temp);
	dir = open(dirname(dir_path), O_RDONLY | O_DIRECTORY);
	if (dir >= 0)
	{
		(void) fsync(dir);		/* the rename is done; this only makes it durable */
		close(dir);
	}
	free(dir_path);
}

static void
add_seconds(struct timespec *at, double seconds)
{
	double		whole = floor(seconds);

	at->tv_sec += (time_t) whole;
	at->tv_nsec += (long) ((seconds - whole) * 1e9);
	if (at->tv_nsec >= 1000000000L)
	{
		at->tv_sec++;
		at->tv_nsec -= 1000000000L;
	}
}

static int
command_sync(char **args, int nargs, const char *interval_text, const char *count_text,
			 Form form)
{
	Follower	f;
	double		interval = 1.0;
	long		count = 0;
	long		done = 0;
	char	   *end;
	char	   *message = NULL;
	PQconninfoOption *options;
	mode_t		mask;
	struct timespec next;

	if (nargs != 3)
		fail_usage("sync takes CONNINFO, INDEX and FILE");
	if (strcmp(args[2], "-") == 0)
		fail_usage("sync replaces a file: FILE cannot be -");
	if (interval_text != NULL)
	{
		interval = strtod(interval_text, &end);
		if (*end != '\0' || end == interval_text || !(interval > 0 && interval <= 86400 * 365))
			fail_usage("--interval must be a positive number of seconds");
	}
	if (count_text != NULL)
	{
		errno = 0;
		count = strtol(count_text, &end, 10);
		if (errno != 0 || *end != '\0' || end == count_text || count < 1)
			fail_usage("--count must be a positive integer");
	}
	/* a connection string that cannot parse will never connect */
	options = PQconninfoParse(args[0], &message);
	if (options == NULL)
	{
		char		text[400];

		size_t		len;

		snprintf(text, sizeof(text), "CONNINFO: %s", message ? message : "out of memory");
		len = strlen(text);
		while (len > 0 && text[len - 1] == '\n')
			text[--len] = '\0';
		PQfreemem(message);
		fail_usage(text);
	}
	PQconninfoFree(options);

	memset(&f, 0, sizeof(f));
	f.conninfo = args[0];
	f.index = args[1];
	f.file = args[2];
	f.form = form == FORM_DEFAULT ? FORM_BINARY : form;
	mask = umask(0);
	umask(mask);
	atexit(remove_pending_temp);
	signal(SIGTERM, stop_on_signal);
	signal(SIGINT, stop_on_signal);
	signal(SIGHUP, stop_on_signal);

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;)
	{
		bool		reloaded;
		size_t		bytes;
		struct timespec started;

		/* before the server takes the position: the file never looks younger than its data */
		clock_gettime(CLOCK_REALTIME, &started);
		if (sync_round(&f, &reloaded, &bytes))
		{
			replace_file(f.file, f.copy, f.form, 0666 & ~mask, &started);
			printf("synced %s %s %zu\n", f.lsn, reloaded ? "reload" : "delta", bytes);
			if (fflush(stdout) != 0)
				fail(EXIT_IO, "stdout", strerror(errno));
			if (count > 0 && ++done >= count)
				break;
		}
		/* rounds start every interval, however long one took */
		add_seconds(&next, interval);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	PQfinish(f.conn);
	bfc_free(f.copy);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *command;
	char	  **args;
	int			nargs = 0;
	const char *kind = NULL;
	const char *capacity = NULL;
	const char *fpr = NULL;
	const char *growth = NULL;
	const char *interval = NULL;
	const char *count = NULL;
	Form		form = FORM_DEFAULT;
	bool		v1_utf8 = false;
	bool		options_done = false;
	static char stdout_buffer[1 << 16];

	setvbuf(stdout, stdout_buffer, _IOFBF, sizeof(stdout_buffer));
	if (argc < 2)
		fail_usage("no command");
	command = argv[1];
	if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0)
	{
		usage(stdout);
		fflush(stdout);
		return 0;
	}
	if (strcmp(command, "--version") == 0)
	{
		printf("bloomfilter-cli %s\n", BFC_VERSION);
		fflush(stdout);
		return 0;
	}

	args = calloc(argc, sizeof(char *));
	if (args == NULL)
		fail(EXIT_IO, NULL, "out of memory");
	for (int i = 2; i < argc; i++)
	{
		const char *arg = argv[i];

		/* keys may start with "-": after "--" nothing is an option */
		if (options_done || arg[0] != '-' || arg[1] != '-')
		{
			args[nargs++] = argv[i];
			continue;
		}
		if (strcmp(arg, "--") == 0)
			options_done = true;
		else if (strcmp(arg, "--help") == 0)
		{
			usage(stdout);
			fflush(stdout);
			return 0;
		}
		else if (strcmp(arg, "--v1-utf8") == 0)
			v1_utf8 = true;
		else if (strcmp(arg, "--kind") == 0 || strcmp(arg, "--capacity") == 0 ||
				 strcmp(arg, "--fpr") == 0 || strcmp(arg, "--growth") == 0 ||
				 strcmp(arg, "--format") == 0 || strcmp(arg, "--interval") == 0 ||
				 strcmp(arg, "--count") == 0)
		{
			const char *value;

			if (i + 1 >= argc)
				fail_usage("an option lacks its value");
			value = argv[++i];
			if (strcmp(arg, "--kind") == 0)
				kind = value;
			else if (strcmp(arg, "--capacity") == 0)
				capacity = value;
			else if (strcmp(arg, "--fpr") == 0)
				fpr = value;
			else if (strcmp(arg, "--growth") == 0)
				growth = value;
			else if (strcmp(arg, "--interval") == 0)
				interval = value;
			else if (strcmp(arg, "--count") == 0)
				count = value;
			else if (strcmp(value, "binary") == 0)
				form = FORM_BINARY;
			else if (strcmp(value, "text") == 0)
				form = FORM_TEXT;
			else if (strcmp(value, "hex") == 0)
				form = FORM_HEX;
			else
				fail_usage("--format must be binary, text or hex");
		}
		else
		{
			char		message[200];

			snprintf(message, sizeof(message), "unknown option %.100s", arg);
			fail_usage(message);
		}
	}

	if (strcmp(command, "build") != 0 &&
		(kind != NULL || capacity != NULL || fpr != NULL || growth != NULL))
		fail_usage("--kind, --capacity, --fpr and --growth are options of build");
	if (strcmp(command, "sync") != 0 && (interval != NULL || count != NULL))
		fail_usage("--interval and --count are options of sync");
	if (strcmp(command, "info") == 0)
		return command_info(args, nargs, v1_utf8);
	if (strcmp(command, "contains") == 0)
		return command_contains(args, nargs, v1_utf8);
	if (strcmp(command, "add") == 0)
		return command_add(args, nargs, form, v1_utf8);
	if (strcmp(command, "build") == 0)
		return command_build(args, nargs, kind, capacity, fpr, growth, form);
	if (strcmp(command, "union") == 0)
		return command_union(args, nargs, form, v1_utf8);
	if (strcmp(command, "convert") == 0)
		return command_convert(args, nargs, form);
	if (strcmp(command, "sync") == 0)
		return command_sync(args, nargs, interval, count, form);
	fail_usage("unknown command");
	return EXIT_USAGE;
}
