/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  The filter itself, part of the pure core (see bloom.h for the API and
 *	  the serialised format): the header and its validator, the blocked
 *	  bit layout, set algebra and estimates.  How large a filter must be
 *	  is sizing.c's; the aggregates' hash buffers are hashbuf.c's.
 *
 * Layout
 * ------
 * The filter is an array of 512-bit (64-byte, cache-line sized) blocks.  A
 * value's 64-bit hash picks one block by multiply-shift of its high 32 bits,
 * and all k bits of the value are set inside that block.  A probe therefore
 * reads one 64-byte block, where a classic Bloom filter reads k scattered
 * cache lines.  The bit array follows the 56-byte header, so a block
 * usually straddles two cache lines: neighbours that arrive together, and
 * both are prefetched when many hashes are inserted (prefetch_block).  The
 * price is a little space: blocks receive unequal numbers of values, and
 * the fuller ones answer "maybe" more often.
 *
 * Hashing
 * -------
 * One XXH3-64 hash per value; the SQL glue decides which canonical bytes are
 * hashed.  The k in-block positions are the top 9 bits of the hash times k
 * fixed odd constants (multiply-shift), so they cost one multiplication each
 * and need no second hash.  A hash does not depend on the filter's size, which
 * lets the self-sizing aggregates collect hashes first and size the filter
 * once they know how many distinct values there are.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"

#include <math.h>
#include <string.h>

/* Odd multipliers for the k in-block positions.  Persisted: never change. */
static const uint64_t position_salts[BF_MAX_K] = {
	UINT64_C(0xe29d3ec8b7ca214d), UINT64_C(0xac0d21d890a6d93b),
	UINT64_C(0xa9fe3f3f79f5f2fb), UINT64_C(0xcf68f2501e539fb9),
	UINT64_C(0x991eab291c5b4f63), UINT64_C(0xc019f9960beeb391),
	UINT64_C(0x74cb41282ce81c05), UINT64_C(0xcdfc897ba35cba85),
	UINT64_C(0x1b817c5524164df1), UINT64_C(0x14cf6e8b2ada46ab),
	UINT64_C(0x45b67826015aa9eb), UINT64_C(0x7e0e007b42f1ea67),
	UINT64_C(0x73289d481f07df99), UINT64_C(0x2f3e509256732389),
	UINT64_C(0x2dcc5dbb796dfa43), UINT64_C(0x1aa6c070ef5a6297),
	UINT64_C(0x70914dcbfd8f352b), UINT64_C(0x6fd752f7d1f28b59),
	UINT64_C(0x810290c3bcdff2c9), UINT64_C(0xd95189d4f0379891),
	UINT64_C(0xe48e0b1503ecbc0f), UINT64_C(0x1d97160179303727),
	UINT64_C(0xc8e12c8f3fe73df3), UINT64_C(0xc34444174112851d),
	UINT64_C(0xe3de049df4e9ea51), UINT64_C(0x20f78d81c0bd7a59),
	UINT64_C(0x828c6c73ccb4e4df), UINT64_C(0x2f2dfa31e1264fed),
	UINT64_C(0x7a246a643b1ad0dd), UINT64_C(0xee65ccdcfc402895),
	UINT64_C(0xe39f54f167221657), UINT64_C(0x86f6034b44225d83),
};

const char *
bf_status_message(BfStatus status)
{
	switch (status)
	{
		case BF_OK:
			return "Valid";
		case BF_ERR_TRUNCATED:
			return "Value is shorter than the 56-byte header";
		case BF_ERR_MAGIC:
			return "Value does not start with the bloom magic \"BF\"";
		case BF_ERR_VERSION:
			return "Unsupported format version (this build reads versions 1 and 2)";
		case BF_ERR_LAYOUT:
			return "Unknown layout";
		case BF_ERR_K:
			return "Number of hash positions is out of range 1..32";
		case BF_ERR_KIND:
			return "Unknown key kind or key tag";
		case BF_ERR_RESERVED:
			return "Reserved or environment header field is set where it must be zero";
		case BF_ERR_CHECKSUM:
			return "Header checksum does not match";
		case BF_ERR_NBLOCKS:
			return "Block count is out of range";
		case BF_ERR_LENGTH:
			return "Bit array length does not match the header";
		case BF_ERR_CAPACITY:
			return "Capacity must be at least 1";
		case BF_ERR_FPR:
			return "False-positive rate must be in (0, 0.5]";
		case BF_ERR_EMPTY_HAS_BITS:
			return "Filter with no key kind has values or bits set";
		case BF_ERR_TOO_LARGE:
			return "Value is larger than a bloom filter can be (750000000 bytes)";
		case BF_ERR_FPR_UNREACHABLE:
			return "False-positive rate is below the lowest supported, 1e-18";
	}
	return "unknown status";
}

/* ---------------------------------------------------------------------
 * Header
 * ---------------------------------------------------------------------
 */

size_t
bf_value_bytes(uint32_t nblocks)
{
	return BF_HEADER_SIZE + (size_t) nblocks * BF_BLOCK_BYTES;
}

static void
store_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
store_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static uint32_t
load_u32(const uint8_t *p)
{
	uint32_t	v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t
load_u64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t
header_checksum(const uint8_t *value, uint8_t version)
{
	uint8_t		covered[52];

	if (version == 1)
		return (uint32_t) XXH3_64bits(value, 48);
	memcpy(covered, value, 48);
	memcpy(covered + 48, value + 52, 4);
	return (uint32_t) XXH3_64bits(covered, sizeof(covered));
}

void
bf_write_header(uint8_t *value, const BfHeader *header)
{
	uint64_t	fpr_bits;

	memcpy(&fpr_bits, &header->fpr, sizeof(fpr_bits));
	value[0] = BF_MAGIC_0;
	value[1] = BF_MAGIC_1;
	value[2] = header->version;
	value[3] = header->layout;
	value[4] = header->k;
	value[5] = header->key_kind;
	value[6] = header->env_encoding;
	value[7] = 0;
	store_u32(value + 8, header->key_tag);
	store_u32(value + 12, header->nblocks);
	store_u64(value + 16, header->seed);
	store_u64(value + 24, header->capacity);
	store_u64(value + 32, fpr_bits);
	store_u64(value + 40, header->inserted);
	store_u32(value + 52, header->env_locale);
	store_u32(value + 48, header_checksum(value, header->version));
}

/*
 * Decodes and checks the header alone; enough for a probe that reads only
 * the header and one block of a stored filter.
 */
BfStatus
bf_read_header(const uint8_t *value, size_t len, BfHeader *header)
{
	uint64_t	fpr_bits;

	if (len < BF_HEADER_SIZE)
		return BF_ERR_TRUNCATED;
	if (value[0] != BF_MAGIC_0 || value[1] != BF_MAGIC_1)
		return BF_ERR_MAGIC;

	header->version = value[2];
	header->layout = value[3];
	header->k = value[4];
	header->key_kind = value[5];
	header->key_tag = load_u32(value + 8);
	header->env_encoding = value[6];
	header->env_locale = load_u32(value + 52);
	header->nblocks = load_u32(value + 12);
	header->seed = load_u64(value + 16);
	header->capacity = load_u64(value + 24);
	fpr_bits = load_u64(value + 32);
	memcpy(&header->fpr, &fpr_bits, sizeof(fpr_bits));
	header->inserted = load_u64(value + 40);

	if (header->version < BF_FORMAT_VERSION_MIN ||
		header->version > BF_FORMAT_VERSION)
		return BF_ERR_VERSION;
	if (header->layout != BF_LAYOUT_BLOCKED512)
		return BF_ERR_LAYOUT;
	if (header->k < 1 || header->k > BF_MAX_K)
		return BF_ERR_K;
	if (header->key_kind > BF_KIND_LAST ||
		(header->key_kind != BF_KIND_OTHER && header->key_tag != 0))
		return BF_ERR_KIND;
	if (value[7] != 0 ||
		((header->version == 1 || header->key_kind != BF_KIND_OTHER) &&
		 (header->env_encoding != 0 || header->env_locale != 0)))
		return BF_ERR_RESERVED;
	if (header->nblocks < 1 || header->nblocks > BF_MAX_BLOCKS)
		return BF_ERR_NBLOCKS;
	if (header->capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(header->fpr > 0.0 && header->fpr <= 0.5))
		return BF_ERR_FPR;
	if (load_u32(value + 48) != header_checksum(value, header->version))
		return BF_ERR_CHECKSUM;
	return BF_OK;
}

/*
 * The one validator for every value that comes from outside: text input,
 * binary receive, the bytea cast and aggregate deserialisation.
 */
BfStatus
bf_validate(const uint8_t *value, size_t len, BfHeader *header)
{
	BfStatus	status = bf_read_header(value, len, header);

	if (status != BF_OK)
		return status;
	if (len != bf_value_bytes(header->nblocks))
		return BF_ERR_LENGTH;

	/*
	 * A filter of no kind has never had a value added.  Were its kind byte
	 * the only thing damaged, accepting it would make every probe "absent".
	 */
	if (header->key_kind == BF_KIND_NONE &&
		(header->inserted != 0 ||
		 bf_popcount(bf_bits_const(value),
					 (size_t) header->nblocks * BF_BLOCK_BYTES) != 0))
		return BF_ERR_EMPTY_HAS_BITS;
	return BF_OK;
}

void
bf_init(uint8_t *value, const BfHeader *header)
{
	bf_write_header(value, header);
	memset(bf_bits(value), 0, (size_t) header->nblocks * BF_BLOCK_BYTES);
}

/* Whether values of a's kind may be combined with values of b's kind. */
bool
bf_kinds_compatible(const BfHeader *a, const BfHeader *b)
{
	if (a->key_kind == BF_KIND_NONE || b->key_kind == BF_KIND_NONE)
		return true;
	return a->key_kind == b->key_kind && a->key_tag == b->key_tag &&
		a->env_encoding == b->env_encoding && a->env_locale == b->env_locale;
}

/*
 * Whether a and b may be unioned or intersected.  Capacity and target rate
 * must match too, though filters of different ones may share a geometry:
 * otherwise the result's header would depend on the order of the operands,
 * and a parallel union could differ from a serial one.
 */
bool
bf_compatible(const BfHeader *a, const BfHeader *b)
{
	return a->version == b->version &&
		a->capacity == b->capacity &&
		a->fpr == b->fpr &&
		a->layout == b->layout &&
		a->nblocks == b->nblocks &&
		a->k == b->k &&
		a->seed == b->seed &&
		bf_kinds_compatible(a, b);
}

/* ---------------------------------------------------------------------
 * Hashing and the bit layout
 * ---------------------------------------------------------------------
 */

uint32_t
bf_block_of(uint64_t hash, uint32_t nblocks)
{
	return (uint32_t) (((hash >> 32) * (uint64_t) nblocks) >> 32);
}

static inline unsigned
position_in_block(uint64_t hash, int i)
{
	return (unsigned) ((hash * position_salts[i]) >> (64 - 9));
}

/*
 * Unrolls a loop over the k positions.  Inlined with a constant k (the
 * common k get their own insert loop, bf_add_hashes), the salts become
 * immediates and the loop disappears; GCC does not do that by itself at -O2
 * for a loop with a memory update.  See docs/performance.md for what it
 * saves.
 */
#if defined(__clang__)
#define UNROLL_K _Pragma("clang loop unroll_count(8)")
#elif defined(__GNUC__) && __GNUC__ >= 8
#define UNROLL_K _Pragma("GCC unroll 8")
#else
#define UNROLL_K
#endif

/*
 * On a little-endian machine bit i of a block is bit i % 64 of its 64-bit
 * word i / 64, so setting it word-wise sets the same bits as the byte-wise
 * definition, in fewer instructions; this runs k times per value added.
 * The word and the bit come straight from the product (its top 3 bits and
 * the 6 below them are position_in_block's 9 bits).
 */
static inline void
block_add(uint8_t *block, uint64_t hash, int k)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	UNROLL_K
	for (int i = 0; i < k; i++)
	{
		uint64_t	product = hash * position_salts[i];
		uint8_t    *at = block + (product >> 61) * 8;
		uint64_t	word;

		/* memcpy: the block follows a 56-byte header, so it is unaligned */
		memcpy(&word, at, sizeof(word));
		word |= UINT64_C(1) << ((product >> 55) & 63);
		memcpy(at, &word, sizeof(word));
	}
#else
	for (int i = 0; i < k; i++)
	{
		unsigned	pos = position_in_block(hash, i);

		block[pos >> 3] |= (uint8_t) (1u << (pos & 7));
	}
#endif
}

void
bf_block_add(uint8_t *block, uint64_t hash, int k)
{
	block_add(block, hash, k);
}

/*
 * No early exit on a clear bit: the block is often a cache miss, and a branch
 * on its bits, as unpredictable as the bits of an absent value, would stall
 * the CPU until the miss resolves.  Without one it runs ahead into the next
 * row of a scan while the line is on its way, and the other k - 1 tests hit
 * the line already fetched.
 */
bool
bf_block_test(const uint8_t *block, uint64_t hash, int k)
{
	unsigned	all = 1;

	for (int i = 0; i < k; i++)
	{
		unsigned	pos = position_in_block(hash, i);

		all &= (unsigned) block[pos >> 3] >> (pos & 7);
	}
	return (all & 1) != 0;
}

/*
 * Prefetches the block a hash maps to, where the compiler can: both of its
 * ends, since a filter's blocks follow its header and so usually straddle
 * two cache lines.  Prefetching only the first would leave every insert
 * that touches the second waiting for it.
 */
static inline void
prefetch_block(const uint8_t *bits, uint32_t nblocks, uint64_t hash)
{
#if defined(__GNUC__) || defined(__clang__)
	const uint8_t *block = bits + (size_t) bf_block_of(hash, nblocks) * BF_BLOCK_BYTES;

	__builtin_prefetch(block, 1);
	__builtin_prefetch(block + BF_BLOCK_BYTES - 1, 1);
#else
	(void) bits;
	(void) nblocks;
	(void) hash;
#endif
}

/*
 * Adds many hashes, with the loop for one k.  Each insert is a likely cache
 * miss in a large filter, so the block of a hash a few places ahead is
 * prefetched; grouped hashes (the aggregates group theirs) also walk the
 * blocks in order, and then inserting is bound by instructions, not memory:
 * inlined with a constant k, the salts become constants and the k-loop
 * unrolls, which saves about a tenth.
 */
static BF_ALWAYS_INLINE void
add_hashes_k(uint8_t *bits, uint32_t nblocks, int k, const uint64_t *hashes, size_t n)
{
	const size_t ahead = 16;

	for (size_t i = 0; i < ahead && i < n; i++)
		prefetch_block(bits, nblocks, hashes[i]);
	for (size_t i = 0; i < n; i++)
	{
		if (i + ahead < n)
			prefetch_block(bits, nblocks, hashes[i + ahead]);
		block_add(bits + (size_t) bf_block_of(hashes[i], nblocks) * BF_BLOCK_BYTES,
				  hashes[i], k);
	}
}

/* The k of the common rates (bf_known_sizing) get their own loop. */
void
bf_add_hashes(uint8_t *bits, uint32_t nblocks, int k,
			  const uint64_t *hashes, size_t n)
{
	switch (k)
	{
		case 3:
			add_hashes_k(bits, nblocks, 3, hashes, n);
			break;
		case 4:
			add_hashes_k(bits, nblocks, 4, hashes, n);
			break;
		case 6:
			add_hashes_k(bits, nblocks, 6, hashes, n);
			break;
		case 7:
			add_hashes_k(bits, nblocks, 7, hashes, n);
			break;
		default:
			add_hashes_k(bits, nblocks, k, hashes, n);
			break;
	}
}

bool
bf_test_hash(const uint8_t *bits, uint32_t nblocks, int k, uint64_t hash)
{
	return bf_block_test(bits + (size_t) bf_block_of(hash, nblocks) * BF_BLOCK_BYTES,
						 hash, k);
}

/* ---------------------------------------------------------------------
 * Set algebra
 * ---------------------------------------------------------------------
 */

/*
 * Word by word (a parallel bloom_agg's leader ORs megabytes of partial
 * filters): byte by byte, GCC -O2 left each byte its own load and store,
 * as dst and src might overlap.  Inlined with a constant "either", the
 * choice of OR or AND leaves the loop.
 */
static BF_ALWAYS_INLINE void
combine_bits(uint8_t *dst, const uint8_t *src, size_t nbytes, bool either)
{
	size_t		i = 0;

	for (; i + sizeof(uint64_t) <= nbytes; i += sizeof(uint64_t))
	{
		uint64_t	mine;
		uint64_t	theirs;

		memcpy(&mine, dst + i, sizeof(mine));
		memcpy(&theirs, src + i, sizeof(theirs));
		mine = either ? mine | theirs : mine & theirs;
		memcpy(dst + i, &mine, sizeof(mine));
	}
	for (; i < nbytes; i++)
		dst[i] = either ? dst[i] | src[i] : dst[i] & src[i];
}

void
bf_union_bits(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	combine_bits(dst, src, nbytes, true);
}

void
bf_intersect_bits(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	combine_bits(dst, src, nbytes, false);
}

/* ---------------------------------------------------------------------
 * Fill and estimates
 * ---------------------------------------------------------------------
 */

uint64_t
bf_popcount(const uint8_t *bits, size_t nbytes)
{
	uint64_t	count = 0;
	size_t		i = 0;

	for (; i + 8 <= nbytes; i += 8)
	{
		uint64_t	word;

		memcpy(&word, bits + i, sizeof(word));
		count += bf_popcount64(word);
	}
	for (; i < nbytes; i++)
		count += bf_popcount64(bits[i]);
	return count;
}

/*
 * Distinct values implied by the fill: under Poisson loads a bit stays clear
 * with probability exp(-lambda (1 - (1 - 1/512)^k)); solve for lambda.
 *
 * With every bit set the fill says only that there are many: the answer is
 * then the count for all bits but half of one set, the count at which half
 * a bit would be expected to stay clear.  Fewer values would most likely
 * have left a bit clear, so it is a lower bound, finite, and above the
 * estimate for any filter of that size with a bit clear; the true count may
 * be anything higher.
 */
double
bf_estimate_cardinality(uint32_t nblocks, int k, uint64_t bits_set)
{
	double		total = (double) nblocks * BF_BLOCK_BITS;
	double		per_value = 1.0 - bf_power_int(1.0 - 1.0 / BF_BLOCK_BITS, k);

	if (bits_set >= (uint64_t) total)
		return log(2.0 * total) / per_value * nblocks;	/* -log(0.5 / total) */
	return -log1p(-(double) bits_set / total) / per_value * nblocks;
}

/*
 * The false-positive rate of this very filter: an absent value lands in a
 * uniformly chosen block and is "present" when its k positions are all set.
 */
double
bf_estimate_fpr(const uint8_t *bits, uint32_t nblocks, int k)
{
	double		sum = 0.0;

	for (uint32_t b = 0; b < nblocks; b++)
	{
		uint64_t	set = bf_popcount(bits + (size_t) b * BF_BLOCK_BYTES,
									  BF_BLOCK_BYTES);

		sum += bf_power_int((double) set / BF_BLOCK_BITS, k);
	}
	return sum / nblocks;
}
