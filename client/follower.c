/*-------------------------------------------------------------------------
 *
 * follower.c
 *	  The follower of a bloomfilter index (bloomfilter.h, "following an
 *	  index: the follower"): what to ask the server next, the rows it
 *	  answers taken into the copy, the write-through set beside the copy,
 *	  probes under the staleness bound, and the counters a wrapper reports.
 *	  The CLI's sync and the Python and Node LiveFilter add only their
 *	  connections, timers and locks around it.
 *
 * No I/O and no clock: the caller passes its monotonic time.  Everything
 * that hashes or tests a key is the filter's (filter.c): a probe is the
 * copy's typed probe, then the write-through filter's.
 *
 * Write-through keys live in a small filter of their own beside the copy
 * (the copy must stay the index's, byte for byte, for its deltas to apply).
 * A Bloom filter cannot drop a key, so the keys are also kept as the
 * caller gave them (their bytes copied), and the small filter is built
 * again from those still needed whenever a sync drops some.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "keyparse.h"
#include "lsn.h"

/* The write-through filter's rate: its false positives add to the copy's. */
#define WRITTEN_FPR 0.001
#define WRITTEN_MIN_ROOM 1024

/* A key of bfc_follower_add, its bytes owned here. */
typedef struct WrittenKey
{
	bfc_key		key;			/* key.data points to bytes, when it has any */
	void	   *bytes;
	double		added_at;		/* caller's monotonic seconds */
	uint64_t	commit_lsn;		/* 0: none given */
} WrittenKey;

struct bfc_follower
{
	double		max_staleness;
	double		max_wait;
	bfc_filter *copy;
	uint64_t	position;
	int64_t		timeline;
	bool		has_build;
	uint64_t	build;
	bool		standby;
	bool		want_snapshot;	/* a delta was refused or the server said reload */
	bool		synced;			/* a sync has succeeded: synced_at is set */
	double		synced_at;		/* the last successful sync's request time */
	WrittenKey *written;
	size_t		nwritten;
	size_t		written_alloc;
	bfc_filter *side;			/* the written keys, hashed as the copy's */
	size_t		side_room;
	uint64_t	syncs;
	uint64_t	reloads;
	uint64_t	refused_deltas;
	uint64_t	errors;
	uint64_t	forced_maybe;	/* updated atomically: probes run concurrently */
	uint64_t	bytes_fetched;
};

bfc_follower *
bfc_follower_create(double max_staleness, double max_wait, bfc_error *err)
{
	bfc_follower *follower;

	if (!(max_staleness > 0) || !(max_wait >= 0) || max_wait > 86400)
	{
		bfc_fail(err, BFC_ERR_PARAM,
				 "max_staleness must be a positive number of seconds and max_wait from 0 to 86400");
		return NULL;
	}
	follower = calloc(1, sizeof(*follower));
	if (follower == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	follower->max_staleness = max_staleness;
	follower->max_wait = max_wait;
	return follower;
}

static void
forget_written_key(WrittenKey *entry)
{
	free(entry->bytes);
}

void
bfc_follower_free(bfc_follower *follower)
{
	if (follower == NULL)
		return;
	for (size_t i = 0; i < follower->nwritten; i++)
		forget_written_key(&follower->written[i]);
	free(follower->written);
	bfc_free(follower->side);
	bfc_free(follower->copy);
	free(follower);
}

/* ---------------------------------------------------------------------
 * What to ask next
 * ---------------------------------------------------------------------
 */

/*
 * The wait a changes request may ask of the server: a wait ends the
 * request later than it began, and the copy ages meanwhile, so it takes at
 * most half the time left before the staleness bound.
 */
static int
wait_for_changes_ms(const bfc_follower *follower, double now)
{
	double		left = follower->max_staleness - (now - follower->synced_at);
	double		wait = follower->max_wait;

	if (!follower->synced || left <= 0)
		return 0;
	if (wait > left / 2)
		wait = left / 2;
	return (int) (wait * 1000);
}

void
bfc_follower_next_request(const bfc_follower *follower, double now, bfc_request *request)
{
	memset(request, 0, sizeof(*request));
	if (follower->copy == NULL || follower->want_snapshot)
	{
		request->kind = BFC_REQUEST_SNAPSHOT;
		return;
	}
	request->kind = BFC_REQUEST_CHANGES;
	request->since_lsn = follower->position;
	bfc_lsn_format(follower->position, request->since);
	request->timeline = follower->timeline;
	request->has_build = follower->has_build;
	if (follower->has_build)
	{
		request->build_lsn = follower->build;
		bfc_lsn_format(follower->build, request->build);
	}
	request->wait_ms = wait_for_changes_ms(follower, now);
}

/* ---------------------------------------------------------------------
 * Write-through
 * ---------------------------------------------------------------------
 */

/* The filter call for a key of any form: contains when adding is false. */
static int
key_call(bfc_filter *filter, const bfc_key *key, bool adding, bfc_error *err)
{
	switch (key->form)
	{
		case BFC_KEY_INT64:
			return adding ? bfc_add_int64(filter, key->integer, err)
				: bfc_contains_int64(filter, key->integer, err);
		case BFC_KEY_DOUBLE:
			return adding ? bfc_add_double(filter, key->number, err)
				: bfc_contains_double(filter, key->number, err);
		case BFC_KEY_TEXT:
			return adding ? bfc_add_text(filter, key->data, key->len, err)
				: bfc_contains_text(filter, key->data, key->len, err);
		case BFC_KEY_BYTEA:
			return adding ? bfc_add_bytea(filter, key->data, key->len, err)
				: bfc_contains_bytea(filter, key->data, key->len, err);
		case BFC_KEY_UUID:
			return adding ? bfc_add_uuid(filter, key->data, err)
				: bfc_contains_uuid(filter, key->data, err);
		case BFC_KEY_BOOL:
			return adding ? bfc_add_bool(filter, key->integer != 0, err)
				: bfc_contains_bool(filter, key->integer != 0, err);
		case BFC_KEY_DATE:
			if (key->integer < INT32_MIN || key->integer > INT32_MAX)
				break;
			return adding ? bfc_add_date(filter, (int32_t) key->integer, err)
				: bfc_contains_date(filter, (int32_t) key->integer, err);
		case BFC_KEY_TIMESTAMP:
			return adding ? bfc_add_timestamp(filter, key->kind, key->integer, err)
				: bfc_contains_timestamp(filter, key->kind, key->integer, err);
		case BFC_KEY_STR:
			return adding ? bfc_add_str(filter, key->data, key->len, err)
				: bfc_contains_str(filter, key->data, key->len, err);
		case BFC_KEY_STR_AS:
			return adding ? bfc_add_str_as(filter, key->kind, key->data, key->len, err)
				: bfc_contains_str_as(filter, key->kind, key->data, key->len, err);
	}
	bfc_fail(err, BFC_ERR_PARAM, "not a key the follower takes (form %d)", (int) key->form);
	return -1;
}

/* The bytes a key of this form points to, which a kept key must own. */
static size_t
key_bytes(const bfc_key *key)
{
	switch (key->form)
	{
		case BFC_KEY_UUID:
			return 16;
		case BFC_KEY_TEXT:
		case BFC_KEY_BYTEA:
		case BFC_KEY_STR:
		case BFC_KEY_STR_AS:
			return key->len;
		default:
			return 0;
	}
}

/*
 * The written keys hashed into a new filter of the copy's kind (so that
 * they hash and compare as the copy's keys do), with room for room keys.
 * Keys that do not go in (added before the first snapshot, of another
 * kind than the index's) are dropped: the index can never hold them.
 */
static int
rebuild_side(bfc_follower *follower, size_t room, bfc_error *err)
{
	bfc_filter *side = bfc_create(bfc_filter_kind(follower->copy), room, WRITTEN_FPR, err);
	size_t		kept = 0;

	if (side == NULL)
		return -1;
	for (size_t i = 0; i < follower->nwritten; i++)
	{
		WrittenKey *entry = &follower->written[i];

		if (key_call(side, &entry->key, true, NULL) < 0)
		{
			forget_written_key(entry);
			continue;
		}
		follower->written[kept++] = *entry;
	}
	follower->nwritten = kept;
	bfc_free(follower->side);
	follower->side = side;
	follower->side_room = room;
	return 0;
}

/*
 * Whether a written key may still be missing from the copy after a
 * successful sync.  With its commit's position: until the copy's reaches
 * it.  Without: the key committed before it was added, so a sync whose
 * request went out after the add (started) holds it.  A copy that follows
 * a standby keeps such keys, as a standby's position may be behind the
 * primary's commit.
 */
static bool
still_written(const bfc_follower *follower, const WrittenKey *entry, double started)
{
	if (entry->commit_lsn != 0)
		return follower->position < entry->commit_lsn;
	return follower->standby || entry->added_at >= started;
}

/* After a successful sync: drops the keys the copy now holds. */
static void
forget_written(bfc_follower *follower, double started)
{
	size_t		kept = 0;

	for (size_t i = 0; i < follower->nwritten; i++)
	{
		if (still_written(follower, &follower->written[i], started))
			follower->written[kept++] = follower->written[i];
		else
			forget_written_key(&follower->written[i]);
	}
	follower->nwritten = kept;
	if (kept > 0)
	{
		size_t		room = 2 * kept > WRITTEN_MIN_ROOM ? 2 * kept : WRITTEN_MIN_ROOM;

		/*
		 * On failure (memory) the old side stays, holding every kept key; if
		 * there is none (a new snapshot freed it), probes answer "maybe"
		 * (written_unsure) until an add or a sync builds one.
		 */
		(void) rebuild_side(follower, room, NULL);
		return;
	}
	bfc_free(follower->side);
	follower->side = NULL;
	follower->side_room = 0;
}

/* A copy of key into a new entry; false on no memory. */
static bool
keep_key(WrittenKey *entry, const bfc_key *key, uint64_t commit_lsn, double added_at)
{
	size_t		len = key_bytes(key);

	memset(entry, 0, sizeof(*entry));
	entry->key = *key;
	entry->commit_lsn = commit_lsn;
	entry->added_at = added_at;
	if (len == 0)
		return true;
	entry->bytes = malloc(len);
	if (entry->bytes == NULL)
		return false;
	memcpy(entry->bytes, key->data, len);
	entry->key.data = entry->bytes;
	return true;
}

static bool
reserve_written(bfc_follower *follower)
{
	WrittenKey *grown;
	size_t		alloc;

	if (follower->nwritten < follower->written_alloc)
		return true;
	alloc = follower->written_alloc == 0 ? 16 : 2 * follower->written_alloc;
	grown = realloc(follower->written, alloc * sizeof(*grown));
	if (grown == NULL)
		return false;
	follower->written = grown;
	follower->written_alloc = alloc;
	return true;
}

/*
 * The side filter with room for one more key (rebuilt with four times the
 * keys' room, so that adds rebuild it rarely), then the key added to it.
 */
static int
add_to_side(bfc_follower *follower, const bfc_key *key, bfc_error *err)
{
	if (follower->side == NULL || follower->nwritten >= follower->side_room)
	{
		size_t		room = 4 * (follower->nwritten + 1);

		if (rebuild_side(follower, room > WRITTEN_MIN_ROOM ? room : WRITTEN_MIN_ROOM, err) < 0)
			return -1;
	}
	return key_call(follower->side, key, true, err);
}

int
bfc_follower_add(bfc_follower *follower, const bfc_key *key, const char *commit_lsn,
					double now, bfc_error *err)
{
	uint64_t	lsn = 0;

	if (commit_lsn != NULL && !bfc_lsn_parse(commit_lsn, &lsn))
	{
		bfc_fail(err, BFC_ERR_PARAM, "not a WAL position (pg_lsn): \"%.40s\"", commit_lsn);
		return -1;
	}
	if (!reserve_written(follower) ||
		!keep_key(&follower->written[follower->nwritten], key, lsn, now))
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (follower->copy != NULL && add_to_side(follower, key, err) < 0)
	{
		forget_written_key(&follower->written[follower->nwritten]);
		return -1;
	}
	follower->nwritten++;
	return 0;
}

/* ---------------------------------------------------------------------
 * Taking the server's rows
 * ---------------------------------------------------------------------
 */

/* A successful sync whose request went out at started. */
static void
complete_sync(bfc_follower *follower, double started, bool standby)
{
	follower->synced = true;
	follower->synced_at = started;
	follower->standby = standby;
	follower->want_snapshot = false;
	follower->syncs++;
	forget_written(follower, started);
}

static int
refuse_row(bfc_follower *follower, bfc_error *err, const char *what, const char *field)
{
	follower->errors++;
	bfc_fail(err, BFC_ERR_INVALID, "%s returned no %s", what, field);
	return BFC_SYNC_FAILED;
}

int
bfc_follower_take_snapshot(bfc_follower *follower, const bfc_snapshot_row *row, bfc_error *err)
{
	uint64_t	position;
	uint64_t	build = 0;
	bfc_filter *copy;

	if (!bfc_lsn_parse(row->lsn, &position))
		return refuse_row(follower, err, "bloom_index_snapshot", "position (pg_lsn)");
	if (row->build != NULL && !bfc_lsn_parse(row->build, &build))
		return refuse_row(follower, err, "bloom_index_snapshot", "build (pg_lsn)");
	if (row->filter == NULL || row->timeline < 1)
		return refuse_row(follower, err, "bloom_index_snapshot",
						  row->filter == NULL ? "filter" : "timeline");
	copy = bfc_from_bytes(row->filter, row->filter_len, err);
	if (copy == NULL)
	{
		follower->errors++;
		return BFC_SYNC_FAILED;
	}
	bfc_free(follower->copy);
	follower->copy = copy;
	follower->position = position;
	follower->timeline = row->timeline;
	follower->has_build = row->build != NULL;
	follower->build = build;
	follower->reloads++;
	follower->bytes_fetched += row->filter_len;
	/* the side is of the copy's kind, which a new snapshot may change */
	bfc_free(follower->side);
	follower->side = NULL;
	follower->side_room = 0;
	complete_sync(follower, row->started, row->standby);
	return BFC_SYNC_CHANGED;
}

/*
 * The delta applied to the copy, or BFC_SYNC_NEEDS_SNAPSHOT where it does
 * not fit it (another build, damaged: nothing of it is applied).
 */
static int
apply_delta(bfc_follower *follower, const bfc_changes_row *row, bfc_error *err)
{
	bfc_error	refusal;

	if (bfc_apply_changes(follower->copy, row->delta, row->delta_len, &refusal) < 0)
	{
		if (refusal.code == BFC_ERR_MISMATCH || refusal.code == BFC_ERR_INVALID)
		{
			follower->refused_deltas++;
			follower->want_snapshot = true;
			if (err != NULL)
				*err = refusal;
			return BFC_SYNC_NEEDS_SNAPSHOT;
		}
		follower->errors++;
		if (err != NULL)
			*err = refusal;
		return BFC_SYNC_FAILED;
	}
	return row->delta_len > BF_DELTA_HEADER_SIZE ? BFC_SYNC_CHANGED : BFC_SYNC_UNCHANGED;
}

int
bfc_follower_take_changes(bfc_follower *follower, const bfc_changes_row *row, bfc_error *err)
{
	uint64_t	upto;
	int			result;

	if (follower->copy == NULL || follower->want_snapshot)
	{
		bfc_fail(err, BFC_ERR_PARAM, "the follower asked for a snapshot, not for changes");
		return BFC_SYNC_FAILED;
	}
	if (!bfc_lsn_parse(row->upto, &upto))
		return refuse_row(follower, err, "bloom_index_changes", "position (pg_lsn)");
	if (!row->reload && row->delta == NULL)
		return refuse_row(follower, err, "bloom_index_changes", "delta");
	follower->bytes_fetched += row->delta_len;
	if (row->reload || row->timeline != follower->timeline)
	{
		/* a copy of another timeline may hold keys the server never got */
		follower->want_snapshot = true;
		bfc_fail(err, BFC_OK, "the server says to load a new snapshot");
		return BFC_SYNC_NEEDS_SNAPSHOT;
	}
	result = apply_delta(follower, row, err);
	if (result != BFC_SYNC_CHANGED && result != BFC_SYNC_UNCHANGED)
		return result;
	/* a standby behind the copy: the copy holds all it has and more */
	if (upto > follower->position)
		follower->position = upto;
	complete_sync(follower, row->started, row->standby);
	return result;
}

void
bfc_follower_failed(bfc_follower *follower)
{
	follower->errors++;
}

/* ---------------------------------------------------------------------
 * Probes
 * ---------------------------------------------------------------------
 */

/* Whether probes answer from the copy; if not, n answers are forced. */
static bool
guard_on(bfc_follower *follower, double now, size_t n)
{
	if (follower->synced && now - follower->synced_at <= follower->max_staleness)
		return true;
	__atomic_fetch_add(&follower->forced_maybe, (uint64_t) n, __ATOMIC_RELAXED);
	return false;
}

/*
 * Whether written keys are kept without a filter to probe them in (memory
 * ran out rebuilding it): then a key the copy lacks is still a "maybe".
 */
static bool
written_unsure(const bfc_follower *follower)
{
	return follower->nwritten > 0 && follower->side == NULL;
}

int
bfc_follower_contains(bfc_follower *follower, const bfc_key *key, double now, bfc_error *err)
{
	int			found;

	if (!guard_on(follower, now, 1))
		return 1;
	found = key_call(follower->copy, key, false, err);
	if (found != 0)
		return found;
	if (written_unsure(follower))
		return 1;
	return follower->side == NULL ? 0 : key_call(follower->side, key, false, err);
}

int
bfc_follower_contains_int64(bfc_follower *follower, int64_t key, double now, bfc_error *err)
{
	bfc_key		k = {.form = BFC_KEY_INT64, .integer = key};

	return bfc_follower_contains(follower, &k, now, err);
}

int
bfc_follower_contains_str(bfc_follower *follower, const char *key, size_t len, double now,
						  bfc_error *err)
{
	bfc_key		k = {.form = BFC_KEY_STR, .data = key, .len = len};

	return bfc_follower_contains(follower, &k, now, err);
}

/*
 * A batch: every answer 1 when the guard is off; else the copy's answers,
 * and for the keys it lacks, the write-through filter's (into a scratch
 * array, OR-ed in).  probe is the filters' batch function, given its keys
 * through the closure's arguments.
 */
typedef int (*batch_probe) (const bfc_filter *filter, const void *keys, size_t n,
							uint8_t *out, const void *extra, bfc_error *err);

static int
batch_contains(bfc_follower *follower, batch_probe probe, const void *keys, size_t n,
			   uint8_t *out, const void *extra, double now, bfc_error *err)
{
	uint8_t    *written;

	if (!guard_on(follower, now, n))
	{
		memset(out, 1, n);
		return 0;
	}
	if (probe(follower->copy, keys, n, out, extra, err) < 0)
		return -1;
	if (written_unsure(follower))
	{
		memset(out, 1, n);
		return 0;
	}
	if (follower->side == NULL || n == 0)
		return 0;
	written = malloc(n);
	if (written == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (probe(follower->side, keys, n, written, extra, err) < 0)
	{
		free(written);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		out[i] |= written[i];
	free(written);
	return 0;
}

static int
probe_int64_many(const bfc_filter *filter, const void *keys, size_t n, uint8_t *out,
				 const void *extra, bfc_error *err)
{
	(void) extra;
	return bfc_contains_int64_many(filter, keys, n, out, err);
}

static int
probe_double_many(const bfc_filter *filter, const void *keys, size_t n, uint8_t *out,
				  const void *extra, bfc_error *err)
{
	(void) extra;
	return bfc_contains_double_many(filter, keys, n, out, err);
}

static int
probe_uuid_many(const bfc_filter *filter, const void *keys, size_t n, uint8_t *out,
				const void *extra, bfc_error *err)
{
	(void) extra;
	return bfc_contains_uuid_many(filter, keys, n, out, err);
}

/* Packed keys: extra is their PackedKeys. */
typedef struct PackedKeys
{
	bfc_kind	kind;
	const size_t *offsets;
} PackedKeys;

static int
probe_packed(const bfc_filter *filter, const void *keys, size_t n, uint8_t *out,
			 const void *extra, bfc_error *err)
{
	const PackedKeys *packed = extra;

	return bfc_contains_packed(filter, packed->kind, keys, packed->offsets, n, out, err);
}

int
bfc_follower_contains_int64_many(bfc_follower *follower, const int64_t *keys, size_t n,
								 uint8_t *out, double now, bfc_error *err)
{
	return batch_contains(follower, probe_int64_many, keys, n, out, NULL, now, err);
}

int
bfc_follower_contains_double_many(bfc_follower *follower, const double *keys, size_t n,
								  uint8_t *out, double now, bfc_error *err)
{
	return batch_contains(follower, probe_double_many, keys, n, out, NULL, now, err);
}

int
bfc_follower_contains_uuid_many(bfc_follower *follower, const uint8_t *keys, size_t n,
								uint8_t *out, double now, bfc_error *err)
{
	return batch_contains(follower, probe_uuid_many, keys, n, out, NULL, now, err);
}

int
bfc_follower_contains_packed(bfc_follower *follower, bfc_kind kind, const char *data,
							 const size_t *offsets, size_t n, uint8_t *out, double now,
							 bfc_error *err)
{
	PackedKeys	packed = {kind, offsets};

	return batch_contains(follower, probe_packed, data, n, out, &packed, now, err);
}

/* ---------------------------------------------------------------------
 * State
 * ---------------------------------------------------------------------
 */

void
bfc_follower_get_state(const bfc_follower *follower, double now, bfc_follower_state *state)
{
	memset(state, 0, sizeof(*state));
	state->has_copy = follower->copy != NULL;
	if (state->has_copy)
	{
		state->position_lsn = follower->position;
		bfc_lsn_format(follower->position, state->position);
		state->timeline = follower->timeline;
		state->has_build = follower->has_build;
		if (follower->has_build)
			bfc_lsn_format(follower->build, state->build);
	}
	state->standby = follower->standby;
	state->staleness = follower->synced ? now - follower->synced_at : -1;
	state->guard_on = follower->synced && now - follower->synced_at <= follower->max_staleness;
	state->written = follower->nwritten;
	state->syncs = follower->syncs;
	state->reloads = follower->reloads;
	state->refused_deltas = follower->refused_deltas;
	state->errors = follower->errors;
	state->forced_maybe = __atomic_load_n(&follower->forced_maybe, __ATOMIC_RELAXED);
	state->bytes_fetched = follower->bytes_fetched;
}

const bfc_filter *
bfc_follower_filter(const bfc_follower *follower)
{
	return follower->copy;
}
