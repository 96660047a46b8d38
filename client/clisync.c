/*-------------------------------------------------------------------------
 *
 * clisync.c
 *	  bloomfilter-cli sync: a file kept a current copy of a bloomfilter
 *	  index's filter, through libpq (the CLI's only server code): a
 *	  snapshot, then each round the index's changes applied, or a new
 *	  snapshot where the server says reload, and the file replaced
 *	  atomically.
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
#include "cli.h"

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

int
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
