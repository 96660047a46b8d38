/*-------------------------------------------------------------------------
 *
 * test_delta.c
 *	  Unit tests of the core's deltas (delta.c): the format as delta.h
 *	  writes it down, round trips writer -> check -> apply for a filter of
 *	  fixed size and for a chain grown by several segments, byte equality
 *	  with adding the same hashes through the core as the index adds them,
 *	  every refusal of bf_delta_check, and that a refused delta leaves the
 *	  copy as it was.
 *
 * The index is simulated as bloomindexinsert.c adds keys: a chain skips a
 * key it already holds (and logs nothing for it), a new key goes to the
 * last segment, which grows when full; a filter of fixed size takes every
 * key.  Buffers are exactly as long as their contents, so that a sanitizer
 * build (test/fuzz/run.sh runs this too) sees any access past an end.
 *
 * Built with plain cc, no PostgreSQL.  Prints one line per check and a final
 * "N passed, N failed" line; exits non-zero when a check fails.
 *
 *-------------------------------------------------------------------------
 */
#include "delta.h"
#include "sizing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

/* The tests' one memo of rates sized (sizing.h), as the server has one. */
static BfSizingMemo sizing_memo;


static void *
checked_malloc(size_t n)
{
	void	   *p = malloc(n > 0 ? n : 1);

	if (p == NULL)
		abort();
	return p;
}

/* Hash of an integer key as the SQL glue hashes int8: 8 little-endian bytes. */
static uint64_t
key_hash(uint64_t key, uint64_t seed)
{
	uint8_t		bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t) (key >> (8 * i));
	return bf_hash(bytes, sizeof(bytes), seed);
}

/* ---------------------------------------------------------------------
 * Filters, the simulated index, and deltas
 * ---------------------------------------------------------------------
 */

typedef struct TestFilter
{
	uint8_t    *value;
	size_t		len;
	BfHeader	header;
} TestFilter;

static TestFilter
new_fixed(uint64_t capacity, double fpr, uint64_t seed)
{
	TestFilter	f;
	BfSizing	sizing;

	if (bf_size_for(capacity, fpr, &sizing, &sizing_memo) != BF_OK)
		abort();
	memset(&f.header, 0, sizeof(f.header));
	f.header.version = BF_FORMAT_VERSION;
	f.header.layout = BF_LAYOUT_BLOCKED512;
	f.header.k = sizing.k;
	f.header.identity.kind = BF_KIND_NUMBER;
	f.header.nblocks = sizing.nblocks;
	f.header.capacity = capacity;
	f.header.fpr = fpr;
	f.header.seed = seed;
	f.header.nsegments = 1;
	f.len = bf_value_bytes(sizing.nblocks);
	f.value = checked_malloc(f.len);
	bf_init(f.value, &f.header, NULL);
	return f;
}

/* Appends the chain's next segment; false when it cannot grow. */
static bool
grow(TestFilter *f)
{
	BfSegment	next;
	size_t		new_len;

	if (bf_chain_next(&f->header, f->len, &next, &new_len, &sizing_memo) != BF_OK)
		return false;
	f->value = realloc(f->value, new_len);
	if (f->value == NULL)
		abort();
	bf_chain_append(f->value, &f->header, f->len, &next, NULL);
	f->len = new_len;
	return true;
}

static TestFilter
new_chain(uint64_t capacity, double fpr, uint8_t growth, uint64_t seed)
{
	TestFilter	f;

	if (bf_chain_header(capacity, fpr, growth, &f.header) != BF_OK)
		abort();
	f.header.seed = seed;
	f.header.identity.kind = BF_KIND_NUMBER;
	f.len = BF_HEADER_SIZE;
	f.value = checked_malloc(f.len);
	if (!grow(&f))
		abort();
	return f;
}

static TestFilter
clone(const TestFilter *f)
{
	TestFilter	c = *f;

	c.value = checked_malloc(f->len);
	memcpy(c.value, f->value, f->len);
	return c;
}

/* Field by field: a struct's padding is not its value. */
static bool
same_header(const BfHeader *a, const BfHeader *b)
{
	return a->version == b->version && a->layout == b->layout && a->k == b->k &&
		a->identity.kind == b->identity.kind && a->identity.tag == b->identity.tag &&
		a->identity.env_encoding == b->identity.env_encoding && a->identity.env_locale == b->identity.env_locale &&
		a->nblocks == b->nblocks && a->seed == b->seed && a->capacity == b->capacity &&
		memcmp(&a->fpr, &b->fpr, sizeof(double)) == 0 && a->inserted == b->inserted &&
		a->growth == b->growth && a->nsegments == b->nsegments;
}

static bool
same_filter(const TestFilter *a, const TestFilter *b)
{
	return a->len == b->len && memcmp(a->value, b->value, a->len) == 0 &&
		same_header(&a->header, &b->header);
}

/* What the index logged: each key it added, with the segment it went to. */
typedef struct Log
{
	uint32_t   *segments;
	uint64_t   *hashes;
	size_t		n;
	size_t		room;
} Log;

static void
log_add(Log *log, uint32_t segment, uint64_t hash)
{
	if (log->n == log->room)
	{
		log->room = log->room ? log->room * 2 : 64;
		log->segments = realloc(log->segments, log->room * sizeof(uint32_t));
		log->hashes = realloc(log->hashes, log->room * sizeof(uint64_t));
		if (log->segments == NULL || log->hashes == NULL)
			abort();
	}
	log->segments[log->n] = segment;
	log->hashes[log->n] = hash;
	log->n++;
}

static void
log_free(Log *log)
{
	free(log->segments);
	free(log->hashes);
	memset(log, 0, sizeof(*log));
}

/*
 * Adds a key as the index adds it, logging it when it takes room: a chain
 * skips a key it holds, and its last segment grows when full (bf_filter_add
 * takes nothing then); a filter of fixed size takes every key.
 */
static void
index_add(TestFilter *index, Log *log, uint64_t hash)
{
	if (bf_is_chain(&index->header) && bf_filter_test(index->value, &index->header, hash))
		return;
	while (bf_filter_add(index->value, index->len, &index->header, &hash, 1, &sizing_memo) == 0)
		if (!grow(index))
			abort();
	log_add(log, index->header.nsegments - 1, hash);
}

static void
index_add_keys(TestFilter *index, Log *log, uint64_t first, uint64_t count)
{
	for (uint64_t key = first; key < first + count; key++)
		index_add(index, log, key_hash(key, index->header.seed));
}

/* The delta of a log, for a filter of header's parameters (malloc'd). */
static uint8_t *
write_delta(const BfHeader *header, uint32_t nsegments, const Log *log, size_t *len)
{
	uint32_t	nruns = 0;
	uint8_t    *out;
	BfDeltaWriter writer;

	for (size_t i = 0; i < log->n; i++)
		if (i == 0 || log->segments[i] != log->segments[i - 1])
			nruns++;
	out = checked_malloc(bf_delta_bytes(nruns, log->n));
	bf_delta_start(&writer, out, header, nsegments);
	for (size_t i = 0; i < log->n; i++)
		bf_delta_add(&writer, log->segments[i], log->hashes[i]);
	*len = bf_delta_finish(&writer);
	if (*len != bf_delta_bytes(nruns, log->n))
		abort();
	return out;
}

/* Checks, then grows the copy's memory and applies, as a client does. */
static BfStatus
apply(TestFilter *copy, const uint8_t *delta, size_t delta_len)
{
	size_t		new_len = 0;
	BfStatus	status = bf_delta_check(copy->value, copy->len, &copy->header,
										delta, delta_len, &new_len, &sizing_memo);

	if (status != BF_OK)
		return status;
	copy->value = realloc(copy->value, new_len);
	if (copy->value == NULL)
		abort();
	bf_delta_apply(copy->value, copy->len, new_len, &copy->header, delta, delta_len, &sizing_memo, NULL);
	copy->len = new_len;
	return BF_OK;
}

/* Whether the copy validates as it is, its header as bf_validate reads it. */
static bool
validates(const TestFilter *f)
{
	BfHeader	decoded;

	return bf_validate(f->value, f->len, &decoded, &sizing_memo) == BF_OK &&
		same_header(&decoded, &f->header);
}

static bool
holds_log(const TestFilter *f, const Log *log)
{
	for (size_t i = 0; i < log->n; i++)
		if (!bf_filter_test(f->value, &f->header, log->hashes[i]))
			return false;
	return true;
}

/* Rewrites a mutated delta's checksum, so that a later check sees the change. */
static void
rechecksum(uint8_t *delta, size_t len)
{
	bf_store_le32(delta + 44, bf_delta_checksum(delta, len));
}

/* ---------------------------------------------------------------------
 * The format
 * ---------------------------------------------------------------------
 */

static void
test_format(void)
{
	TestFilter	f = new_chain(1000, 0.01, 4, UINT64_C(0x0102030405060708));
	uint8_t		out[256];
	uint8_t		covered[256];
	BfDeltaWriter writer;
	size_t		len;
	uint64_t	fpr_bits;
	bool		fields;

	f.header.identity.kind = BF_KIND_OTHER;
	f.header.identity.tag = 0xA1B2C3D4;
	bf_delta_start(&writer, out, &f.header, 3);
	bf_delta_add(&writer, 0, UINT64_C(0x1122334455667788));
	bf_delta_add(&writer, 0, 2);
	bf_delta_add(&writer, 2, 3);
	bf_delta_add(&writer, 2, 4);
	bf_delta_add(&writer, 2, 5);
	bf_delta_add(&writer, 1, 6);
	len = bf_delta_finish(&writer);
	check(len == bf_delta_bytes(3, 6) && len == 48 + 3 * 8 + 6 * 8,
		  "format: three runs of six hashes take 48 + 3 * 8 + 6 * 8 bytes, as bf_delta_bytes says");

	memcpy(&fpr_bits, &f.header.fpr, sizeof(fpr_bits));
	fields = out[0] == 'B' && out[1] == 'D' && out[2] == 1 && out[3] == 0 &&
		out[4] == 3 && out[5] == 0 && out[6] == 0 && out[7] == 0 &&
		out[8] == 0x08 && out[15] == 0x01 &&
		out[16] == (1000 & 0xff) && out[17] == (1000 >> 8) && out[23] == 0;
	for (int i = 0; i < 8; i++)
		fields = fields && out[24 + i] == (uint8_t) (fpr_bits >> (8 * i));
	fields = fields && out[32] == BF_KIND_OTHER && out[33] == 4 && out[34] == BF_FORMAT_VERSION &&
		out[35] == BF_LAYOUT_CHAINED && out[36] == 0xD4 && out[39] == 0xA1 &&
		out[40] == 3 && out[41] == 0 && out[42] == 0 && out[43] == 0;
	check(fields, "format: header fields at delta.h's offsets, little-endian");

	fields = out[48] == 0 && out[52] == 2 && out[56] == 0x88 && out[63] == 0x11 &&
		out[64] == 2 &&
		out[72] == 2 && out[76] == 3 && out[80] == 3 && out[88] == 4 && out[96] == 5 &&
		out[104] == 1 && out[108] == 1 && out[112] == 6;
	check(fields, "format: runs of (segment, count, hashes), a new run at each change of segment");

	memcpy(covered, out, 44);
	memcpy(covered + 44, out + 48, len - 48);
	check(bf_load_le32(out + 44) == (uint32_t) XXH3_64bits(covered, len - 4) &&
		  bf_load_le32(out + 44) == (uint32_t) bf_hash(covered, len - 4, 0),
		  "format: the checksum is the low half of XXH3-64 of bytes 0..43 and 48..end");

	bf_delta_start(&writer, out, &f.header, 1);
	check(bf_delta_finish(&writer) == 48 && bf_load_le32(out + 40) == 0 &&
		  bf_delta_bytes(0, 0) == 48,
		  "format: a delta of nothing is the 48-byte header, zero runs");

	{
		TestFilter	fixed = new_fixed(100, 0.01, 9);

		fixed.header.version = 1;
		bf_delta_start(&writer, out, &fixed.header, 1);
		bf_delta_finish(&writer);
		check(out[33] == 0 && out[34] == 1 && out[35] == BF_LAYOUT_BLOCKED512 &&
			  bf_load_le32(out + 4) == 1,
			  "format: a filter of fixed size has growth 0 and one segment; the filter's version is kept");
		free(fixed.value);
	}
	free(f.value);
}

/* ---------------------------------------------------------------------
 * Round trips
 * ---------------------------------------------------------------------
 */

static void
test_fixed_round_trip(void)
{
	TestFilter	index = new_fixed(1000, 0.01, 42);
	TestFilter	copy = clone(&index);
	TestFilter	direct = clone(&index);
	Log			log = {0};
	uint8_t    *delta;
	size_t		len;
	uint64_t   *hashes = checked_malloc(1500 * sizeof(uint64_t));

	index_add_keys(&index, &log, 1, 500);
	delta = write_delta(&index.header, 1, &log, &len);
	check(apply(&copy, delta, len) == BF_OK && same_filter(&copy, &index),
		  "fixed: 500 keys through a delta make the index's filter byte for byte");
	for (size_t i = 0; i < 500; i++)
		hashes[i] = key_hash(i + 1, 42);
	bf_filter_add(direct.value, direct.len, &direct.header, hashes, 500, &sizing_memo);
	check(same_filter(&copy, &direct) && copy.header.inserted == 500,
		  "fixed: ... and the filter bf_filter_add makes of the same hashes, inserted 500");
	check(validates(&copy) && holds_log(&copy, &log), "fixed: the copy validates and finds every key");
	free(delta);

	/* past capacity: a filter of fixed size overfills, as the index does */
	log_free(&log);
	index_add_keys(&index, &log, 501, 1000);
	delta = write_delta(&index.header, 1, &log, &len);
	check(apply(&copy, delta, len) == BF_OK && same_filter(&copy, &index) &&
		  copy.header.inserted == 1500 && validates(&copy),
		  "fixed: a second delta, past capacity, likewise (inserted 1500)");
	free(delta);

	/* a delta of nothing changes nothing */
	log_free(&log);
	delta = write_delta(&index.header, 1, &log, &len);
	check(len == BF_DELTA_HEADER_SIZE && apply(&copy, delta, len) == BF_OK &&
		  same_filter(&copy, &index),
		  "fixed: an empty delta (zero runs) leaves the copy as it was");
	free(delta);

	free(index.value);
	free(copy.value);
	free(direct.value);
	free(hashes);
	log_free(&log);
}

/*
 * A chain followed delta by delta while it grows, and a second copy that
 * lags and takes all the keys in one delta: both equal the index after
 * every step.
 */
static void
test_chain_round_trip(uint64_t capacity, double fpr, uint8_t growth, uint64_t seed)
{
	TestFilter	index = new_chain(capacity, fpr, growth, seed);
	TestFilter	copy = clone(&index);
	TestFilter	lagging = clone(&index);
	Log			all = {0};
	uint64_t	first = 0;
	bool		equal = true;
	bool		valid = true;
	bool		found = true;
	bool		accepted = true;
	uint32_t	steps = 0;
	char		what[200];
	static const uint64_t batches[] = {1, 0, 10, 300, 2, 1500, 0, 4000, 7};

	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++)
	{
		Log			log = {0};
		uint8_t    *delta;
		size_t		len;
		uint64_t	count = batches[b] * capacity / 100 + batches[b];

		index_add_keys(&index, &log, first, count);
		first += count;
		for (size_t i = 0; i < log.n; i++)
			log_add(&all, log.segments[i], log.hashes[i]);
		delta = write_delta(&index.header, index.header.nsegments, &log, &len);
		accepted = accepted && apply(&copy, delta, len) == BF_OK;
		equal = equal && same_filter(&copy, &index);
		valid = valid && validates(&copy);
		found = found && holds_log(&copy, &all);
		steps++;
		free(delta);
		log_free(&log);
	}
	snprintf(what, sizeof(what),
			 "chain (%llu, %g, growth %u): %u deltas accepted, the copy grows to %u segments",
			 (unsigned long long) capacity, fpr, growth, steps, index.header.nsegments);
	check(accepted && copy.header.nsegments == index.header.nsegments &&
		  index.header.nsegments >= 3, what);
	snprintf(what, sizeof(what),
			 "chain (%llu, %g, growth %u): after every delta the copy is the index's filter byte for byte",
			 (unsigned long long) capacity, fpr, growth);
	check(equal, what);
	check(valid && found, "chain: ... validates and finds every key logged so far");

	{
		uint8_t    *delta;
		size_t		len;

		delta = write_delta(&index.header, index.header.nsegments, &all, &len);
		check(apply(&lagging, delta, len) == BF_OK && same_filter(&lagging, &index),
			  "chain: a copy of the first segment takes all of it in one delta, to the same bytes");
		free(delta);
	}

	free(index.value);
	free(copy.value);
	free(lagging.value);
	log_free(&all);
}

/*
 * Segments the index appended before any key went to them arrive empty,
 * and keys may go to an older segment (an insert whose cache had not yet
 * seen the new segment): each hash counts in its own run's segment.
 */
static void
test_chain_runs_anywhere(void)
{
	TestFilter	copy = new_chain(50, 0.01, 2, 77);
	TestFilter	direct = clone(&copy);
	Log			log = {0};
	uint8_t    *delta;
	size_t		len;
	BfSegment	segments[4];
	uint64_t	key = 0;
	static const uint32_t order[] = {0, 0, 2, 2, 2, 0, 1, 2, 0};
	bool		counts;

	while (direct.header.nsegments < 4)
		grow(&direct);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		for (int j = 0; j < 5; j++)
			log_add(&log, order[i], key_hash(key++, 77));
	delta = write_delta(&copy.header, 4, &log, &len);
	check(apply(&copy, delta, len) == BF_OK && copy.header.nsegments == 4 &&
		  copy.len == direct.len && validates(&copy),
		  "chain: a delta of 4 segments grows a copy of 1 to 4, the last one empty");

	/* the same by hand: each hash into its segment's bits, counted there */
	bf_segment_first(direct.value, &direct.header, &segments[0]);
	for (uint32_t i = 1; i < 4; i++)
	{
		segments[i] = segments[i - 1];
		bf_segment_next(direct.value, &direct.header, &segments[i]);
	}
	for (size_t i = 0; i < log.n; i++)
	{
		BfSegment  *s = &segments[log.segments[i]];

		bf_block_add(direct.value + s->bits +
					 (size_t) bf_block_of(log.hashes[i], s->nblocks) * BF_BLOCK_BYTES,
					 log.hashes[i], s->k);
		s->inserted++;
		direct.header.inserted++;
	}
	for (uint32_t i = 0; i < 4; i++)
		bf_segment_store_inserted(direct.value, &segments[i]);
	bf_seal(direct.value, direct.len, &direct.header);	/* bits set by hand */
	check(same_filter(&copy, &direct),
		  "chain: runs to older and newer segments set the bits and counts of their own segment");
	bf_segment_first(copy.value, &copy.header, &segments[0]);
	counts = segments[0].inserted == 20;
	bf_segment_next(copy.value, &copy.header, &segments[0]);
	counts = counts && segments[0].inserted == 5;
	bf_segment_next(copy.value, &copy.header, &segments[0]);
	counts = counts && segments[0].inserted == 20;
	bf_segment_next(copy.value, &copy.header, &segments[0]);
	counts = counts && segments[0].inserted == 0 && copy.header.inserted == 45;
	check(counts && holds_log(&copy, &log),
		  "chain: segments count 20, 5, 20 and 0 keys, the header 45, and every key is found");
	free(delta);
	free(copy.value);
	free(direct.value);
	log_free(&log);
}

/* A version 1 filter of fixed size follows its index as a version 2 one does. */
static void
test_version1(void)
{
	TestFilter	index = new_fixed(200, 0.05, 5);
	TestFilter	copy;
	Log			log = {0};
	uint8_t    *delta;
	size_t		len;

	index.header.version = 1;
	bf_write_header(index.value, &index.header);
	copy = clone(&index);
	index_add_keys(&index, &log, 0, 100);
	delta = write_delta(&index.header, 1, &log, &len);
	check(apply(&copy, delta, len) == BF_OK && same_filter(&copy, &index) && validates(&copy) &&
		  copy.header.version == 1,
		  "version 1: a version 1 copy takes its index's delta and stays version 1");
	free(delta);
	free(index.value);
	free(copy.value);
	log_free(&log);
}

/* Counts stop at the maximum, as everywhere in the core. */
static void
test_counts_saturate(void)
{
	TestFilter	copy = new_fixed(100, 0.01, 1);
	Log			log = {0};
	uint8_t    *delta;
	size_t		len;

	copy.header.inserted = UINT64_MAX - 1;
	bf_write_header(copy.value, &copy.header);
	for (uint64_t key = 0; key < 3; key++)
		log_add(&log, 0, key_hash(key, 1));
	delta = write_delta(&copy.header, 1, &log, &len);
	check(apply(&copy, delta, len) == BF_OK && copy.header.inserted == UINT64_MAX &&
		  validates(&copy),
		  "counts: an inserted count near the maximum saturates, never wraps");
	free(delta);
	free(copy.value);
	log_free(&log);
}

/* ---------------------------------------------------------------------
 * Refusals
 * ---------------------------------------------------------------------
 */

/*
 * Whether bf_delta_check gives status for delta against copy, the copy
 * untouched (check only reads it; a caller applies only after BF_OK) and,
 * on a refusal, *new_len too.
 */
static bool
refused(const TestFilter *copy, const uint8_t *delta, size_t len, BfStatus status)
{
	TestFilter	before = clone(copy);
	size_t		new_len = 12345;
	BfStatus	got = bf_delta_check(copy->value, copy->len, &copy->header, delta, len,
									 &new_len, &sizing_memo);
	bool		ok = got == status && same_filter(&before, copy) &&
		(status == BF_OK || new_len == 12345);

	if (got != status)
		printf("# expected status %d (%s), got %d (%s)\n", status, bf_status_message(status),
			   got, bf_status_message(got));
	free(before.value);
	return ok;
}

/* Whether byte at of a well-formed delta is in one of its runs' counts. */
static bool
is_count_byte(const uint8_t *delta, size_t len, size_t at)
{
	size_t		run = BF_DELTA_HEADER_SIZE;

	while (run < len)
	{
		if (at >= run + 4 && at < run + 8)
			return true;
		run += BF_DELTA_RUN_HEADER_SIZE + (size_t) bf_load_le32(delta + run + 4) * 8;
	}
	return false;
}

/* A copy of delta with one byte changed, optionally re-checksummed. */
static uint8_t *
with_byte(const uint8_t *delta, size_t len, size_t at, uint8_t byte, bool fix_checksum)
{
	uint8_t    *m = checked_malloc(len);

	memcpy(m, delta, len);
	m[at] = byte;
	if (fix_checksum)
		rechecksum(m, len);
	return m;
}

/* A copy of delta with a 32-bit field changed and the checksum rewritten. */
static uint8_t *
with_u32(const uint8_t *delta, size_t len, size_t at, uint32_t value)
{
	uint8_t    *m = checked_malloc(len);

	memcpy(m, delta, len);
	bf_store_le32(m + at, value);
	rechecksum(m, len);
	return m;
}

/* A one-run delta of a few keys, for a filter of header's parameters. */
static uint8_t *
delta_for(const BfHeader *header, uint32_t nsegments, uint32_t segment, size_t *len)
{
	Log			log = {0};
	uint8_t    *delta;

	for (uint64_t key = 0; key < 4; key++)
		log_add(&log, segment, key_hash(key, header->seed));
	delta = write_delta(header, nsegments, &log, len);
	log_free(&log);
	return delta;
}

static void
test_damage(void)
{
	TestFilter	index = new_chain(100, 0.01, 2, 3);
	TestFilter	copy = clone(&index);
	Log			log = {0};
	uint8_t    *delta;
	uint8_t    *m;
	size_t		len;
	bool		all;
	size_t		runs_at;

	index_add_keys(&index, &log, 0, 400);
	delta = write_delta(&index.header, index.header.nsegments, &log, &len);
	check(index.header.nsegments >= 3 && refused(&copy, delta, len, BF_OK),
		  "damage: the undamaged delta, which grows the copy, is accepted");

	/*
	 * A flipped bit anywhere past magic and version: a checksum error, but
	 * in nruns or a run's count, where the runs no longer fill the delta.
	 */
	all = true;
	for (size_t at = 4; at < len; at++)
	{
		BfStatus	expected = BF_ERR_DELTA_CHECKSUM;

		if (at >= 44 && at < 48)
			continue;			/* the checksum itself, below */
		if ((at >= 40 && at < 44) || is_count_byte(delta, len, at))
			expected = BF_ERR_DELTA_LENGTH;
		m = with_byte(delta, len, at, delta[at] ^ (uint8_t) (1u << (at % 8)), false);
		all = all && refused(&copy, m, len, expected);
		free(m);
	}
	check(all, "damage: every flipped bit of the header or the runs is a checksum error "
		  "(a length error in nruns or a count), the copy untouched");

	m = with_byte(delta, len, 44, delta[44] ^ 1, false);
	check(refused(&copy, m, len, BF_ERR_DELTA_CHECKSUM), "damage: a changed checksum is refused");
	free(m);

	check(refused(&copy, delta, len - 1, BF_ERR_DELTA_LENGTH) &&
		  refused(&copy, delta, len - 8, BF_ERR_DELTA_LENGTH) &&
		  refused(&copy, delta, 48, BF_ERR_DELTA_LENGTH) &&
		  refused(&copy, delta, 47, BF_ERR_DELTA_LENGTH) &&
		  refused(&copy, delta, 0, BF_ERR_DELTA_LENGTH),
		  "damage: truncated by a byte, a hash, to the header, into the header, to nothing: a length error");

	m = checked_malloc(len + 8);
	memcpy(m, delta, len);
	memset(m + len, 0, 8);
	check(refused(&copy, m, len + 1, BF_ERR_DELTA_LENGTH) &&
		  refused(&copy, m, len + 8, BF_ERR_DELTA_LENGTH),
		  "damage: bytes after the last run are a length error");
	rechecksum(m, len + 8);
	check(refused(&copy, m, len + 8, BF_ERR_DELTA_LENGTH),
		  "damage: ... with the checksum recomputed over them too");
	free(m);

	m = with_u32(delta, len, 40, bf_load_le32(delta + 40) + 1);
	check(refused(&copy, m, len, BF_ERR_DELTA_LENGTH), "damage: one run more than there are");
	free(m);
	m = with_u32(delta, len, 40, UINT32_MAX);
	check(refused(&copy, m, len, BF_ERR_DELTA_LENGTH), "damage: nruns 2^32 - 1");
	free(m);
	m = with_u32(delta, len, 40, bf_load_le32(delta + 40) - 1);
	check(refused(&copy, m, len, BF_ERR_DELTA_LENGTH), "damage: one run fewer than there are");
	free(m);
	m = with_u32(delta, len, 52, UINT32_MAX);
	check(refused(&copy, m, len, BF_ERR_DELTA_LENGTH),
		  "damage: a run's count past the end of the delta");
	free(m);

	m = with_byte(delta, len, 0, 'X', true);
	check(refused(&copy, m, len, BF_ERR_DELTA_MAGIC), "damage: a bad magic");
	free(m);
	m = with_byte(delta, len, 1, 'F', true);
	check(refused(&copy, m, len, BF_ERR_DELTA_MAGIC), "damage: a filter's magic \"BF\" is no delta's");
	free(m);
	m = with_byte(delta, len, 2, 2, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_VERSION), "damage: delta format version 2");
	free(m);
	m = with_byte(delta, len, 2, 0, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_VERSION), "damage: delta format version 0");
	free(m);

	/* sound checksums over inconsistent headers */
	m = with_byte(delta, len, 3, 1, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: a reserved byte set");
	free(m);
	m = with_u32(delta, len, 4, 0);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: a chain of zero segments");
	free(m);
	m = with_u32(delta, len, 4, BF_MAX_SEGMENTS + 1);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: a chain of 33 segments");
	free(m);
	m = with_byte(delta, len, 33, 1, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: a chain of growth 1");
	free(m);
	m = with_byte(delta, len, 33, 17, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: a chain of growth 17");
	free(m);
	m = with_byte(delta, len, 35, 3, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: an unknown layout");
	free(m);
	m = with_byte(delta, len, 32, BF_KIND_NONE, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: key kind none (an index always has its kind)");
	free(m);
	m = with_byte(delta, len, 32, BF_KIND_LAST + 1, true);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: an unknown key kind");
	free(m);
	m = with_u32(delta, len, 36, 5);
	check(refused(&copy, m, len, BF_ERR_DELTA_HEADER), "header: a key tag for kind number");
	free(m);
	{
		uint8_t    *n;

		/* layout 1 with growth or segments */
		m = with_byte(delta, len, 35, BF_LAYOUT_BLOCKED512, true);
		check(refused(&copy, m, len, BF_ERR_DELTA_HEADER),
			  "header: a filter of fixed size with a growth factor");
		n = with_byte(m, len, 33, 0, true);
		check(refused(&copy, n, len, BF_ERR_DELTA_HEADER),
			  "header: a filter of fixed size with several segments");
		free(n);
		free(m);
	}

	/* runs */
	runs_at = 48;
	m = with_u32(delta, len, runs_at, index.header.nsegments);
	check(refused(&copy, m, len, BF_ERR_DELTA_RUN),
		  "runs: a run for a segment past the delta's segments");
	free(m);
	m = with_u32(delta, len, runs_at, UINT32_MAX);
	check(refused(&copy, m, len, BF_ERR_DELTA_RUN), "runs: a run for segment 2^32 - 1");
	free(m);
	{
		/* a run of zero hashes, spliced in before the first */
		uint8_t    *z = checked_malloc(len + 8);

		memcpy(z, delta, 48);
		bf_store_le32(z + 48, 0);
		bf_store_le32(z + 52, 0);
		memcpy(z + 56, delta + 48, len - 48);
		bf_store_le32(z + 40, bf_load_le32(delta + 40) + 1);
		rechecksum(z, len + 8);
		check(refused(&copy, z, len + 8, BF_ERR_DELTA_RUN), "runs: a run of zero hashes");
		free(z);
	}

	free(delta);
	free(index.value);
	free(copy.value);
	log_free(&log);
}

static void
test_mismatch(void)
{
	TestFilter	chain = new_chain(100, 0.01, 2, 11);
	TestFilter	fixed = new_fixed(100, 0.01, 11);
	BfHeader	other;
	uint8_t    *delta;
	size_t		len;
	bool		all = true;

	struct
	{
		const TestFilter *copy;
		const char *what;
	}			copies[] = {{&chain, "chain"}, {&fixed, "fixed"}};

	for (int c = 0; c < 2; c++)
	{
		const TestFilter *copy = copies[c].copy;
		char		what[160];

		for (int field = 0; field < 9; field++)
		{
			other = copy->header;
			switch (field)
			{
				case 0:
					other.seed++;
					break;
				case 1:
					other.capacity++;
					break;
				case 2:
					other.fpr = nextafter(other.fpr, 1.0);
					break;
				case 3:
					other.identity.kind = BF_KIND_TEXT;
					break;
				case 4:
					other.identity.kind = BF_KIND_OTHER;
					other.identity.tag = 7;
					break;
				case 5:
					other.version = 1;
					break;
				case 6:
					/* the other layout, with what it needs */
					if (bf_is_chain(&other))
					{
						other.layout = BF_LAYOUT_BLOCKED512;
						other.growth = 0;
					}
					else
					{
						other.layout = BF_LAYOUT_CHAINED;
						other.growth = 2;
					}
					break;
				case 7:
					if (!bf_is_chain(&other))
						continue;
					other.growth = 4;
					break;
				case 8:
					/* the copy's very own parameters: accepted */
					break;
			}
			delta = delta_for(&other, 1, 0, &len);
			snprintf(what, sizeof(what), "mismatch: %s copy, field %d", copies[c].what, field);
			if (!refused(copy, delta, len, field == 8 ? BF_OK : BF_ERR_DELTA_MISMATCH))
			{
				all = false;
				printf("# %s\n", what);
			}
			free(delta);
		}
	}
	check(all, "mismatch: a delta of another seed, capacity, rate, kind, key tag, format "
		  "version, layout or growth is refused, the copy untouched; its own is accepted");

	{
		TestFilter	kindless = clone(&fixed);

		kindless.header.identity.kind = BF_KIND_NONE;
		delta = delta_for(&fixed.header, 1, 0, &len);
		check(refused(&kindless, delta, len, BF_ERR_DELTA_MISMATCH),
			  "mismatch: a copy of kind none takes no delta");
		free(delta);
		free(kindless.value);
	}

	/* a copy with more segments than the delta: another build of the index */
	grow(&chain);
	grow(&chain);
	delta = delta_for(&chain.header, 2, 0, &len);
	check(refused(&chain, delta, len, BF_ERR_DELTA_MISMATCH),
		  "mismatch: a copy of 3 segments refuses a delta of 2");
	free(delta);
	delta = delta_for(&chain.header, 3, 2, &len);
	check(refused(&chain, delta, len, BF_OK), "mismatch: ... and takes one of 3");
	free(delta);

	free(chain.value);
	free(fixed.value);
}

/*
 * A delta whose segments the copy cannot grow to (past the largest value)
 * gets bf_chain_next's refusal.  bf_delta_check never reads the copy's
 * bytes, so a header and a length stand in for a copy of 100 MB.
 */
static void
test_cannot_grow(void)
{
	BfHeader	header;
	BfSegment	first;
	size_t		len;
	size_t		new_len = 0;
	uint8_t    *delta;
	size_t		delta_len;

	bf_chain_header(100000000, 0.01, 16, &header);
	header.identity.kind = BF_KIND_NUMBER;
	bf_chain_next(&header, BF_HEADER_SIZE, &first, &len, &sizing_memo);
	header.nsegments = 1;
	delta = delta_for(&header, 2, 0, &delta_len);
	check(bf_delta_check(NULL, len, &header, delta, delta_len, &new_len, &sizing_memo) == BF_ERR_TOO_LARGE &&
		  new_len == 0,
		  "growth: a delta of a second segment 16 times a 100M-key first is refused as too large");
	free(delta);
	delta = delta_for(&header, 1, 0, &delta_len);
	check(bf_delta_check(NULL, len, &header, delta, delta_len, &new_len, &sizing_memo) == BF_OK &&
		  new_len == len, "growth: ... one that keeps its one segment is not");
	free(delta);
}

int
main(void)
{
	test_format();
	test_fixed_round_trip();
	test_chain_round_trip(100, 0.01, 2, 0);
	test_chain_round_trip(1000, 0.001, 4, 99);
	test_chain_round_trip(10, 0.1, 16, 12345);
	test_chain_runs_anywhere();
	test_version1();
	test_counts_saturate();
	test_damage();
	test_mismatch();
	test_cannot_grow();
	return unit_result();
}
