/*-------------------------------------------------------------------------
 *
 * gen_corpus.c
 *	  Writes the fuzzers' seed corpus, using the core's own API, into
 *	  DIR/validate (serialised values) and DIR/sizing ((capacity, fpr)
 *	  inputs of fuzz_sizing.c).
 *
 *		gen_corpus DIR
 *
 * Seeds are named valid-* and bad-*.  Each is checked against the status
 * the validator must give it, so the generator doubles as a test that the
 * committed seeds mean what their names say; it exits non-zero otherwise.
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
#include "sizing.h"
#include "fuzz_check.h"

#include <errno.h>
#include <math.h>
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
	BfStatus	status = bf_validate(value, len, &header);

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

	FUZZ_CHECK(bf_size_for(capacity, fpr, &sizing) == BF_OK);
	memset(&header, 0, sizeof(header));
	header.version = BF_FORMAT_VERSION;
	header.layout = BF_LAYOUT_BLOCKED512;
	header.k = sizing.k;
	header.key_kind = BF_KIND_NONE;
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
	header->key_kind = kind;
	header->inserted += count;
	bf_write_header(value, header);
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
		bf_init(value, &header);
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
	bf_init(value, &header);
	add_keys(value, &header, BF_KIND_NUMBER, 1, 100);
	emit_value("valid-number-100", value, len, BF_OK);

	header = sized_header(30, 0.001, UINT64_C(0x9e3779b97f4a7c15));
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header);
	add_keys(value, &header, BF_KIND_TEXT, 1000, 30);
	emit_value("valid-text-seeded", value, len, BF_OK);

	header = sized_header(10, 0.05, 7);
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header);
	header.key_tag = 0x2468ace1;	/* OTHER is the one kind with a tag */
	add_keys(value, &header, BF_KIND_OTHER, 0, 10);
	emit_value("valid-other-tagged", value, len, BF_OK);

	header = sized_header(10, 0.01, 0);
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header);
	add_keys(value, &header, BF_KIND_FLOAT, 0, 400);
	emit_value("valid-overfilled", value, len, BF_OK);

	/* Every bit set: the count estimate is its finite floor, the rate 1. */
	header = sized_header(1, 0.01, 0);
	header.key_kind = BF_KIND_UUID;
	header.inserted = UINT64_MAX;
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header);
	memset(bf_bits(value), 0xFF, len - BF_HEADER_SIZE);
	emit_value("valid-full-max-inserted", value, len, BF_OK);

	/* The validator's range ends, not reachable through bf_size_for. */
	header = sized_header(1, 0.01, 0);
	header.k = 1;
	header.capacity = UINT64_MAX;
	header.fpr = 0.5;
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header);
	add_keys(value, &header, BF_KIND_BOOL, 0, 2);
	emit_value("valid-k1-max-capacity", value, len, BF_OK);

	header = sized_header(1, 0.01, 0);
	header.k = BF_MAX_K;
	header.fpr = 4.9406564584124654e-324;	/* smallest subnormal */
	header.nblocks = 3;
	len = bf_value_bytes(header.nblocks);
	bf_init(value, &header);
	add_keys(value, &header, BF_KIND_TIMESTAMPTZ, 0, 5);
	emit_value("valid-k32-subnormal-fpr", value, len, BF_OK);
}

/* Writes value with a field changed, the header checksum recomputed. */
static void
emit_changed_header(const char *name, BfHeader header, BfStatus expected)
{
	uint8_t		value[BF_HEADER_SIZE + BF_BLOCK_BYTES] = {0};

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
	bf_init(value, &base);
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
	emit_value("bad-checksum-seed-flip", value, len, BF_ERR_CHECKSUM);
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
	h.key_kind = BF_KIND_LAST + 1;
	emit_changed_header("bad-kind", h, BF_ERR_KIND);
	h = base;
	h.key_tag = 1;
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
	h.key_kind = BF_KIND_NONE;
	h.inserted = 1;
	emit_changed_header("bad-empty-with-count", h, BF_ERR_EMPTY_HAS_BITS);

	/* Only the kind byte damaged (checksum fixed): bits but no kind. */
	h = base;
	h.key_kind = BF_KIND_NONE;
	h.inserted = 0;
	bf_write_header(value, &h);
	emit_value("bad-empty-with-bits", value, len, BF_ERR_EMPTY_HAS_BITS);
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

int
main(int argc, char **argv)
{
	static uint8_t value[MAX_SEED_BYTES + BF_BLOCK_BYTES];
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

	valid_empty(value);
	valid_filled(value);
	invalid(value);
	sizing_inputs();
	printf("gen_corpus: wrote %d seeds into %s\n", written, out_dir);
	return 0;
}
