/*-------------------------------------------------------------------------
 *
 * test_follower.c
 *	  Unit tests of the client library's follower (client/follower.c),
 *	  driven with no server: snapshots are filters of the library's own,
 *	  deltas are written with the core's delta writer (delta.h), and time is
 *	  the test's.  Every reload rule, the standby behind the copy, the
 *	  staleness bound at its edge, the write-through set (by position, by
 *	  time, on a standby) and the counters.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"
#include "delta.h"
#include "canonical.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

static BfSizingMemo *memo_unused;

/* The "index": a filter of the library's, and its header as the core reads it. */
static BfHeader
header_of(const bfc_filter *index)
{
	size_t		len;
	const uint8_t *bytes = bfc_bytes(index, &len);
	BfHeader	header;

	bf_read_header(bytes, len, &header);
	return header;
}

/* A delta of keys for index (added to it too, as the index takes them). */
static uint8_t *
delta_of(bfc_filter *index, const int64_t *keys, size_t n, size_t *len)
{
	BfHeader	header = header_of(index);
	uint8_t    *out = malloc(bf_delta_bytes(n > 0 ? 1 : 0, n));
	BfDeltaWriter writer;

	bf_delta_start(&writer, out, &header, 1);
	for (size_t i = 0; i < n; i++)
	{
		bf_delta_add(&writer, 0, bf_hash_int64(keys[i], header.seed));
		bfc_add_int64(index, keys[i], NULL);
	}
	*len = bf_delta_finish(&writer);
	return out;
}

static int
take_snapshot(bfc_follower *fw, const bfc_filter *index, const char *lsn, int64_t timeline,
			  bool standby, double started)
{
	size_t		len;
	const uint8_t *bytes = bfc_bytes(index, &len);
	bfc_snapshot_row row = {lsn, bytes, len, timeline, "0/50", standby, started};

	return bfc_follower_take_snapshot(fw, &row, NULL);
}

static int
take_delta(bfc_follower *fw, const uint8_t *delta, size_t len, const char *upto,
		   int64_t timeline, bool standby, double started, bfc_error *err)
{
	bfc_changes_row row = {upto, false, delta, len, timeline, standby, started};

	return bfc_follower_take_changes(fw, &row, err);
}

/* A key the copy lacks: found by probing (no false positive). */
static int64_t
absent_key(bfc_follower *fw, int64_t from, double now)
{
	while (bfc_follower_contains_int64(fw, from, now, NULL) == 1)
		from++;
	return from;
}

static void
test_reload_rules(void)
{
	bfc_filter *index = bfc_create(BFC_KIND_NUMBER, 1000, 0.01, NULL);
	bfc_filter *other = bfc_create(BFC_KIND_NUMBER, 5000, 0.01, NULL);
	bfc_follower *fw = bfc_follower_create(2.0, 1.0, NULL);
	bfc_follower_state st;
	bfc_request req;
	bfc_error	err;
	int64_t		k42 = 42, k43 = 43, k44 = 44;
	size_t		len;
	uint8_t    *delta;
	bfc_changes_row reload = {"0/300", true, NULL, 0, 1, false, 12};

	bfc_add_int64(index, 1, NULL);	/* a delta names the index's kind: it has a key */
	bfc_add_int64(other, 1, NULL);
	bfc_follower_next_request(fw, 0, &req);
	check(req.kind == BFC_REQUEST_SNAPSHOT, "no copy: the first request is a snapshot");
	check(bfc_follower_contains_int64(fw, 1, 0, NULL) == 1, "before the first sync every probe is maybe");
	check(take_snapshot(fw, index, "0/100", 1, false, 10) == BFC_SYNC_CHANGED, "a snapshot is taken");
	bfc_follower_next_request(fw, 11, &req);
	check(req.kind == BFC_REQUEST_CHANGES && strcmp(req.since, "0/100") == 0 && req.since_lsn == 0x100 &&
		  req.timeline == 1 && req.has_build && strcmp(req.build, "0/50") == 0,
		  "with a copy: changes since its position, timeline and build");
	check(req.wait_ms == 500, "the wait is capped at half the time left before the bound");
	check(bfc_follower_contains_int64(fw, k42, 11, NULL) == 0, "a key not in the copy is absent");

	delta = delta_of(index, &k42, 1, &len);
	check(take_delta(fw, delta, len, "0/200", 1, false, 11, NULL) == BFC_SYNC_CHANGED &&
		  bfc_follower_contains_int64(fw, k42, 11.5, NULL) == 1, "a delta is applied: its key is found");
	free(delta);
	delta = delta_of(index, NULL, 0, &len);
	check(take_delta(fw, delta, len, "0/210", 1, false, 11.6, NULL) == BFC_SYNC_UNCHANGED,
		  "an empty delta: synced, unchanged");
	free(delta);

	check(bfc_follower_take_changes(fw, &reload, NULL) == BFC_SYNC_NEEDS_SNAPSHOT,
		  "reload flag (rebuilt, or past the horizon): a snapshot is needed");
	bfc_follower_next_request(fw, 12, &req);
	check(req.kind == BFC_REQUEST_SNAPSHOT, "... and the next request is a snapshot");
	check(bfc_follower_contains_int64(fw, k42, 12, NULL) == 1, "... while the copy keeps answering");
	take_snapshot(fw, index, "0/300", 1, false, 12);

	delta = delta_of(other, &k43, 1, &len);
	check(take_delta(fw, delta, len, "0/400", 1, false, 13, &err) == BFC_SYNC_NEEDS_SNAPSHOT &&
		  err.code == BFC_ERR_MISMATCH, "a delta of another build (MISMATCH): a snapshot is needed");
	check(bfc_follower_contains_int64(fw, k43, 13, NULL) == 0, "... and nothing of it was applied");
	free(delta);
	take_snapshot(fw, index, "0/400", 1, false, 13);

	delta = delta_of(index, &k44, 1, &len);
	delta[len - 1] ^= 0x55;
	check(take_delta(fw, delta, len, "0/500", 1, false, 14, &err) == BFC_SYNC_NEEDS_SNAPSHOT &&
		  err.code == BFC_ERR_INVALID, "a damaged delta: a snapshot is needed");
	check(bfc_follower_contains_int64(fw, k44, 14, NULL) == 0, "... and nothing of it was applied");
	delta[len - 1] ^= 0x55;
	take_snapshot(fw, other, "0/500", 1, false, 14);
	take_snapshot(fw, index, "0/500", 1, false, 14);

	check(take_delta(fw, delta, len, "0/600", 2, false, 15, NULL) == BFC_SYNC_NEEDS_SNAPSHOT,
		  "a changes row of another timeline: a snapshot is needed");
	take_snapshot(fw, index, "0/600", 2, false, 15);
	free(delta);

	delta = delta_of(index, NULL, 0, &len);
	check(take_delta(fw, delta, len, "0/580", 2, true, 16, NULL) == BFC_SYNC_UNCHANGED,
		  "a standby behind the copy: an empty delta, synced");
	bfc_follower_get_state(fw, 16, &st);
	check(strcmp(st.position, "0/600") == 0 && st.standby, "... the copy's position is kept");
	free(delta);

	bfc_follower_failed(fw);
	bfc_follower_get_state(fw, 17, &st);
	check(strcmp(st.position, "0/600") == 0 && st.staleness == 1.0,
		  "a failed request leaves the position and the age");
	check(st.reloads == 6 && st.refused_deltas == 2 && st.errors == 1 && st.syncs == 9 &&
		  st.forced_maybe == 1, "counters: syncs, reloads, refused deltas, errors, forced answers");

	check(bfc_follower_contains_int64(fw, absent_key(fw, 1000, 18), 18, NULL) == 0,
		  "staleness: at the bound the guard is on");
	check(bfc_follower_contains_int64(fw, absent_key(fw, 1000, 18), 18.001, NULL) == 1,
		  "staleness: past the bound every probe is maybe");
	{
		int64_t		keys[3] = {absent_key(fw, 2000, 18), 42, 7};
		uint8_t		out[3];

		bfc_follower_contains_int64_many(fw, keys, 3, out, 18.5, NULL);
		check(out[0] == 1 && out[1] == 1 && out[2] == 1, "staleness: a batch past the bound is all maybe");
	}
	bfc_follower_get_state(fw, 18.5, &st);
	check(st.forced_maybe == 5 && !st.guard_on, "counters: every forced answer counted");
	bfc_follower_free(fw);
	bfc_free(index);
	bfc_free(other);
}

static void
test_write_through(void)
{
	bfc_filter *index = bfc_create(BFC_KIND_NUMBER, 1000, 0.01, NULL);
	bfc_follower *fw = bfc_follower_create(5.0, 0, NULL);
	bfc_key		wrong = {.form = BFC_KEY_TEXT, .data = "x", .len = 1};
	bfc_key		key;
	bfc_error	err;
	bfc_follower_state st;
	size_t		len;
	uint8_t    *empty;
	int64_t		by_time, by_lsn, on_standby;

	bfc_add_int64(index, 1, NULL);	/* the index's kind is known once it has a key */
	check(bfc_follower_add(fw, &wrong, NULL, 1, NULL) == 0, "before a copy a key is kept unchecked");
	take_snapshot(fw, index, "0/100", 1, false, 2);
	bfc_follower_get_state(fw, 2, &st);
	check(st.written == 0, "... and dropped at the snapshot if of another kind");
	check(bfc_follower_add(fw, &wrong, NULL, 2, &err) < 0 && err.code == BFC_ERR_KIND,
		  "after a copy, a key of another kind is an error");

	by_time = absent_key(fw, 100, 3);
	key = (bfc_key) {.form = BFC_KEY_INT64, .integer = by_time};
	bfc_follower_add(fw, &key, NULL, 3, NULL);
	check(bfc_follower_contains_int64(fw, by_time, 3, NULL) == 1, "a written key is found at once");
	empty = delta_of(index, NULL, 0, &len);
	take_delta(fw, empty, len, "0/110", 1, false, 2.9, NULL);
	check(bfc_follower_contains_int64(fw, by_time, 3.1, NULL) == 1,
		  "by time: kept after a sync that started before the add");
	take_delta(fw, empty, len, "0/120", 1, false, 3.1, NULL);
	check(bfc_follower_contains_int64(fw, by_time, 3.2, NULL) == 0,
		  "by time: dropped after a sync that started after the add");

	by_lsn = absent_key(fw, 200, 4);
	key.integer = by_lsn;
	bfc_follower_add(fw, &key, "0/200", 4, NULL);
	take_delta(fw, empty, len, "0/1FF", 1, false, 5, NULL);
	check(bfc_follower_contains_int64(fw, by_lsn, 5, NULL) == 1,
		  "by position: kept while the copy is behind the commit");
	take_delta(fw, empty, len, "0/200", 1, false, 5.5, NULL);
	check(bfc_follower_contains_int64(fw, by_lsn, 5.5, NULL) == 0,
		  "by position: dropped once the copy reaches the commit");

	on_standby = absent_key(fw, 300, 6);
	key.integer = on_standby;
	bfc_follower_add(fw, &key, NULL, 6, NULL);
	take_delta(fw, empty, len, "0/210", 1, true, 7, NULL);
	check(bfc_follower_contains_int64(fw, on_standby, 7, NULL) == 1,
		  "on a standby: a key without a position is kept after a later sync");
	{
		int64_t		keys[2] = {on_standby, absent_key(fw, 400, 7)};
		uint8_t		out[2];
		size_t		offsets[2] = {0, 0};
		char		text[24];
		uint8_t		one;

		bfc_follower_contains_int64_many(fw, keys, 2, out, 7, NULL);
		check(out[0] == 1 && out[1] == 0, "a batch sees the written key");
		offsets[1] = (size_t) snprintf(text, sizeof(text), "%lld", (long long) on_standby);
		bfc_follower_contains_packed(fw, BFC_KIND_NUMBER, text, offsets, 1, &one, 7, NULL);
		check(one == 1 && bfc_follower_contains_str(fw, text, offsets[1], 7, NULL) == 1,
			  "packed keys and the str form see the written key");
	}
	take_delta(fw, empty, len, "0/220", 1, false, 8, NULL);
	check(bfc_follower_contains_int64(fw, on_standby, 8, NULL) == 0,
		  "back on a primary, a later sync drops it");
	bfc_follower_get_state(fw, 8, &st);
	check(st.written == 0, "the write-through set is empty");
	free(empty);
	bfc_follower_free(fw);
	bfc_free(index);
}

static void
test_bad_rows(void)
{
	bfc_filter *index = bfc_create(BFC_KIND_NUMBER, 1000, 0.01, NULL);
	bfc_follower *fw = bfc_follower_create(5.0, 0, NULL);
	bfc_snapshot_row junk = {"0/100", "junk", 4, 1, NULL, false, 1};
	bfc_changes_row no_delta = {"0/200", false, NULL, 0, 1, false, 2};
	bfc_follower_state st;
	bfc_request req;

	check(bfc_follower_take_snapshot(fw, &junk, NULL) == BFC_SYNC_FAILED,
		  "a snapshot that is not a filter is refused");
	check(take_snapshot(fw, index, "not/an/lsn", 1, false, 1) == BFC_SYNC_FAILED,
		  "a snapshot without a position is refused");
	bfc_follower_next_request(fw, 1, &req);
	check(req.kind == BFC_REQUEST_SNAPSHOT, "... and a snapshot is still what is asked");
	take_snapshot(fw, index, "0/100", 1, false, 1);
	check(bfc_follower_take_changes(fw, &no_delta, NULL) == BFC_SYNC_FAILED,
		  "changes without a delta nor a reload are refused");
	bfc_follower_get_state(fw, 2, &st);
	check(st.errors == 3 && strcmp(st.position, "0/100") == 0, "refused rows count as errors, change nothing");
	check(bfc_follower_create(0, 0, NULL) == NULL, "max_staleness must be positive");
	bfc_follower_free(fw);
	bfc_free(index);
}

int
main(void)
{
	(void) memo_unused;
	setvbuf(stdout, NULL, _IONBF, 0);
	test_reload_rules();
	test_write_through();
	test_bad_rows();
	return unit_result();
}
