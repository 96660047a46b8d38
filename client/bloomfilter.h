/*-------------------------------------------------------------------------
 *
 * bloomfilter.h
 *	  The client library of the bloomfilter PostgreSQL extension: load a
 *	  `bloom` value fetched from the database (its bytea or its text form),
 *	  answer membership locally with exactly the server's answers, false
 *	  positives included, keep a copy of an index's filter current from
 *	  its deltas, and build, add to and union filters that the server
 *	  accepts.
 *
 *	    bfc_error err;
 *	    bfc_filter *f = bfc_load(bytes, len, &err);    // SELECT f::bytea ...
 *	    if (f == NULL) { fprintf(stderr, "%s\n", err.message); ... }
 *	    if (bfc_contains_int64(f, user_id, &err) == 0)  // definitely absent
 *	        ...
 *	    bfc_free(f);
 *
 * The library is built from the extension's own core sources (sizing,
 * layout, validation, canonical hashing), so its filters and answers are
 * the server's by construction.
 *
 * Keys: each filter holds keys of one kind (bloom_info's key_kind).  The
 * typed functions take a kind's native value; bfc_contains_str and
 * bfc_add_str take the key as text and parse it as the server's input
 * function for that kind would (see README, "Using filters in your
 * application", for the spellings accepted).  A key of another kind than
 * the filter's, or a filter of kind "other" (hashed by a PostgreSQL type's
 * own hash function), is an error, never a silent "absent".
 *
 * Filters of either layout load, probe, add, union and serialise alike: of
 * fixed size (bloom_empty(capacity, fpr)) or growing, a chain of segments
 * (bloom_empty(capacity, fpr, growth), bfc_create_growing), which adds a
 * segment when its last one has taken its capacity.  Adding to a chain may
 * move its bytes: a pointer from bfc_bytes is then stale.
 *
 * Thread safety: a filter may be probed from many threads at once; adding
 * to it, a union into it or applying a delta to it must not run
 * concurrently with anything else on the same filter.  Different filters
 * are used from different threads at once with no lock in the library:
 * each thread that sizes (creating a filter, loading, growing or updating a
 * chain) keeps its own memo of the rates it sized, up to 640 kB of address
 * space of which only the rates sized are touched (18 kB each), freed when
 * the thread exits.
 *
 * Errors: functions that can fail take a bfc_error * (may be NULL) and
 * report failure by returning NULL or -1; the error holds a code and a
 * message.  Probes return 1 (maybe present), 0 (absent) or -1 (error).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFC_BLOOMFILTER_H
#define BFC_BLOOMFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C"
{
#endif

#define BFC_VERSION "1.1.0"

typedef struct bfc_filter bfc_filter;

/* Key kinds, numbered as in the stored format. */
typedef enum bfc_kind
{
	BFC_KIND_NONE = 0,			/* no key added yet */
	BFC_KIND_NUMBER = 1,		/* int2, int4, int8, numeric */
	BFC_KIND_FLOAT = 2,			/* float4, float8 */
	BFC_KIND_TEXT = 3,			/* text, varchar, bpchar, name */
	BFC_KIND_BYTEA = 4,
	BFC_KIND_UUID = 5,
	BFC_KIND_BOOL = 6,
	BFC_KIND_DATE = 7,
	BFC_KIND_TIMESTAMP = 8,
	BFC_KIND_TIMESTAMPTZ = 9,
	BFC_KIND_OTHER = 10			/* a type's own hash: not hashable here */
} bfc_kind;

typedef enum bfc_code
{
	BFC_OK = 0,
	BFC_ERR_INVALID,			/* not a valid bloom value or delta; the server
								 * refuses it too */
	BFC_ERR_KIND,				/* key of another kind than the filter's */
	BFC_ERR_UNSUPPORTED,		/* kind or version the client cannot hash this key for */
	BFC_ERR_KEY,				/* key text that is not a value of the kind */
	BFC_ERR_PARAM,				/* bad capacity, fpr or kind */
	BFC_ERR_TOO_LARGE,			/* filter would exceed the value size limit */
	BFC_ERR_INCOMPATIBLE,		/* union of filters of different parameters */
	BFC_ERR_NOMEM,
	BFC_ERR_MISMATCH			/* a sound delta of another filter than this
								 * copy: load a new snapshot */
} bfc_code;

typedef struct bfc_error
{
	bfc_code	code;
	char		message[320];
} bfc_error;

/* What bloom_info(filter) returns, field for field. */
typedef struct bfc_info
{
	int			format_version;
	const char *layout;			/* "blocked512", or "chained" (growing) */
	int64_t		bits;			/* bits, capacity: summed over a chain's segments */
	int64_t		bytes;
	int			hashes;			/* a chain: its last segment's */
	int64_t		capacity;
	double		target_fpr;
	int64_t		inserted;
	int64_t		bits_set;
	double		fill_ratio;
	double		estimated_distinct;
	double		estimated_fpr;
	const char *key_kind;		/* "none", "number", ... */
	int64_t		seed;
	char		key_environment[96];	/* "" where bloom_info shows NULL */
	bool		over_capacity;
} bfc_info;

/* ---- loading, validation, serialisation ---- */

/* The binary form: bloom::bytea, binary COPY, bloom_send. */
extern bfc_filter *bfc_from_bytes(const void *bytes, size_t len, bfc_error *err);

/*
 * As bfc_from_bytes, for bytes from malloc that the filter takes instead
 * of a copy (bfc_free frees them): loading a large value then needs its
 * size in memory once, not twice.  On failure they stay the caller's.
 */
extern bfc_filter *bfc_adopt_bytes(void *bytes, size_t len, bfc_error *err);

/* The text form: "bloom:" and base64, as bloom_out writes it. */
extern bfc_filter *bfc_from_text(const char *text, size_t len, bfc_error *err);

/*
 * Any of the forms, told apart by their start: "BF" (binary), "bloom:"
 * (text), or "\x" and hex digits (psql's output of f::bytea).  A trailing
 * newline after a text or hex form is ignored.
 */
extern bfc_filter *bfc_load(const void *data, size_t len, bfc_error *err);

/*
 * Whether bytes (or text) are a valid bloom value, as the server's bytea
 * cast (or text input) would judge them; the error says what is wrong.
 */
extern bool bfc_validate_bytes(const void *bytes, size_t len, bfc_error *err);
extern bool bfc_validate_text(const char *text, size_t len, bfc_error *err);

/*
 * A new, empty filter sized for capacity keys at false-positive rate fpr,
 * exactly as bloom_empty(capacity, fpr) sizes it.  kind is the kind of
 * keys it will take (BFC_KIND_NONE: whatever comes first); until a key is
 * added, its bytes equal bloom_empty's.
 */
extern bfc_filter *bfc_create(bfc_kind kind, uint64_t capacity, double fpr,
							  bfc_error *err);

/*
 * As bfc_create, for bloom_empty(capacity, fpr, growth): with a growth
 * factor from 2 to 16, a chain whose first segment holds capacity keys and
 * each further one growth times more, at rates that keep the whole below
 * fpr; growth 0 is bfc_create's filter of fixed size.
 */
extern bfc_filter *bfc_create_growing(bfc_kind kind, uint64_t capacity, double fpr,
									  int growth, bfc_error *err);
extern bfc_filter *bfc_copy(const bfc_filter *filter, bfc_error *err);
extern void bfc_free(bfc_filter *filter);

/* The binary form; valid until the filter changes or is freed. */
extern const uint8_t *bfc_bytes(const bfc_filter *filter, size_t *len);

/* The text form: bfc_text_size bytes (with the NUL) written by bfc_write_text. */
extern size_t bfc_text_size(const bfc_filter *filter);
extern size_t bfc_write_text(const bfc_filter *filter, char *out);

/* ---- inspection ---- */

extern void bfc_get_info(const bfc_filter *filter, bfc_info *info);

/*
 * bloom_info's segments and growth columns: a chain's number of segments
 * and growth factor; 1 and 0 for a filter of fixed size.  Functions rather
 * than bfc_info fields, so that bfc_info keeps its size and programs built
 * against an earlier header keep working with this library.
 */
extern int	bfc_segments(const bfc_filter *filter);
extern int	bfc_growth(const bfc_filter *filter);

/* The filter's kind: that of its keys, or the kind it was created for. */
extern bfc_kind bfc_filter_kind(const bfc_filter *filter);
extern const char *bfc_kind_name(bfc_kind kind);

/* The kind named as bloom_info names it ("number", "text", ...), or -1. */
extern int	bfc_kind_from_name(const char *name);

/*
 * Version 1 filters (from before the extension's 1.0 release) hashed
 * strings in the server encoding.  The client refuses non-ASCII text keys
 * for them unless told the server encoding was UTF8.
 */
extern void bfc_set_v1_utf8(bfc_filter *filter, bool server_was_utf8);

/* ---- combining ---- */

/*
 * Union of src into dst, as dst | src: both need the same format version,
 * layout, capacity, fpr, growth factor, size, k and seed, and compatible
 * kinds.  Chains may differ in length: they are combined segment by
 * segment, and dst takes a longer src's further segments as they are.
 */
extern int	bfc_union(bfc_filter *dst, const bfc_filter *src, bfc_error *err);

/* ---- following an index: deltas ---- */

/*
 * Applies a delta of a bloomfilter index to a copy of its filter (the
 * `delta` of bloom_index_changes(index, since), to the copy loaded from
 * bloom_index_snapshot's `filter` and kept current since, consistent with
 * `since`): the copy then holds every key the delta carries, as the index
 * does at the delta's `upto`, byte for byte.  A growing filter takes the
 * segments the index added (its bytes may move: a pointer from bfc_bytes
 * is then stale).  A delta is applied whole or not at all: refused, the
 * filter is unchanged, with BFC_ERR_INVALID (damaged bytes),
 * BFC_ERR_MISMATCH (a delta of another filter: another build of the index
 * after a REINDEX, or a copy of another index; load a new snapshot),
 * BFC_ERR_TOO_LARGE or BFC_ERR_NOMEM.  Returns 0 or -1.  Not concurrently
 * with anything else on the same filter (see "Thread safety").
 */
extern int	bfc_apply_changes(bfc_filter *filter, const void *delta, size_t len,
							  bfc_error *err);

/* ---- probing and adding, by the key's native type ---- */

/* number kind */
extern int	bfc_contains_int64(const bfc_filter *filter, int64_t key, bfc_error *err);
extern int	bfc_add_int64(bfc_filter *filter, int64_t key, bfc_error *err);

/* float kind */
extern int	bfc_contains_double(const bfc_filter *filter, double key, bfc_error *err);
extern int	bfc_add_double(bfc_filter *filter, double key, bfc_error *err);

/* text kind: UTF-8 bytes */
extern int	bfc_contains_text(const bfc_filter *filter, const char *key, size_t len,
							  bfc_error *err);
extern int	bfc_add_text(bfc_filter *filter, const char *key, size_t len, bfc_error *err);

/* bytea kind */
extern int	bfc_contains_bytea(const bfc_filter *filter, const void *key, size_t len,
							   bfc_error *err);
extern int	bfc_add_bytea(bfc_filter *filter, const void *key, size_t len, bfc_error *err);

/* uuid kind: key points to the 16 bytes */
extern int	bfc_contains_uuid(const bfc_filter *filter, const uint8_t *key, bfc_error *err);
extern int	bfc_add_uuid(bfc_filter *filter, const uint8_t *key, bfc_error *err);

/* boolean kind */
extern int	bfc_contains_bool(const bfc_filter *filter, bool key, bfc_error *err);
extern int	bfc_add_bool(bfc_filter *filter, bool key, bfc_error *err);

/* date kind: days since 2000-01-01 (INT32_MIN/INT32_MAX: -infinity/infinity) */
extern int	bfc_contains_date(const bfc_filter *filter, int32_t days, bfc_error *err);
extern int	bfc_add_date(bfc_filter *filter, int32_t days, bfc_error *err);

/*
 * timestamp and timestamptz kinds: microseconds since 2000-01-01 00:00
 * (UTC for timestamptz; INT64_MIN/INT64_MAX: -infinity/infinity)
 */
extern int	bfc_contains_timestamp(const bfc_filter *filter, bfc_kind kind,
								   int64_t microseconds, bfc_error *err);
extern int	bfc_add_timestamp(bfc_filter *filter, bfc_kind kind, int64_t microseconds,
							  bfc_error *err);

/*
 * Any kind but "other", the key given as text and parsed as the server's
 * input function for the filter's kind would (numbers as numeric_in: 0.50
 * = 0.5, 1e3 = 1000; uuids in any case, with or without braces and
 * hyphens; bytea as \x and hex digits; ...).  A filter of no kind yet
 * answers 0 without parsing; bfc_add_str needs the filter's kind.
 */
extern int	bfc_contains_str(const bfc_filter *filter, const char *key, size_t len,
							 bfc_error *err);
extern int	bfc_add_str(bfc_filter *filter, const char *key, size_t len, bfc_error *err);

/*
 * As bfc_contains_str for a key of the given kind, whatever the filter's
 * kind (which must match it): for a number key spelled as text on a
 * filter of no kind yet, say.
 */
extern int	bfc_contains_str_as(const bfc_filter *filter, bfc_kind kind, const char *key,
								size_t len, bfc_error *err);
extern int	bfc_add_str_as(bfc_filter *filter, bfc_kind kind, const char *key, size_t len,
						   bfc_error *err);

/* ---- batches: one call for many keys; out[i] = 1 or 0 ---- */

extern int	bfc_contains_int64_many(const bfc_filter *filter, const int64_t *keys,
									size_t n, uint8_t *out, bfc_error *err);
extern int	bfc_add_int64_many(bfc_filter *filter, const int64_t *keys, size_t n,
							   bfc_error *err);
extern int	bfc_contains_uuid_many(const bfc_filter *filter, const uint8_t *keys,
								   size_t n, uint8_t *out, bfc_error *err);	/* 16 bytes each */
extern int	bfc_contains_double_many(const bfc_filter *filter, const double *keys,
									 size_t n, uint8_t *out, bfc_error *err);

/*
 * Keys of one kind packed one after another: key i is
 * data[offsets[i] .. offsets[i + 1]).  kind is BFC_KIND_TEXT or
 * BFC_KIND_BYTEA for raw keys, any other for keys as text (as
 * bfc_contains_str_as).
 */
extern int	bfc_contains_packed(const bfc_filter *filter, bfc_kind kind, const char *data,
								const size_t *offsets, size_t n, uint8_t *out,
								bfc_error *err);
extern int	bfc_add_packed(bfc_filter *filter, bfc_kind kind, const char *data,
						   const size_t *offsets, size_t n, bfc_error *err);

/* ---- following an index: the follower ---- */

/*
 * One follower of a bloomfilter index (follower.c): the state machine that
 * keeps a copy of the index's filter current, shared by the CLI's sync and
 * the Python and Node LiveFilter.  It does no I/O and reads no clock: the
 * caller runs the queries, passes their rows in, and gives its monotonic
 * time in seconds (`now`, `started`) wherever time matters, so that a test
 * drives it completely.
 *
 * A round:
 *
 *	    bfc_request req;
 *	    bfc_follower_next_request(fw, now, &req);
 *	    started = now;      // before sending: the copy's age counts from here
 *	    if (req.kind == BFC_REQUEST_SNAPSHOT)
 *	        SELECT lsn::text, filter::bytea, timeline, build::text,
 *	               pg_is_in_recovery() FROM bloom_index_snapshot(index)
 *	        -> bfc_follower_take_snapshot
 *	    else
 *	        SELECT upto::text, reload, delta, timeline, pg_is_in_recovery()
 *	        FROM bloom_index_changes(index, req.since, req.timeline,
 *	                                 req.build (NULL unless req.has_build)
 *	                                 [, req.wait_ms where the server takes it])
 *	        -> bfc_follower_take_changes; on BFC_SYNC_NEEDS_SNAPSHOT, the
 *	           snapshot at once (the round is not complete until then)
 *	    a query that failed (connection, timeout): bfc_follower_failed
 *
 * Reload rules: a snapshot when there is no copy yet, when the server says
 * reload (the index was rebuilt, the copy is of another build or timeline,
 * or older than the change log keeps), when a delta is refused as
 * BFC_ERR_MISMATCH or BFC_ERR_INVALID (nothing of it is applied), and when
 * a changes row names another timeline than the copy's.  A server behind
 * the copy (a standby that lags the primary the copy was made on) answers
 * an empty delta and its own position: the copy and its position are kept,
 * and the sync counts as a success.  A failed request, or a row refused
 * with -1, leaves the copy, its position and its age as they were.
 *
 * Staleness bound: every probe answers 1 ("maybe") before the first
 * successful sync and once the last one started more than max_staleness
 * seconds before now.  A stalled link turns the guard off, never into a
 * false negative.
 *
 * Write-through: bfc_follower_add keeps a key the caller's application has
 * committed beside the copy, so that it is found at once: with the commit's
 * position (pg_current_wal_lsn() after the commit), until the copy's
 * position reaches it; without one, until a sync whose request was sent
 * after the add has completed (the key committed before that request), and
 * as long as the copy follows a standby (whose position may be behind the
 * primary's commit).
 *
 * Thread safety: the caller serialises everything that changes the
 * follower (next_request is read-only, take_*, failed, add) against
 * everything else on it; probes (bfc_follower_contains*, get_state,
 * bfc_follower_filter) may run concurrently with each other (the forced
 * "maybe" counter is updated atomically).  A reader-writer lock, probes
 * shared and the take_* calls exclusive, is enough; the queries themselves
 * run outside it, so probes wait only for a delta's application.
 */
typedef struct bfc_follower bfc_follower;

typedef enum bfc_request_kind
{
	BFC_REQUEST_SNAPSHOT = 0,
	BFC_REQUEST_CHANGES = 1
} bfc_request_kind;

/* What to ask next (bfc_follower_next_request). */
typedef struct bfc_request
{
	bfc_request_kind kind;
	/* BFC_REQUEST_CHANGES only: the copy's position, timeline and build */
	char		since[24];		/* pg_lsn text, "16/B374D848" */
	uint64_t	since_lsn;		/* the same, as a number */
	int64_t		timeline;
	bool		has_build;		/* false: pass NULL as since_build */
	char		build[24];
	uint64_t	build_lsn;
	/*
	 * How long the server may wait for new changes (bloom_index_changes's
	 * wait_ms, where the server has it): the follower's max_wait, capped at
	 * half the time left before the staleness bound, so that a long wait
	 * does not turn the guard off; 0 for a snapshot.
	 */
	int			wait_ms;
} bfc_request;

/* A row of bloom_index_snapshot, with pg_is_in_recovery(). */
typedef struct bfc_snapshot_row
{
	const char *lsn;			/* pg_lsn text */
	const void *filter;			/* filter::bytea's bytes */
	size_t		filter_len;
	int64_t		timeline;
	const char *build;			/* pg_lsn text, or NULL (no change log) */
	bool		standby;		/* the server was in recovery */
	double		started;		/* caller's monotonic seconds when the request was sent */
} bfc_snapshot_row;

/* A row of bloom_index_changes, with pg_is_in_recovery(). */
typedef struct bfc_changes_row
{
	const char *upto;			/* pg_lsn text */
	bool		reload;
	const void *delta;			/* NULL when reload */
	size_t		delta_len;
	int64_t		timeline;
	bool		standby;
	double		started;
} bfc_changes_row;

/* What a row did to the copy. */
typedef enum bfc_sync_result
{
	BFC_SYNC_FAILED = -1,		/* refused (err says why): nothing changed */
	BFC_SYNC_UNCHANGED = 0,		/* synced; the copy's keys are as they were */
	BFC_SYNC_CHANGED = 1,		/* synced; the copy took keys, or is a new snapshot */
	BFC_SYNC_NEEDS_SNAPSHOT = 2 /* not synced yet: take a snapshot now */
} bfc_sync_result;

/* A key in any of the typed functions' forms, for the follower's calls. */
typedef enum bfc_key_form
{
	BFC_KEY_INT64,				/* integer */
	BFC_KEY_DOUBLE,				/* number */
	BFC_KEY_TEXT,				/* data, len: UTF-8 bytes */
	BFC_KEY_BYTEA,				/* data, len */
	BFC_KEY_UUID,				/* data: 16 bytes */
	BFC_KEY_BOOL,				/* integer: 0 or 1 */
	BFC_KEY_DATE,				/* integer: days since 2000-01-01 */
	BFC_KEY_TIMESTAMP,			/* integer: microseconds; kind TIMESTAMP(TZ) */
	BFC_KEY_STR,				/* data, len: as bfc_contains_str */
	BFC_KEY_STR_AS				/* data, len, kind: as bfc_contains_str_as */
} bfc_key_form;

typedef struct bfc_key
{
	bfc_key_form form;
	bfc_kind	kind;			/* BFC_KEY_TIMESTAMP and BFC_KEY_STR_AS only */
	int64_t		integer;
	double		number;
	const void *data;
	size_t		len;
} bfc_key;

/* Where the follower is, for a wrapper's stats(). */
typedef struct bfc_follower_state
{
	bool		has_copy;
	char		position[24];	/* pg_lsn text; "" without a copy */
	uint64_t	position_lsn;
	int64_t		timeline;
	bool		has_build;
	char		build[24];
	bool		standby;		/* the last successful sync's server was in recovery */
	double		staleness;		/* seconds since the last successful sync's request; -1 before */
	bool		guard_on;		/* probes answer from the copy (fresh enough) */
	size_t		written;		/* write-through keys kept */
	uint64_t	syncs;			/* successful syncs */
	uint64_t	reloads;		/* snapshots taken, the first included */
	uint64_t	refused_deltas; /* deltas refused (answered by a snapshot) */
	uint64_t	errors;			/* failed requests and refused rows */
	uint64_t	forced_maybe;	/* answers forced to "maybe" by the staleness bound */
	uint64_t	bytes_fetched;	/* snapshot and delta bytes taken */
} bfc_follower_state;

/*
 * A follower answering under max_staleness (seconds, > 0), whose changes
 * requests may wait up to max_wait seconds (>= 0) for new changes.
 */
extern bfc_follower *bfc_follower_create(double max_staleness, double max_wait,
										 bfc_error *err);
extern void bfc_follower_free(bfc_follower *follower);

extern void bfc_follower_next_request(const bfc_follower *follower, double now,
									  bfc_request *request);
extern int	bfc_follower_take_snapshot(bfc_follower *follower, const bfc_snapshot_row *row,
									   bfc_error *err);
extern int	bfc_follower_take_changes(bfc_follower *follower, const bfc_changes_row *row,
									  bfc_error *err);
/* A request that got no row: counted; the copy and its age are unchanged. */
extern void bfc_follower_failed(bfc_follower *follower);

/*
 * Write-through of a committed key; commit_lsn is pg_lsn text or NULL.
 * Before the first snapshot the key is kept unchecked (and dropped then if
 * it is not of the index's kind); after it, a key of another kind is
 * BFC_ERR_KIND.  Returns 0 or -1.
 */
extern int	bfc_follower_add(bfc_follower *follower, const bfc_key *key,
							 const char *commit_lsn, double now, bfc_error *err);

/* Probes under the staleness bound: 1 maybe, 0 absent, -1 error. */
extern int	bfc_follower_contains(bfc_follower *follower, const bfc_key *key, double now,
								  bfc_error *err);
extern int	bfc_follower_contains_int64(bfc_follower *follower, int64_t key, double now,
										bfc_error *err);
extern int	bfc_follower_contains_str(bfc_follower *follower, const char *key, size_t len,
									  double now, bfc_error *err);

/* Batches, as bfc_contains_*_many and bfc_contains_packed: out[i] = 1 or 0. */
extern int	bfc_follower_contains_int64_many(bfc_follower *follower, const int64_t *keys,
											 size_t n, uint8_t *out, double now,
											 bfc_error *err);
extern int	bfc_follower_contains_double_many(bfc_follower *follower, const double *keys,
											  size_t n, uint8_t *out, double now,
											  bfc_error *err);
extern int	bfc_follower_contains_uuid_many(bfc_follower *follower, const uint8_t *keys,
											size_t n, uint8_t *out, double now,
											bfc_error *err);
extern int	bfc_follower_contains_packed(bfc_follower *follower, bfc_kind kind,
										 const char *data, const size_t *offsets, size_t n,
										 uint8_t *out, double now, bfc_error *err);

extern void bfc_follower_get_state(const bfc_follower *follower, double now,
								   bfc_follower_state *state);

/*
 * The copy as the last sync left it, without the write-through keys, or
 * NULL before the first snapshot; valid until the next take_* call.
 */
extern const bfc_filter *bfc_follower_filter(const bfc_follower *follower);

#ifdef __cplusplus
}
#endif

#endif							/* BFC_BLOOMFILTER_H */
