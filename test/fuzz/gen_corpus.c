/*-------------------------------------------------------------------------
 *
 * gen_corpus.c
 *	  Writes the fuzzers' seed corpus, using the core's own API, into
 *	  DIR/validate (serialised values), DIR/sizing ((capacity, fpr)
 *	  inputs of fuzz_sizing.c), DIR/qfilter (qfilter values and
 *	  operation sequences for fuzz_qfilter.c) and DIR/delta (a mode byte
 *	  and a delta, for fuzz_delta.c's copies of delta_copies.h).
 *
 *		gen_corpus DIR
 *
 * Chains (layout 2) are grown through bf_filter_add, bf_chain_next and
 * bf_chain_append, as the glue grows them.
 *
 * Seeds are named valid-* and bad-*.  Each is checked against the status
 * the validator must give it, so the generator doubles as a test that the
 * committed seeds mean what their names say; it exits non-zero otherwise.
 * The qfilter operation sequences (ops-*) are not values, so have no
 * verdict; fuzz_qfilter.c checks them when run.sh replays the seeds.
 * Values are small (at most a few blocks): libFuzzer mutates small inputs
 * far faster, and every code path is reached with one or two blocks.
 *
 * The output is deterministic (fixed seeds and keys), so regenerating gives
 * the committed files byte for byte as long as the format is unchanged;
 * run.sh checks exactly that.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"
#include "delta.h"
#include "qfilter.h"
#include "sizing.h"
#include "delta_copies.h"
#include "fuzz_check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SEED_BYTES (BF_HEADER_SIZE + 16 * BF_BLOCK_BYTES)

static const char *out_dir;
static int	written;

static void
write_file(const char *sub, const char *name, const uint8_t *bytes, size_t len)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
	{
		fprintf(stderr, "gen_corpus: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	written++;
}

/* Writes a validate seed after checking the validator's verdict on it. */
static void
emit_value(const char *name, const uint8_t *value, size_t len, BfStatus expected)
{
	BfHeader	header;
	BfStatus	status = bf_validate(value, len, &header, &sizing_memo);

	if (status != expected)
	{
		fprintf(stderr, "gen_corpus: %s: validator says \"%s\", expected \"%s\"\n",
				name, bf_status_message(status), bf_status_message(expected));
		exit(1);
	}
	write_file("validate", name, value, len);
}

/* A fresh header as bloom_empty makes it; k and nblocks from the sizing. */
static BfHeader
sized_header(uint64_t capacity, double fpr, uint64_t seed)
{
	BfSizing	sizing;
	BfHeader	header;

	FUZZ_CHECK(bf_size_for(capacity, fpr, &sizing, &sizing_memo) == BF_OK);
	memset(&header, 0, sizeof(header));
	header.version = BF_FORMAT_VERSION;
	header.layout = BF_LAYOUT_BLOCKED512;
	header.k = sizing.k;
	header.identity.kind = BF_KIND_NONE;
	header.nblocks = sizing.nblocks;
	header.seed = seed;
	header.capacity = capacity;
	header.fpr = fpr;
	return header;
}

/* Adds count integer keys as bloom_add does for int8: 8 LE bytes, hashed. */
static void
add_keys(uint8_t *value, BfHeader *header, BfKeyKind kind, uint64_t first,
		 uint64_t count)
{
	for (uint64_t key = first; key < first + count; key++)
	{
		uint8_t		bytes[8];
		uint64_t	hash;

		for (int i = 0; i < 8; i++)
			bytes[i] = (uint8_t) (key >> (8 * i));
		hash = bf_hash(bytes, sizeof(bytes), header->seed);
		bf_add_hashes(bf_bits(value), header->nblocks, header->k, &hash, 1);
	}
	header->identity.kind = kind;
	header->inserted += count;
	bf_seal(value, bf_value_bytes(header->nblocks), header);
}

/* Empty filters, as bloom_empty makes them, at several sizes and rates. */
static void
valid_empty(uint8_t *value)
{
	static const struct
	{
		const char *name;
		uint64_t	capacity;
		double		fpr;
	}			cases[] = {
		{"valid-empty-1-0.01", 1, 0.01},
		{"valid-empty-100-0.01", 100, 0.01},
		{"valid-empty-50-0.5", 50, 0.5},
		{"valid-empty-20-1e-6", 20, 1e-6},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		BfHeader	header = sized_header(cases[i].capacity, cases[i].fpr, 0);

		FUZZ_CHECK(bf_value_bytes(header.nblocks) <= MAX_SEED_BYTES);
		bf_init(value, &header, NULL);
		emit_value(cases[i].name, value, bf_value_bytes(header.nblocks), BF_OK);
	}
}

/* Filters holding values: each key kind family, overfilled, full, extremes. */
static void
valid_filled(uint8_t *value)
{
	BfHeader	header;
	size_t		len;

	header = sized_header(100, 0.01, 0);
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	add_keys(value, &header, BF_KIND_NUMBER, 1, 100);
	emit_value("valid-number-100", value, len, BF_OK);

	header = sized_header(30, 0.001, UINT64_C(0x9e3779b97f4a7c15));
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	add_keys(value, &header, BF_KIND_TEXT, 1000, 30);
	emit_value("valid-text-seeded", value, len, BF_OK);

	header = sized_header(10, 0.05, 7);
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	header.identity.tag = 0x2468ace1;	/* OTHER is the one kind with a tag */
	add_keys(value, &header, BF_KIND_OTHER, 0, 10);
	emit_value("valid-other-tagged", value, len, BF_OK);

	header = sized_header(10, 0.01, 0);
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	add_keys(value, &header, BF_KIND_FLOAT, 0, 400);
	emit_value("valid-overfilled", value, len, BF_OK);

	/* Every bit set: the count estimate is its finite floor, the rate 1. */
	header = sized_header(1, 0.01, 0);
	header.identity.kind = BF_KIND_UUID;
	header.inserted = UINT64_MAX;
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	memset(bf_bits(value), 0xFF, len - BF_HEADER_SIZE);
	bf_seal(value, len, &header);
	emit_value("valid-full-max-inserted", value, len, BF_OK);

	/* The validator's range ends, not reachable through bf_size_for. */
	header = sized_header(1, 0.01, 0);
	header.k = 1;
	header.capacity = UINT64_MAX;
	header.fpr = 0.5;
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	add_keys(value, &header, BF_KIND_BOOL, 0, 2);
	emit_value("valid-k1-max-capacity", value, len, BF_OK);

	header = sized_header(1, 0.01, 0);
	header.k = BF_MAX_K;
	header.fpr = 4.9406564584124654e-324;	/* smallest subnormal */
	header.nblocks = 3;
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header, NULL);
	add_keys(value, &header, BF_KIND_TIMESTAMPTZ, 0, 5);
	emit_value("valid-k32-subnormal-fpr", value, len, BF_OK);
}

/* Writes value with a field changed, the header checksum recomputed. */
static void
emit_changed_header(const char *name, BfHeader header, BfStatus expected)
{
	uint8_t		value[BF_HEADER_SIZE + BF_BLOCK_BYTES] = {0};

	header.body_check = 0;		/* a zero body */
	bf_write_header(value, &header);
	emit_value(name, value, sizeof(value), expected);
}

/* Damaged values, one per validator error. */
static void
invalid(uint8_t *value)
{
	BfHeader	base = sized_header(1, 0.01, 0);
	BfHeader	h;
	size_t		len = bf_value_bytes(base.nblocks);

	FUZZ_CHECK(base.nblocks == 1);
	bf_init(value, &base, NULL);
	add_keys(value, &base, BF_KIND_NUMBER, 5, 1);

	emit_value("bad-empty-input", value, 0, BF_ERR_TRUNCATED);
	emit_value("bad-truncated-header", value, BF_HEADER_SIZE - 1, BF_ERR_TRUNCATED);
	emit_value("bad-truncated-bits", value, len - 1, BF_ERR_LENGTH);
	emit_value("bad-extra-block", value, len + BF_BLOCK_BYTES, BF_ERR_LENGTH);

	value[1] = 'G';
	emit_value("bad-magic", value, len, BF_ERR_MAGIC);
	value[1] = BF_MAGIC_1;

	/* A flipped bit of the seed: caught by the checksum alone. */
	value[16] ^= 0x10;
	emit_value("bad-checksum-seed-flip", value, len, BF_ERR_BODY_CHECKSUM);
	value[16] ^= 0x10;
	value[52] = 1;
	emit_value("bad-reserved-tail", value, len, BF_ERR_RESERVED);
	value[52] = 0;

	h = base;
	h.version = BF_FORMAT_VERSION + 1;
	emit_changed_header("bad-version", h, BF_ERR_VERSION);
	h = base;
	h.version = 1;
	emit_changed_header("valid-version-1", h, BF_OK);
	h = base;
	h.layout = 0;
	emit_changed_header("bad-layout", h, BF_ERR_LAYOUT);
	h = base;
	h.k = 0;
	emit_changed_header("bad-k-0", h, BF_ERR_K);
	h = base;
	h.k = BF_MAX_K + 1;
	emit_changed_header("bad-k-33", h, BF_ERR_K);
	h = base;
	h.identity.kind = BF_KIND_LAST + 1;
	emit_changed_header("bad-kind", h, BF_ERR_KIND);
	h = base;
	h.identity.tag = 1;
	emit_changed_header("bad-tag-on-number", h, BF_ERR_KIND);
	h = base;
	h.nblocks = 0;
	emit_changed_header("bad-nblocks-0", h, BF_ERR_NBLOCKS);
	h = base;
	h.nblocks = BF_MAX_BLOCKS + 1;
	emit_changed_header("bad-nblocks-huge", h, BF_ERR_NBLOCKS);
	h = base;
	h.nblocks = 2;
	emit_changed_header("bad-nblocks-vs-length", h, BF_ERR_LENGTH);
	h = base;
	h.capacity = 0;
	emit_changed_header("bad-capacity-0", h, BF_ERR_CAPACITY);
	h = base;
	h.fpr = 0.0;
	emit_changed_header("bad-fpr-0", h, BF_ERR_FPR);
	h = base;
	h.fpr = 0.5000000000000001;
	emit_changed_header("bad-fpr-above-half", h, BF_ERR_FPR);
	h = base;
	h.fpr = NAN;
	emit_changed_header("bad-fpr-nan", h, BF_ERR_FPR);
	h = base;
	h.fpr = -0.01;
	emit_changed_header("bad-fpr-negative", h, BF_ERR_FPR);
	h = base;
	h.identity.kind = BF_KIND_NONE;
	h.inserted = 1;
	emit_changed_header("bad-empty-with-count", h, BF_ERR_EMPTY_HAS_BITS);

	/* Only the kind byte damaged (checksum fixed): bits but no kind. */
	h = base;
	h.identity.kind = BF_KIND_NONE;
	h.inserted = 0;
	bf_write_header(value, &h);
	emit_value("bad-empty-with-bits", value, len, BF_ERR_EMPTY_HAS_BITS);
}

/* ---------------------------------------------------------------------
 * Chains (layout 2), grown through the core as BloomAddHashes grows them.
 * ---------------------------------------------------------------------
 */

#define MAX_CHAIN_SEED_BYTES 4096

typedef struct SeedChain
{
	uint8_t		value[MAX_CHAIN_SEED_BYTES + BF_BLOCK_BYTES];
	size_t		len;
	BfHeader	header;
} SeedChain;

static void
chain_grow(SeedChain *chain)
{
	BfSegment	next;
	size_t		new_len;

	FUZZ_CHECK(bf_chain_next(&chain->header, chain->len, &next, &new_len, &sizing_memo) == BF_OK);
	FUZZ_CHECK(new_len <= MAX_CHAIN_SEED_BYTES);
	bf_chain_append(chain->value, &chain->header, chain->len, &next, NULL);
	chain->len = new_len;
}

/* A new chain of one empty segment, as bloom_empty makes it with a growth. */
static void
chain_start(SeedChain *chain, uint64_t capacity, double fpr, uint8_t growth,
			uint64_t seed)
{
	FUZZ_CHECK(bf_chain_header(capacity, fpr, growth, &chain->header) == BF_OK);
	chain->header.seed = seed;
	chain->len = BF_HEADER_SIZE;
	chain_grow(chain);
}

/* Adds integer keys one by one, growing when bf_filter_add asks to. */
static void
chain_add_keys(SeedChain *chain, BfKeyKind kind, uint64_t first, uint64_t count)
{
	chain->header.identity.kind = kind;
	for (uint64_t key = first; key < first + count; key++)
	{
		uint8_t		bytes[8];
		uint64_t	hash;

		for (int i = 0; i < 8; i++)
			bytes[i] = (uint8_t) (key >> (8 * i));
		hash = bf_hash(bytes, sizeof(bytes), chain->header.seed);
		while (bf_filter_add(chain->value, chain->len, &chain->header, &hash, 1, &sizing_memo) == 0)
			chain_grow(chain);
	}
}

/* Whether the chain's last segment has taken its capacity. */
static bool
chain_last_full(const SeedChain *chain)
{
	BfSegment	last;

	bf_segment_last(chain->value, &chain->header, &last);
	return last.inserted >= last.capacity;
}

static void
valid_chains(SeedChain *chain)
{
	uint64_t	key;

	chain_start(chain, 10, 0.01, 2, 0);
	emit_value("valid-chain-empty-10-0.01", chain->value, chain->len, BF_OK);

	chain_start(chain, 4, 0.01, 2, 0);
	chain_add_keys(chain, BF_KIND_NUMBER, 0, 20);
	FUZZ_CHECK(chain->header.nsegments == 3);
	emit_value("valid-chain-3-segments", chain->value, chain->len, BF_OK);

	/* The last segment just full: the next value added grows the chain. */
	chain_start(chain, 4, 0.01, 2, 0);
	for (key = 0; chain->header.nsegments < 2 || !chain_last_full(chain); key++)
		chain_add_keys(chain, BF_KIND_NUMBER, key, 1);
	emit_value("valid-chain-last-full", chain->value, chain->len, BF_OK);

	chain_start(chain, 1, 0.1, BF_MAX_GROWTH, 0);
	chain_add_keys(chain, BF_KIND_DATE, 0, 18);
	FUZZ_CHECK(chain->header.nsegments == 3);
	emit_value("valid-chain-growth-16", chain->value, chain->len, BF_OK);

	chain_start(chain, 8, 0.5, 3, UINT64_C(0x9e3779b97f4a7c15));
	chain_add_keys(chain, BF_KIND_TEXT, 1000, 40);
	emit_value("valid-chain-text-seeded", chain->value, chain->len, BF_OK);

	/* The third segment's rate, 6.25e-19, is below the lowest: it stays at 2. */
	chain_start(chain, 1, 5e-18, 2, 0);
	chain_add_keys(chain, BF_KIND_UUID, 0, 12);
	FUZZ_CHECK(chain->header.nsegments == 2 && chain_last_full(chain));
	emit_value("valid-chain-cannot-grow", chain->value, chain->len, BF_OK);

	chain_start(chain, 5, 0.05, 2, 7);
	chain->header.identity.tag = 0x2468ace1;
	chain->header.identity.env_encoding = 6;
	chain->header.identity.env_locale = 0x13572468;
	chain_add_keys(chain, BF_KIND_OTHER, 0, 9);
	emit_value("valid-chain-other-env", chain->value, chain->len, BF_OK);
}

/* Writes the chain with its header rewritten (checksum recomputed). */
static void
emit_changed_chain(const char *name, const SeedChain *chain, BfHeader header,
				   BfStatus expected)
{
	static uint8_t value[MAX_CHAIN_SEED_BYTES];

	memcpy(value, chain->value, chain->len);
	bf_write_header(value, &header);
	emit_value(name, value, chain->len, expected);
}

/* Writes the chain with one byte changed. */
static void
emit_chain_byte(const char *name, const SeedChain *chain, size_t at, uint8_t byte,
				BfStatus expected)
{
	static uint8_t value[MAX_CHAIN_SEED_BYTES];

	memcpy(value, chain->value, chain->len);
	value[at] = byte;
	emit_value(name, value, chain->len, expected);
}

/* Damaged chains, one or more per error of the chained layout. */
static void
invalid_chains(SeedChain *chain)
{
	BfHeader	h;
	BfSegment	last;
	size_t		last_at;

	chain_start(chain, 4, 0.01, 2, 0);
	chain_add_keys(chain, BF_KIND_NUMBER, 0, 20);
	FUZZ_CHECK(chain->header.nsegments == 3);
	bf_segment_last(chain->value, &chain->header, &last);
	last_at = last.bits - BF_SEGMENT_HEADER_SIZE;

	h = chain->header;
	h.k = 1;
	emit_changed_chain("bad-chain-k-1", chain, h, BF_ERR_K);
	h = chain->header;
	h.growth = 1;
	emit_changed_chain("bad-chain-growth-1", chain, h, BF_ERR_GROWTH);
	h.growth = BF_MAX_GROWTH + 1;
	emit_changed_chain("bad-chain-growth-17", chain, h, BF_ERR_GROWTH);
	h = chain->header;
	h.nsegments = 0;
	emit_changed_chain("bad-chain-segments-0", chain, h, BF_ERR_SEGMENTS);
	h.nsegments = BF_MAX_SEGMENTS + 1;
	emit_changed_chain("bad-chain-segments-33", chain, h, BF_ERR_SEGMENTS);
	h.nsegments = 2;
	emit_changed_chain("bad-chain-segments-fewer", chain, h, BF_ERR_LENGTH);
	h = chain->header;
	h.version = 1;
	emit_changed_chain("bad-chain-version-1", chain, h, BF_ERR_LAYOUT);
	h = chain->header;
	h.capacity = 1000;
	emit_changed_chain("bad-chain-capacity-vs-plan", chain, h, BF_ERR_SEGMENT_SIZE);
	h = chain->header;
	h.identity.kind = BF_KIND_NONE;
	h.inserted = 0;
	emit_changed_chain("bad-chain-empty-with-bits", chain, h, BF_ERR_EMPTY_HAS_BITS);

	emit_chain_byte("bad-chain-checksum-seed-flip", chain, 16, 0x10, BF_ERR_BODY_CHECKSUM);
	emit_chain_byte("bad-chain-segment-k-vs-plan", chain, last_at + 4,
					(uint8_t) (last.k + 1), BF_ERR_SEGMENT_SIZE);
	emit_chain_byte("bad-chain-segment-k-0", chain, last_at + 4, 0, BF_ERR_K);
	emit_chain_byte("bad-chain-segment-nblocks-0", chain, last_at, 0, BF_ERR_NBLOCKS);
	emit_chain_byte("bad-chain-segment-nblocks-longer", chain, last_at,
					(uint8_t) (last.nblocks + 1), BF_ERR_LENGTH);
	emit_chain_byte("bad-chain-segment-reserved", chain, last_at + 6, 1, BF_ERR_RESERVED);

	emit_value("bad-chain-truncated", chain->value, chain->len - 1, BF_ERR_LENGTH);
	memset(chain->value + chain->len, 0, BF_BLOCK_BYTES);
	emit_value("bad-chain-extra-block", chain->value, chain->len + BF_BLOCK_BYTES,
			   BF_ERR_LENGTH);
}

/* ---------------------------------------------------------------------
 * Deltas (fuzz_delta.c): a mode byte, then a delta, against the copies
 * of delta_copies.h.  Each seed is checked against bf_delta_check's
 * verdict on it, after the mode's checksum rewrite.
 * ---------------------------------------------------------------------
 */

#define MAX_DELTA_SEED_BYTES 2048

static DeltaCopy delta_copy[DELTA_NCOPIES];
static uint8_t delta_seed[1 + MAX_DELTA_SEED_BYTES + 16];

static void
emit_delta(const char *name, int mode, const uint8_t *delta, size_t len, BfStatus expected)
{
	const DeltaCopy *copy = &delta_copy[mode % DELTA_NCOPIES];
	size_t		new_len;
	BfStatus	status;

	FUZZ_CHECK(len <= MAX_DELTA_SEED_BYTES + 8);
	delta_seed[0] = (uint8_t) mode;
	memcpy(delta_seed + 1, delta, len);
	if ((mode & DELTA_MODE_RECHECKSUM) && len >= BF_DELTA_HEADER_SIZE)
		bf_store_le32(delta_seed + 1 + 44, bf_delta_checksum(delta_seed + 1, len));
	status = bf_delta_check(copy->value, copy->len, &copy->header, delta_seed + 1, len,
							&new_len, &sizing_memo);
	if (status != expected)
	{
		fprintf(stderr, "gen_corpus: %s: delta check says \"%s\", expected \"%s\"\n",
				name, bf_status_message(status), bf_status_message(expected));
		exit(1);
	}
	write_file("delta", name, delta_seed, len + 1);
}

/*
 * A delta for a filter of header's parameters ending at nsegments: count
 * keys from first in each of the segments listed, a run each.
 */
static size_t
write_delta(uint8_t *out, const BfHeader *header, uint32_t nsegments,
			const uint32_t *segments, int nruns, uint64_t first, uint32_t count)
{
	BfDeltaWriter writer;

	FUZZ_CHECK(bf_delta_bytes((uint32_t) nruns, (uint64_t) nruns * count) <=
			   MAX_DELTA_SEED_BYTES);
	bf_delta_start(&writer, out, header, nsegments);
	for (int r = 0; r < nruns; r++)
		for (uint32_t i = 0; i < count; i++)
			bf_delta_add(&writer, segments[r], delta_key_hash(first++, header->seed));
	return bf_delta_finish(&writer);
}

static void
valid_deltas(void)
{
	static uint8_t delta[MAX_DELTA_SEED_BYTES];
	static const uint32_t last_of_3[] = {2};
	static const uint32_t spread[] = {0, 2, 1, 2};
	size_t		len;
	char		name[64];

	for (int i = 0; i < DELTA_NCOPIES; i++)
	{
		const BfHeader *h = &delta_copy[i].header;
		uint32_t	last = h->nsegments - 1;

		len = write_delta(delta, h, h->nsegments, NULL, 0, 0, 0);
		snprintf(name, sizeof(name), "valid-delta-%s-empty", delta_copies[i].name);
		emit_delta(name, i, delta, len, BF_OK);
		len = write_delta(delta, h, h->nsegments, &last, 1, 1000, 10);
		snprintf(name, sizeof(name), "valid-delta-%s-keys", delta_copies[i].name);
		emit_delta(name, i, delta, len, BF_OK);
		snprintf(name, sizeof(name), "valid-delta-%s-keys-rechecksum", delta_copies[i].name);
		emit_delta(name, i | DELTA_MODE_RECHECKSUM, delta, len, BF_OK);
	}

	/* chains grown by the delta, runs to older and newer segments */
	len = write_delta(delta, &delta_copy[1].header, 3, spread, 4, 2000, 5);
	emit_delta("valid-delta-chain1-grow-to-3", 1, delta, len, BF_OK);
	len = write_delta(delta, &delta_copy[1].header, 3, last_of_3, 1, 3000, 30);
	emit_delta("valid-delta-chain1-grow-to-3-last", 1 | DELTA_MODE_RECHECKSUM, delta, len,
			   BF_OK);
	len = write_delta(delta, &delta_copy[3].header, 3, last_of_3, 1, 4000, 12);
	emit_delta("valid-delta-chain16-grow-to-3", 3, delta, len, BF_OK);
	len = write_delta(delta, &delta_copy[2].header, 5, spread, 4, 5000, 3);
	emit_delta("valid-delta-chain3-grow-to-5", 2, delta, len, BF_OK);
}

/* A delta with its header written for other parameters (a sound checksum). */
static void
emit_delta_for(const char *name, int mode, const BfHeader *other, uint32_t nsegments,
			   BfStatus expected)
{
	static uint8_t delta[MAX_DELTA_SEED_BYTES];
	uint32_t	segment = 0;
	size_t		len = write_delta(delta, other, nsegments, &segment, 1, 0, 4);

	emit_delta(name, mode, delta, len, expected);
}

static void
invalid_deltas(void)
{
	static uint8_t delta[MAX_DELTA_SEED_BYTES + 8];
	static const uint32_t spread[] = {0, 2, 1, 2};
	const BfHeader *chain = &delta_copy[1].header;
	const BfHeader *fixed = &delta_copy[0].header;
	BfHeader	h;
	size_t		len = write_delta(delta, chain, 3, spread, 4, 100, 3);
	uint8_t		saved;
	int			fix = DELTA_MODE_RECHECKSUM;

	/* damage before the checksum, or that the checksum sees */
	emit_delta("bad-delta-truncated", 1, delta, len - 1, BF_ERR_DELTA_LENGTH);
	emit_delta("bad-delta-header-only", 1, delta, BF_DELTA_HEADER_SIZE, BF_ERR_DELTA_LENGTH);
	emit_delta("bad-delta-short", 1, delta, 20, BF_ERR_DELTA_LENGTH);
	memset(delta + len, 0, 8);
	emit_delta("bad-delta-trailing", 1 | fix, delta, len + 8, BF_ERR_DELTA_LENGTH);
	saved = delta[60];
	delta[60] ^= 0x40;
	emit_delta("bad-delta-checksum-hash-flip", 1, delta, len, BF_ERR_DELTA_CHECKSUM);
	delta[60] = saved;
	delta[0] = 'X';
	emit_delta("bad-delta-magic", 1, delta, len, BF_ERR_DELTA_MAGIC);
	delta[0] = 'B';
	delta[2] = 2;
	emit_delta("bad-delta-version-2", 1, delta, len, BF_ERR_DELTA_VERSION);
	delta[2] = 1;
	bf_store_le32(delta + 40, 5);
	emit_delta("bad-delta-nruns-more", 1 | fix, delta, len, BF_ERR_DELTA_LENGTH);
	bf_store_le32(delta + 40, 4);

	/* sound checksums (the mode rewrites them) over inconsistent fields */
	delta[3] = 1;
	emit_delta("bad-delta-reserved", 1 | fix, delta, len, BF_ERR_DELTA_HEADER);
	delta[3] = 0;
	delta[32] = BF_KIND_NONE;
	emit_delta("bad-delta-kind-none", 1 | fix, delta, len, BF_ERR_DELTA_HEADER);
	delta[32] = BF_KIND_NUMBER;
	delta[33] = 1;
	emit_delta("bad-delta-growth-1", 1 | fix, delta, len, BF_ERR_DELTA_HEADER);
	delta[33] = 2;
	bf_store_le32(delta + 4, BF_MAX_SEGMENTS + 1);
	emit_delta("bad-delta-segments-33", 1 | fix, delta, len, BF_ERR_DELTA_HEADER);
	bf_store_le32(delta + 4, 2);
	emit_delta("bad-delta-run-segment-out-of-range", 1 | fix, delta, len, BF_ERR_DELTA_RUN);
	bf_store_le32(delta + 4, 3);

	/* sound deltas of other filters */
	h = *chain;
	h.seed++;
	emit_delta_for("bad-delta-mismatch-seed", 1, &h, 1, BF_ERR_DELTA_MISMATCH);
	h = *chain;
	h.capacity = 5;
	emit_delta_for("bad-delta-mismatch-capacity", 1, &h, 1, BF_ERR_DELTA_MISMATCH);
	h = *chain;
	h.fpr = 0.02;
	emit_delta_for("bad-delta-mismatch-fpr", 1, &h, 1, BF_ERR_DELTA_MISMATCH);
	h = *chain;
	h.identity.kind = BF_KIND_TEXT;
	emit_delta_for("bad-delta-mismatch-kind", 1, &h, 1, BF_ERR_DELTA_MISMATCH);
	h = *chain;
	h.growth = 4;
	emit_delta_for("bad-delta-mismatch-growth", 1, &h, 1, BF_ERR_DELTA_MISMATCH);
	emit_delta_for("bad-delta-mismatch-layout", 1, fixed, 1, BF_ERR_DELTA_MISMATCH);
	h = *fixed;
	h.version = 1;
	emit_delta_for("bad-delta-mismatch-version", 0, &h, 1, BF_ERR_DELTA_MISMATCH);
	emit_delta_for("bad-delta-fewer-segments", 2, &delta_copy[2].header, 2,
				   BF_ERR_DELTA_MISMATCH);
	emit_delta_for("bad-delta-cannot-grow", 1, chain, BF_MAX_SEGMENTS, BF_ERR_TOO_LARGE);
}

static void
delta_seeds(void)
{
	for (int i = 0; i < DELTA_NCOPIES; i++)
		delta_copy[i] = delta_copy_build(i);
	valid_deltas();
	invalid_deltas();
	for (int i = 0; i < DELTA_NCOPIES; i++)
		free(delta_copy[i].value);
}

/* fuzz_sizing.c input: capacity, fpr bits, flags (see its header). */
static void
emit_sizing(const char *name, uint64_t capacity, double fpr, uint8_t flags)
{
	uint8_t		bytes[17];
	uint64_t	fpr_bits;

	memcpy(&fpr_bits, &fpr, sizeof(fpr_bits));
	for (int i = 0; i < 8; i++)
	{
		bytes[i] = (uint8_t) (capacity >> (8 * i));
		bytes[8 + i] = (uint8_t) (fpr_bits >> (8 * i));
	}
	bytes[16] = flags;
	write_file("sizing", name, bytes, sizeof(bytes));
}

static void
sizing_inputs(void)
{
	emit_sizing("ok-1m-0.01", 1000000, 0.01, 0);
	emit_sizing("ok-1-0.5", 1, 0.5, 0);
	emit_sizing("ok-1000-0.001-memo", 1000, 0.001, 0x02);
	emit_sizing("ok-10-1e-9", 10, 1e-9, 0);
	emit_sizing("ok-log-uniform", 5000, 0.0, 0x01);
	emit_sizing("too-large-1e15-1e-6", UINT64_C(1000000000000000), 1e-6, 0);
	emit_sizing("too-large-max-0.5", UINT64_MAX, 0.5, 0);
	emit_sizing("unreachable-subnormal", 1, 4.9406564584124654e-324, 0);
	emit_sizing("unreachable-below-lowest", 1, nextafter(BF_MIN_FPR, 0.0), 0);
	emit_sizing("ok-lowest-rate", 1, BF_MIN_FPR, 0x02);
	emit_sizing("too-large-hash-limit", 100000, 1e-15, 0);
	emit_sizing("bad-capacity-0", 0, 0.01, 0);
	emit_sizing("bad-fpr-0.6", 10, 0.6, 0);
	emit_sizing("bad-fpr-nan", 10, NAN, 0);
	emit_sizing("bad-fpr-inf", 10, INFINITY, 0);
	emit_sizing("bad-fpr-negative-zero", 10, -0.0, 0);
}

/* ---------------------------------------------------------------------
 * fuzz_qfilter.c seeds: first byte 0, a qfilter value; 1, operations.
 * ---------------------------------------------------------------------
 */

/* Below fuzz_qfilter's max_len in run.sh, and the corpus stays small. */
#define MAX_QF_SEED_BYTES 12000

static uint8_t qf_scratch[MAX_QF_SEED_BYTES + 64];

/* Writes a validator-mode seed after checking the validator's verdict. */
static void
emit_qvalue(const char *name, const uint8_t *value, size_t len, QfStatus expected)
{
	static uint8_t seed[1 + MAX_QF_SEED_BYTES + 64];
	QfHeader	header;
	QfStatus	status = qf_validate(value, len, &header);

	if (status != expected)
	{
		fprintf(stderr, "gen_corpus: qfilter/%s: validator says \"%s\", expected \"%s\"\n",
				name, qf_status_message(status), qf_status_message(expected));
		exit(1);
	}
	FUZZ_CHECK(len <= MAX_QF_SEED_BYTES + 8);
	seed[0] = 0;
	memcpy(seed + 1, value, len);
	write_file("qfilter", name, seed, len + 1);
}

/* An empty qfilter as qfilter_empty would make it. */
static QfHeader
qf_new(uint8_t *value, uint64_t capacity, double fpr, uint64_t seed)
{
	QfHeader	h;

	memset(&h, 0, sizeof(h));
	h.version = QF_FORMAT_VERSION;
	h.identity.kind = BF_KIND_NONE;
	h.seed = seed;
	h.capacity = capacity;
	h.fpr = fpr;
	FUZZ_CHECK(qf_size_for(capacity, fpr, &h) == QF_OK);
	FUZZ_CHECK(qf_value_bytes(&h) <= MAX_QF_SEED_BYTES);
	qf_init(value, &h, NULL);
	return h;
}

/* Rebuilds value into the next size up, as the glue does when it is full. */
static void
qf_grow(uint8_t *value, QfHeader *h)
{
	QfHeader	grown;

	FUZZ_CHECK(qf_grown_header(h, &grown) == QF_OK);
	grown.count = 0;
	FUZZ_CHECK(qf_value_bytes(&grown) <= MAX_QF_SEED_BYTES);
	qf_init(qf_scratch, &grown, NULL);
	FUZZ_CHECK(qf_merge(qf_scratch, &grown, value, h, NULL, NULL) == QF_OK);
	memcpy(value, qf_scratch, qf_value_bytes(&grown));
	*h = grown;
	qf_write_header(value, h);
}

static void
qf_add_fingerprint(uint8_t *value, QfHeader *h, uint64_t fingerprint)
{
	QfStatus	status;

	while ((status = qf_insert(value, h, fingerprint)) == QF_ERR_FULL)
		qf_grow(value, h);
	FUZZ_CHECK(status == QF_OK);
}

/* Adds copies of each key first..first+count-1, hashed as bloom_add does. */
static void
qf_add_keys(uint8_t *value, QfHeader *h, BfKeyKind kind, uint64_t first,
			uint64_t count, int copies)
{
	for (uint64_t key = first; key < first + count; key++)
	{
		uint8_t		bytes[8];
		uint64_t	fingerprint;

		for (int i = 0; i < 8; i++)
			bytes[i] = (uint8_t) (key >> (8 * i));
		fingerprint = qf_fingerprint(h, bf_hash(bytes, sizeof(bytes), h->seed));
		for (int c = 0; c < copies; c++)
			qf_add_fingerprint(value, h, fingerprint);
	}
	h->identity.kind = kind;
	qf_write_header(value, h);
}

static void
qf_valid_values(uint8_t *value)
{
	QfHeader	h;
	uint32_t	home;

	h = qf_new(value, 1, 0.5, 0);
	FUZZ_CHECK(h.r == 0);
	emit_qvalue("valid-empty-1-0.5", value, qf_value_bytes(&h), QF_OK);
	h = qf_new(value, 100, 0.01, 0);
	emit_qvalue("valid-empty-100-0.01", value, qf_value_bytes(&h), QF_OK);
	h = qf_new(value, 1000, 0.001, 0);
	emit_qvalue("valid-empty-1000-0.001", value, qf_value_bytes(&h), QF_OK);

	/* one home block at its highest load */
	h = qf_new(value, 60, 0.01, 0);
	FUZZ_CHECK(h.home_blocks == 1);
	qf_add_keys(value, &h, BF_KIND_NUMBER, 0, 60, 1);
	FUZZ_CHECK(h.home_blocks == 1);
	emit_qvalue("valid-number-60-full-block", value, qf_value_bytes(&h), QF_OK);

	h = qf_new(value, 500, 0.01, 0);
	qf_add_keys(value, &h, BF_KIND_NUMBER, 1, 250, 1);
	emit_qvalue("valid-number-500-half", value, qf_value_bytes(&h), QF_OK);

	h = qf_new(value, 300, 0.1, UINT64_C(0x9e3779b97f4a7c15));
	qf_add_keys(value, &h, BF_KIND_TEXT, 1000, 300, 1);
	emit_qvalue("valid-text-300-0.1-seeded", value, qf_value_bytes(&h), QF_OK);

	h = qf_new(value, 100, 0.01, 0);
	qf_add_keys(value, &h, BF_KIND_NUMBER, 0, 20, 5);
	emit_qvalue("valid-duplicates-20x5", value, qf_value_bytes(&h), QF_OK);

	/* grown by adds past its load, and grown empty twice then filled a bit */
	h = qf_new(value, 100, 0.01, 0);
	home = h.home_blocks;
	qf_add_keys(value, &h, BF_KIND_NUMBER, 0, 150, 1);
	FUZZ_CHECK(h.home_blocks == 2 * home);
	emit_qvalue("valid-grown-150-of-100", value, qf_value_bytes(&h), QF_OK);

	h = qf_new(value, 100, 0.01, 0);
	home = h.home_blocks;
	qf_grow(value, &h);
	qf_grow(value, &h);
	qf_add_keys(value, &h, BF_KIND_DATE, 0, 20, 1);
	FUZZ_CHECK(h.home_blocks == 4 * home);
	emit_qvalue("valid-grown-twice-sparse", value, qf_value_bytes(&h), QF_OK);

	/* at twice the capacity, which a filter may pass by growing on */
	h = qf_new(value, 50, 0.01, 0);
	qf_add_keys(value, &h, BF_KIND_NUMBER, 0, 100, 1);
	emit_qvalue("valid-twice-capacity-50", value, qf_value_bytes(&h), QF_OK);

	/* no remainder bits at all, and the most there can be */
	h = qf_new(value, 20, 0.5, 0);
	FUZZ_CHECK(h.r == 0);
	qf_add_keys(value, &h, BF_KIND_BOOL, 0, 30, 1);
	emit_qvalue("valid-r0-fpr-0.5", value, qf_value_bytes(&h), QF_OK);

	h = qf_new(value, 1, 0x1p-63, 0);
	FUZZ_CHECK(h.r == QF_MAX_R);
	qf_add_keys(value, &h, BF_KIND_UUID, 7, 2, 1);
	emit_qvalue("valid-r57", value, qf_value_bytes(&h), QF_OK);

	/* environment fields, allowed for the "other" kind only */
	h = qf_new(value, 10, 0.05, 7);
	h.identity.tag = 0x2468ace1;
	h.identity.env_encoding = 6;
	h.identity.env_locale = 0x13572468;
	qf_add_keys(value, &h, BF_KIND_OTHER, 0, 10, 1);
	emit_qvalue("valid-other-env", value, qf_value_bytes(&h), QF_OK);

	/* runs of the last home slots spilling into the spare blocks */
	h = qf_new(value, 60, 0.01, 0);
	for (uint64_t i = 0; i < 20; i++)
		qf_add_fingerprint(value, &h, (UINT64_C(63) << h.r) | (i * 5));
	for (int i = 0; i < 5; i++)
		qf_add_fingerprint(value, &h, (UINT64_C(62) << h.r) | 1);
	for (uint64_t i = 0; i < 10; i++)
		qf_add_fingerprint(value, &h, i);
	h.identity.kind = BF_KIND_NUMBER;
	qf_write_header(value, &h);
	emit_qvalue("valid-spill-into-spare", value, qf_value_bytes(&h), QF_OK);

	/* a cluster across block boundaries: offsets of later blocks set */
	h = qf_new(value, 200, 0.01, 0);
	FUZZ_CHECK(h.home_blocks >= 3);
	for (uint64_t i = 0; i < 120; i++)
		qf_add_fingerprint(value, &h, ((58 + i % 12) << h.r) | (i * 7 % 100));
	h.identity.kind = BF_KIND_NUMBER;
	qf_write_header(value, &h);
	emit_qvalue("valid-cluster-across-blocks", value, qf_value_bytes(&h), QF_OK);
}

/* The base value with its header rewritten (checksum recomputed). */
static void
emit_qchanged(const char *name, const uint8_t *base, size_t len, QfHeader h,
			  QfStatus expected)
{
	memcpy(qf_scratch, base, len);
	qf_write_header(qf_scratch, &h);
	emit_qvalue(name, qf_scratch, len, expected);
}

/* The base value with one byte changed (checksum recomputed if asked). */
static void
emit_qbyte(const char *name, const uint8_t *base, size_t len, size_t at,
		   uint8_t xor, bool fix_checksum, QfStatus expected)
{
	memcpy(qf_scratch, base, len);
	qf_scratch[at] ^= xor;
	if (fix_checksum)
	{
		/* both checks recomputed: the damage is for the slot invariants */
		uint8_t		covered[60];
		uint32_t	body = bf_body_sum(qf_scratch + QF_HEADER_SIZE, len - QF_HEADER_SIZE, 0);
		uint32_t	sum;

		for (int i = 0; i < 4; i++)
			qf_scratch[60 + i] = (uint8_t) (body >> (8 * i));
		memcpy(covered, qf_scratch, 56);
		memcpy(covered + 56, qf_scratch + 60, 4);
		sum = (uint32_t) bf_hash(covered, sizeof(covered), 0);
		for (int i = 0; i < 4; i++)
			qf_scratch[56 + i] = (uint8_t) (sum >> (8 * i));
	}
	emit_qvalue(name, qf_scratch, len, expected);
}

/* Damaged values, one or more per validator error. */
static void
qf_invalid_values(uint8_t *value)
{
	QfHeader	base = qf_new(value, 60, 0.01, 0);
	QfHeader	h;
	size_t		len;
	size_t		block = QF_BLOCK_FIXED + 8 * (size_t) base.r;
	size_t		first_block = QF_HEADER_SIZE;
	size_t		spare_block = QF_HEADER_SIZE + (size_t) (base.total_blocks - 1) * block;

	qf_add_keys(value, &base, BF_KIND_NUMBER, 0, 10, 1);
	len = qf_value_bytes(&base);

	emit_qvalue("bad-empty-input", value, 0, QF_ERR_TRUNCATED);
	emit_qvalue("bad-truncated-header", value, QF_HEADER_SIZE - 1, QF_ERR_TRUNCATED);
	emit_qvalue("bad-truncated-slots", value, len - 1, QF_ERR_LENGTH);
	memset(value + len, 0, 8);
	emit_qvalue("bad-extra-bytes", value, len + 8, QF_ERR_LENGTH);

	emit_qbyte("bad-magic", value, len, 1, 'F' ^ 'G', false, QF_ERR_MAGIC);
	emit_qbyte("bad-checksum-seed-flip", value, len, 16, 0x10, false, QF_ERR_CHECKSUM);
	emit_qbyte("bad-reserved-header", value, len, 6, 1, true, QF_ERR_RESERVED);
	emit_qbyte("bad-reserved-tail", value, len, len - 1, 1, false, QF_ERR_RESERVED);

	/* qf_write_header writes the current version: the byte is set by hand */
	emit_qbyte("bad-version", value, len, 2, QF_FORMAT_VERSION ^ (QF_FORMAT_VERSION + 1), true,
			   QF_ERR_VERSION);
	h = base;
	h.identity.kind = BF_KIND_LAST + 1;
	emit_qchanged("bad-kind", value, len, h, QF_ERR_KIND);
	h = base;
	h.identity.tag = 1;
	emit_qchanged("bad-tag-on-number", value, len, h, QF_ERR_KIND);
	h = base;
	h.identity.env_encoding = 6;
	emit_qchanged("bad-env-on-number", value, len, h, QF_ERR_RESERVED);
	h = base;
	h.capacity = 0;
	emit_qchanged("bad-capacity-0", value, len, h, QF_ERR_CAPACITY);
	h = base;
	h.fpr = 0.0;
	emit_qchanged("bad-fpr-0", value, len, h, QF_ERR_FPR);
	h = base;
	h.fpr = 0.5000000000000001;
	emit_qchanged("bad-fpr-above-half", value, len, h, QF_ERR_FPR);
	h = base;
	h.fpr = NAN;
	emit_qchanged("bad-fpr-nan", value, len, h, QF_ERR_FPR);
	h = base;
	h.fpr = 1e-30;
	emit_qchanged("bad-fpr-unreachable", value, len, h, QF_ERR_FPR_UNREACHABLE);
	h = base;
	h.capacity = UINT64_C(1) << 40;
	emit_qchanged("bad-too-large", value, len, h, QF_ERR_TOO_LARGE);
	h = base;
	h.capacity = 100;			/* sized for 100: two home blocks */
	emit_qchanged("bad-size-capacity", value, len, h, QF_ERR_SIZE);
	h = base;
	h.home_blocks = 3;
	emit_qchanged("bad-size-home-blocks", value, len, h, QF_ERR_SIZE);
	h = base;
	h.r++;
	emit_qchanged("bad-size-r", value, len, h, QF_ERR_SIZE);
	h = base;
	h.total_blocks++;
	emit_qchanged("bad-size-total-blocks", value, len, h, QF_ERR_SIZE);
	h = base;
	h.count = 11;
	emit_qchanged("bad-count-vs-slots", value, len, h, QF_ERR_COUNT);
	h = base;
	h.count = 2 * h.capacity + 1;
	emit_qchanged("bad-count-over-limit", value, len, h, QF_ERR_COUNT);
	h = base;
	h.identity.kind = BF_KIND_NONE;
	emit_qchanged("bad-count-on-none", value, len, h, QF_ERR_COUNT);

	/* slots: run ends, homes, offsets and remainders that do not agree */
	/* the slot seeds below fix the body check too, to reach the invariants */
	emit_qbyte("bad-body-checksum", value, len, first_block + 8, 0x01, false,
			   QF_ERR_BODY_CHECKSUM);
	emit_qbyte("bad-slots-runend-flip", value, len, first_block + 8, 0x01, true, QF_ERR_SLOTS);
	emit_qbyte("bad-slots-occupied-flip", value, len, first_block, 0x80, true, QF_ERR_SLOTS);
	emit_qbyte("bad-slots-offset", value, len, first_block + block + 16, 5, true, QF_ERR_SLOTS);
	emit_qbyte("bad-slots-occupied-in-spare", value, len, spare_block, 1, true, QF_ERR_SLOTS);
	emit_qbyte("bad-slots-remainder-in-free-slot", value, len, spare_block + QF_BLOCK_FIXED, 1,
			   true, QF_ERR_SLOTS);
}

/* Operation sequences: capacity, fpr index, domain, then operations. */
typedef struct OpSeed
{
	uint8_t		bytes[2048];
	size_t		len;
} OpSeed;

static void
op_bytes(OpSeed *s, int n, ...)
{
	va_list		ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
	{
		FUZZ_CHECK(s->len < sizeof(s->bytes));
		s->bytes[s->len++] = (uint8_t) va_arg(ap, int);
	}
	va_end(ap);
}

static void
op_start(OpSeed *s, uint32_t capacity, int fpr_index, uint32_t domain)
{
	s->len = 0;
	op_bytes(s, 6, 1, (capacity - 1) & 0xFF, (capacity - 1) >> 8, fpr_index,
			 (domain - 1) & 0xFF, (domain - 1) >> 8);
}

/* op is 0 (add), 3 (remove): one key. */
static void
op_key(OpSeed *s, int op, uint32_t key)
{
	op_bytes(s, 3, op, key & 0xFF, key >> 8);
}

/* op is 2 (add keys), 5 (remove present keys): n from key on. */
static void
op_range(OpSeed *s, int op, uint32_t key, uint32_t n)
{
	op_bytes(s, 4, op, key & 0xFF, key >> 8, op == 2 ? n - 1 : (n - 1) % 64);
}

static void
op_union(OpSeed *s, uint32_t first, uint32_t n, int grow)
{
	op_bytes(s, 3, 6, n, grow);
	for (uint32_t i = 0; i < n; i++)
		op_bytes(s, 2, (first + i) & 0xFF, (first + i) >> 8);
}

static void
op_check(OpSeed *s)
{
	op_bytes(s, 1, 7);
}

static void
emit_ops(const char *name, const OpSeed *s)
{
	write_file("qfilter", name, s->bytes, s->len);
}

static void
qf_op_sequences(void)
{
	OpSeed		s;

	op_start(&s, 1, 2, 1);
	op_check(&s);
	emit_ops("ops-empty-check", &s);

	op_start(&s, 10, 2, 16);
	for (uint32_t k = 0; k < 10; k++)
		op_key(&s, 0, k);
	op_key(&s, 3, 4);
	op_key(&s, 3, 4);			/* absent now: the next present key goes */
	op_key(&s, 0, 9);
	op_check(&s);
	emit_ops("ops-add-remove-small", &s);

	op_start(&s, 50, 2, 200);
	op_range(&s, 2, 0, 120);	/* grows past twice the capacity */
	op_check(&s);
	op_range(&s, 5, 10, 64);
	op_range(&s, 2, 150, 30);
	op_check(&s);
	emit_ops("ops-grow-to-limit", &s);

	op_start(&s, 100, 1, 1);
	op_range(&s, 2, 0, 150);	/* one key, 150 copies */
	op_check(&s);
	op_range(&s, 5, 0, 64);
	op_check(&s);
	emit_ops("ops-one-key-many-copies", &s);

	op_start(&s, 200, 2, 300);
	op_range(&s, 2, 0, 150);
	op_union(&s, 100, 31, 2);
	op_check(&s);
	op_union(&s, 250, 20, 0);
	op_range(&s, 5, 0, 40);
	op_check(&s);
	emit_ops("ops-union-grown", &s);

	op_start(&s, 30, 0, 100);
	op_range(&s, 2, 0, 100);	/* no remainder bits: cannot grow */
	op_check(&s);
	op_range(&s, 5, 50, 30);
	op_union(&s, 0, 31, 3);
	op_check(&s);
	emit_ops("ops-fpr-0.5", &s);

	op_start(&s, 2000, 3, 512);
	for (int round = 0; round < 16; round++)
		op_range(&s, 2, (uint32_t) round * 37 % 512, 250);
	op_check(&s);
	for (int round = 0; round < 8; round++)
		op_range(&s, 5, (uint32_t) round * 64, 64);
	op_check(&s);
	emit_ops("ops-capacity-2000-0.001", &s);

	op_start(&s, 100, 2, 64);
	op_range(&s, 2, 0, 64);
	op_range(&s, 5, 0, 64);
	op_check(&s);
	op_union(&s, 0, 10, 1);
	op_range(&s, 5, 0, 64);
	emit_ops("ops-remove-all", &s);

	op_start(&s, 1, 1, 8);
	for (uint32_t k = 0; k < 8; k++)
		op_key(&s, 1, k);		/* capacity 1: two fit */
	op_union(&s, 0, 3, 0);
	op_key(&s, 4, 0);
	op_check(&s);
	emit_ops("ops-capacity-1", &s);
}

static void
qfilter_seeds(void)
{
	static uint8_t value[MAX_QF_SEED_BYTES + 64];

	qf_valid_values(value);
	qf_invalid_values(value);
	qf_op_sequences();
}

int
main(int argc, char **argv)
{
	static uint8_t value[MAX_SEED_BYTES + BF_BLOCK_BYTES];
	static SeedChain chain;
	char		path[4096];

	if (argc != 2)
	{
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	out_dir = argv[1];
	mkdir(out_dir, 0755);	/* an existing directory is fine */
	snprintf(path, sizeof(path), "%s/validate", out_dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sizing", out_dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/qfilter", out_dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/delta", out_dir);
	mkdir(path, 0755);

	valid_empty(value);
	valid_filled(value);
	invalid(value);
	valid_chains(&chain);
	invalid_chains(&chain);
	sizing_inputs();
	qfilter_seeds();
	delta_seeds();
	printf("gen_corpus: wrote %d seeds into %s\n", written, out_dir);
	return 0;
}
