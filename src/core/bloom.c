/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  The filter itself, part of the pure core (see bloom.h for the API and
 *	  the serialised format): the header and its validator, key identities
 *	  (qfilter's too), the blocked bit layout, chains of segments and their
 *	  growth, set algebra over bits and over whole values, and estimates.
 *	  How large a filter must be is sizing.c's; the aggregates' hash
 *	  buffers are hashbuf.c's.
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
#include "sizing.h"

#include <math.h>
#include <string.h>

/*
 * The body check's sum has an AVX2 form, chosen at run time, where the
 * compiler can build one for x86-64 (gcc and clang both can).
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BF_HAVE_AVX2_DISPATCH 1
#include <immintrin.h>
#endif

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
			return "Unsupported format version (this build reads versions 1 to 3)";
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
		case BF_ERR_GROWTH:
			return "Growth factor of a chained filter is out of range 2..16";
		case BF_ERR_SEGMENTS:
			return "Number of segments of a chained filter is out of range 1..32";
		case BF_ERR_SEGMENT_SIZE:
			return "Segment size does not match the chain's capacity and false-positive rate";
		case BF_ERR_INCOMPATIBLE:
			return "Filters differ in parameters or key kind";
		case BF_ERR_NO_MEMORY:
			return "Out of memory";
		case BF_ERR_DELTA_LENGTH:
			return "Delta length does not match its runs (truncated, or bytes after the last run)";
		case BF_ERR_DELTA_MAGIC:
			return "Delta does not start with the delta magic \"BD\"";
		case BF_ERR_DELTA_VERSION:
			return "Unsupported delta format version (this build reads version 1)";
		case BF_ERR_DELTA_CHECKSUM:
			return "Delta checksum does not match";
		case BF_ERR_DELTA_HEADER:
			return "Delta header is inconsistent (reserved byte, layout, growth, segments or key kind)";
		case BF_ERR_DELTA_RUN:
			return "Delta run is empty or names a segment past the delta's segments";
		case BF_ERR_DELTA_MISMATCH:
			return "Delta belongs to another filter (seed, capacity, rate, key kind, growth, "
				"format or layout differ, or the copy has more segments than the delta)";
		case BF_ERR_BODY_CHECKSUM:
			return "Checksum of the header and bit array does not match: the value is damaged";
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

/* The odd multiplier of the body's 32-bit word j (bloom.h, "The body check"). */
#define BODY_STEP	UINT32_C(0x9E3779B1)
#define BODY_BASE	UINT32_C(0x7F4A7C15)

static inline uint32_t
body_multiplier(size_t j)
{
	return ((uint32_t) j * BODY_STEP + BODY_BASE) | 1;
}

/*
 * S over nbytes / 4 words from src, the first being word first_word, and
 * the same bytes stored at dst unless dst is NULL: an input that must be
 * copied anyway reads its body once.  Four accumulators, so that the
 * multiplications of neighbouring words overlap.
 */
static uint32_t
body_sum_portable(uint8_t *dst, const uint8_t *src, size_t nbytes, size_t first_word)
{
	uint32_t	s0 = 0,
				s1 = 0,
				s2 = 0,
				s3 = 0;
	uint32_t	c = (uint32_t) first_word * BODY_STEP + BODY_BASE;
	size_t		n = nbytes / 4;
	size_t		i = 0;

	for (; i + 4 <= n; i += 4)
	{
		const uint8_t *p = src + i * 4;

		s0 += bf_load_le32(p) * (c | 1);
		s1 += bf_load_le32(p + 4) * ((c + BODY_STEP) | 1);
		s2 += bf_load_le32(p + 8) * ((c + 2 * BODY_STEP) | 1);
		s3 += bf_load_le32(p + 12) * ((c + 3 * BODY_STEP) | 1);
		c += 4 * BODY_STEP;
		if (dst != NULL)
			memcpy(dst + i * 4, p, 16);
	}
	for (; i < n; i++)
	{
		s0 += bf_load_le32(src + i * 4) * (c | 1);
		c += BODY_STEP;
		if (dst != NULL)
			memcpy(dst + i * 4, src + i * 4, 4);
	}
	return s0 + s1 + s2 + s3;
}

#ifdef BF_HAVE_AVX2_DISPATCH
/*
 * The same sum sixteen words at a time in two AVX2 accumulators, lane l of
 * a multiplier vector holding word (i + l)'s multiplier before its low bit
 * is set: one 32-bit multiply per word at eight words an instruction.  The
 * words are little-endian, as x86 loads them.  The tail is the portable
 * loop's, from the word where this one stopped.
 */
__attribute__((target("avx2")))
static uint32_t
body_sum_avx2(uint8_t *dst, const uint8_t *src, size_t nbytes, size_t first_word)
{
	const __m256i one = _mm256_set1_epi32(1);
	const __m256i advance = _mm256_set1_epi32((int) (16 * BODY_STEP));
	uint32_t	c = (uint32_t) first_word * BODY_STEP + BODY_BASE;
	__m256i		m0 = _mm256_add_epi32(_mm256_set1_epi32((int) c),
									  _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
														 _mm256_set1_epi32((int) BODY_STEP)));
	__m256i		m1 = _mm256_add_epi32(m0, _mm256_set1_epi32((int) (8 * BODY_STEP)));
	__m256i		a0 = _mm256_setzero_si256();
	__m256i		a1 = _mm256_setzero_si256();
	uint32_t	lanes[8];
	uint32_t	sum = 0;
	size_t		n = nbytes / 4;
	size_t		i = 0;

	for (; i + 16 <= n; i += 16)
	{
		__m256i		w0 = _mm256_loadu_si256((const __m256i *) (src + i * 4));
		__m256i		w1 = _mm256_loadu_si256((const __m256i *) (src + i * 4 + 32));

		if (dst != NULL)
		{
			_mm256_storeu_si256((__m256i *) (dst + i * 4), w0);
			_mm256_storeu_si256((__m256i *) (dst + i * 4 + 32), w1);
		}
		a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(w0, _mm256_or_si256(m0, one)));
		a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(w1, _mm256_or_si256(m1, one)));
		m0 = _mm256_add_epi32(m0, advance);
		m1 = _mm256_add_epi32(m1, advance);
	}
	_mm256_storeu_si256((__m256i *) lanes, _mm256_add_epi32(a0, a1));
	for (int l = 0; l < 8; l++)
		sum += lanes[l];
	return sum + body_sum_portable(dst != NULL ? dst + i * 4 : NULL, src + i * 4,
								   nbytes - i * 4, first_word + i);
}
#endif

uint32_t
bf_body_sum_copy(uint8_t *dst, const uint8_t *src, size_t nbytes, size_t first_word)
{
#ifdef BF_HAVE_AVX2_DISPATCH
	if (__builtin_cpu_supports("avx2"))
		return body_sum_avx2(dst, src, nbytes, first_word);
#endif
	return body_sum_portable(dst, src, nbytes, first_word);
}

uint32_t
bf_body_sum(const uint8_t *body, size_t nbytes, size_t first_word)
{
	return bf_body_sum_copy(NULL, body, nbytes, first_word);
}

/* S of a whole value of len bytes. */
static uint32_t
value_body_sum(const uint8_t *value, size_t len)
{
	return bf_body_sum(value + BF_HEADER_SIZE, len - BF_HEADER_SIZE, 0);
}

/*
 * Stores a 64-bit field of the body at offset (a multiple of 4: segment
 * descriptors' counts), following S.
 */
static void
store_le64_checked(uint8_t *value, size_t offset, uint64_t v, uint32_t *check)
{
	size_t		j = (offset - BF_HEADER_SIZE) / 4;
	uint32_t	old_lo = bf_load_le32(value + offset);
	uint32_t	old_hi = bf_load_le32(value + offset + 4);

	bf_store_le64(value + offset, v);
	*check += (bf_load_le32(value + offset) - old_lo) * body_multiplier(j);
	*check += (bf_load_le32(value + offset + 4) - old_hi) * body_multiplier(j + 1);
}

/* A version 2 header becomes version 3: S is computed once. */
static void
ensure_body_check(const uint8_t *value, size_t len, BfHeader *header)
{
	if (header->version == 2)
	{
		header->body_check = value_body_sum(value, len);
		header->version = 3;
	}
}

void
bf_seal(uint8_t *value, size_t len, BfHeader *header)
{
	if (header->version >= 2)
	{
		header->version = 3;
		header->body_check = value_body_sum(value, len);
	}
	bf_write_header(value, header);
}

void
bf_finish(uint8_t *value, size_t len, BfHeader *header)
{
	ensure_body_check(value, len, header);
	bf_write_header(value, header);
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
	value[5] = header->identity.kind;
	value[6] = header->identity.env_encoding;
	value[7] = bf_is_chain(header) ? header->growth : 0;
	bf_store_le32(value + 8, header->identity.tag);
	bf_store_le32(value + 12, bf_is_chain(header) ? header->nsegments : header->nblocks);
	bf_store_le64(value + 16, header->seed);
	bf_store_le64(value + 24, header->capacity);
	bf_store_le64(value + 32, fpr_bits);
	bf_store_le64(value + 40, header->inserted);
	bf_store_le32(value + 52, header->identity.env_locale);
	bf_store_le32(value + 48, header_checksum(value, header->version) +
				  (header->version >= 3 ? header->body_check : 0));
}

/*
 * Decodes and checks the header alone; enough for a probe that reads only
 * the header and one block of a stored filter.  A version 3 header's
 * checksum needs the body (bf_validate): here it yields the body sum the
 * value claims.
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
	header->identity.kind = value[5];
	header->identity.tag = bf_load_le32(value + 8);
	header->identity.env_encoding = value[6];
	header->identity.env_locale = bf_load_le32(value + 52);
	header->nblocks = bf_load_le32(value + 12);
	header->seed = bf_load_le64(value + 16);
	header->capacity = bf_load_le64(value + 24);
	fpr_bits = bf_load_le64(value + 32);
	memcpy(&header->fpr, &fpr_bits, sizeof(fpr_bits));
	header->inserted = bf_load_le64(value + 40);
	header->growth = 0;
	header->nsegments = 1;
	header->body_check = 0;

	if (header->version < BF_FORMAT_VERSION_MIN ||
		header->version > BF_FORMAT_VERSION)
		return BF_ERR_VERSION;
	if (header->layout == BF_LAYOUT_CHAINED && header->version >= 2)
	{
		header->growth = value[7];
		header->nsegments = header->nblocks;
		header->nblocks = 0;
		if (header->k != 0)
			return BF_ERR_K;
		if (header->growth < BF_MIN_GROWTH || header->growth > BF_MAX_GROWTH)
			return BF_ERR_GROWTH;
		if (header->nsegments < 1 || header->nsegments > BF_MAX_SEGMENTS)
			return BF_ERR_SEGMENTS;
	}
	else if (header->layout != BF_LAYOUT_BLOCKED512)
		return BF_ERR_LAYOUT;
	else if (header->k < 1 || header->k > BF_MAX_K)
		return BF_ERR_K;
	else if (value[7] != 0)
		return BF_ERR_RESERVED;
	else if (header->nblocks < 1 || header->nblocks > BF_MAX_BLOCKS)
		return BF_ERR_NBLOCKS;
	if (!bf_key_identity_kind_valid(&header->identity))
		return BF_ERR_KIND;
	if (!bf_key_identity_environment_valid(&header->identity,
										   bf_records_environment(header)))
		return BF_ERR_RESERVED;
	if (header->capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(header->fpr > 0.0 && header->fpr <= 0.5))
		return BF_ERR_FPR;
	if (header->version >= 3)
		header->body_check = bf_load_le32(value + 48) - header_checksum(value, header->version);
	else if (bf_load_le32(value + 48) != header_checksum(value, header->version))
		return BF_ERR_CHECKSUM;
	return BF_OK;
}

/*
 * The one validator for every value that comes from outside: text input,
 * binary receive, the bytea cast and aggregate deserialisation.  With a
 * copy (len bytes at copy, or NULL for none) the value is also copied
 * there, in the pass that sums its body; copy's bytes are undefined when
 * the value is refused.
 */
BfStatus
bf_validate_copy(uint8_t *copy, const uint8_t *value, size_t len, BfHeader *header,
				 BfSizingMemo *memo)
{
	BfStatus	status = bf_read_header(value, len, header);
	BfSegment	segment;

	if (status == BF_OK)
		status = bf_check_segments(value, len, header);
	if (status != BF_OK)
		return status;

	bf_segment_first(value, header, &segment);
	do
	{
		BfSegment	planned;

		if (bf_is_chain(header) &&
			(bf_segment_plan(header, segment.index, &planned, memo) != BF_OK ||
			 planned.nblocks != segment.nblocks || planned.k != segment.k))
			return BF_ERR_SEGMENT_SIZE;

		/*
		 * A filter of no kind has never had a value added.  Were its kind
		 * byte the only thing damaged, accepting it would make every probe
		 * "absent".
		 */
		if (header->identity.kind == BF_KIND_NONE &&
			(header->inserted != 0 || segment.inserted != 0 ||
			 bf_popcount(value + segment.bits,
						 (size_t) segment.nblocks * BF_BLOCK_BYTES) != 0))
			return BF_ERR_EMPTY_HAS_BITS;
	} while (bf_segment_next(value, header, &segment));

	if (copy != NULL)
		memcpy(copy, value, BF_HEADER_SIZE);
	if (header->version < 3)
	{
		if (copy != NULL)
			memcpy(copy + BF_HEADER_SIZE, value + BF_HEADER_SIZE, len - BF_HEADER_SIZE);
		return BF_OK;
	}
	/* the header and the body together (bloom.h, "The body check") */
	if (bf_body_sum_copy(copy != NULL ? copy + BF_HEADER_SIZE : NULL, value + BF_HEADER_SIZE,
						 len - BF_HEADER_SIZE, 0) != header->body_check)
		return BF_ERR_BODY_CHECKSUM;
	return BF_OK;
}

BfStatus
bf_validate(const uint8_t *value, size_t len, BfHeader *header, BfSizingMemo *memo)
{
	return bf_validate_copy(NULL, value, len, header, memo);
}

/* A new value is version 3 (unless version 1), and a zero body sums to 0. */
void
bf_init(uint8_t *value, BfHeader *header, const BfHooks *hooks)
{
	if (header->version >= 2)
		header->version = 3;
	header->body_check = 0;
	bf_write_header(value, header);
	bf_zero(bf_bits(value), (size_t) header->nblocks * BF_BLOCK_BYTES, hooks);
}

/*
 * Whether a and b may be unioned or intersected.  Capacity and target rate
 * must match too, though filters of different ones may share a geometry:
 * otherwise the result's header would depend on the order of the operands,
 * and a parallel union could differ from a serial one.  Chains may differ
 * in length: their segments are sized alike, one by one.
 */
bool
bf_compatible(const BfHeader *a, const BfHeader *b)
{
	return bf_same_hashing(a->version, b->version) &&
		a->capacity == b->capacity &&
		a->fpr == b->fpr &&
		a->layout == b->layout &&
		a->growth == b->growth &&
		a->nblocks == b->nblocks &&
		a->k == b->k &&
		a->seed == b->seed &&
		bf_key_identity_compatible(&a->identity, &b->identity);
}

/* ---------------------------------------------------------------------
 * Key identities
 * ---------------------------------------------------------------------
 */

bool
bf_key_identity_compatible(const BfKeyIdentity *a, const BfKeyIdentity *b)
{
	if (a->kind == BF_KIND_NONE || b->kind == BF_KIND_NONE)
		return true;
	return a->kind == b->kind && a->tag == b->tag &&
		a->env_encoding == b->env_encoding && a->env_locale == b->env_locale;
}

bool
bf_key_identity_kind_valid(const BfKeyIdentity *identity)
{
	return identity->kind <= BF_KIND_LAST &&
		(identity->kind == BF_KIND_OTHER || identity->tag == 0);
}

bool
bf_key_identity_environment_valid(const BfKeyIdentity *identity, bool recorded)
{
	return (recorded && identity->kind == BF_KIND_OTHER) ||
		(identity->env_encoding == 0 && identity->env_locale == 0);
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
 * for a loop with a memory update.
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
static BF_ALWAYS_INLINE void
prefetch_block_for(const uint8_t *bits, uint32_t nblocks, uint64_t hash, bool for_write)
{
#if defined(__GNUC__) || defined(__clang__)
	const uint8_t *block = bits + (size_t) bf_block_of(hash, nblocks) * BF_BLOCK_BYTES;

	/* __builtin_prefetch wants a constant: for_write is one once inlined */
	if (for_write)
	{
		__builtin_prefetch(block, 1);
		__builtin_prefetch(block + BF_BLOCK_BYTES - 1, 1);
	}
	else
	{
		__builtin_prefetch(block, 0);
		__builtin_prefetch(block + BF_BLOCK_BYTES - 1, 0);
	}
#else
	(void) bits;
	(void) nblocks;
	(void) hash;
	(void) for_write;
#endif
}

static inline void
prefetch_block(const uint8_t *bits, uint32_t nblocks, uint64_t hash)
{
	prefetch_block_for(bits, nblocks, hash, true);
}

/*
 * Adds many hashes, with the loop for one k.  Each insert is a likely cache
 * miss in a large filter, so the block of a hash some places ahead is
 * prefetched; grouped hashes (the aggregates group theirs) also walk the
 * blocks in order, and then inserting is bound by instructions, not memory:
 * inlined with a constant k, the salts become constants and the k-loop
 * unrolls, which saves about a tenth.
 *
 * The distance is for a filter that has left the caches between two calls,
 * as the fixed-size aggregate's does while the scan streams the table
 * through them: a miss then goes to memory, and 16 ahead was too close to
 * hide it (docs/performance.md).
 */
static BF_ALWAYS_INLINE void
add_hashes_k(uint8_t *bits, uint32_t nblocks, int k, const uint64_t *hashes, size_t n)
{
	const size_t ahead = 32;

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

/*
 * block_add following S: the block's first 32-bit word is word block_word
 * of the body, and bit pos of a block is bit pos % 32 of its little-endian
 * word pos / 32.  A bit already set changes nothing.
 */
static inline void
block_add_checked(uint8_t *block, size_t block_word, uint64_t hash, int k,
				  uint32_t *check)
{
	for (int i = 0; i < k; i++)
	{
		unsigned	pos = position_in_block(hash, i);
		uint8_t		bit = (uint8_t) (1u << (pos & 7));

		if ((block[pos >> 3] & bit) == 0)
		{
			block[pos >> 3] |= bit;
			*check += (UINT32_C(1) << (pos & 31)) * body_multiplier(block_word + (pos >> 5));
		}
	}
}

/* bf_add_hashes following S, for a segment whose bits start at offset bits. */
static void
add_hashes_checked(uint8_t *value, size_t bits, uint32_t nblocks, int k,
				   const uint64_t *hashes, size_t n, uint32_t *check)
{
	const size_t ahead = 32;
	size_t		first_word = (bits - BF_HEADER_SIZE) / 4;

	for (size_t i = 0; i < ahead && i < n; i++)
		prefetch_block(value + bits, nblocks, hashes[i]);
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	b = bf_block_of(hashes[i], nblocks);

		if (i + ahead < n)
			prefetch_block(value + bits, nblocks, hashes[i + ahead]);
		block_add_checked(value + bits + (size_t) b * BF_BLOCK_BYTES,
						  first_word + (size_t) b * (BF_BLOCK_BYTES / 4), hashes[i], k,
						  check);
	}
}

bool
bf_test_hash(const uint8_t *bits, uint32_t nblocks, int k, uint64_t hash)
{
	return bf_block_test(bits + (size_t) bf_block_of(hash, nblocks) * BF_BLOCK_BYTES,
						 hash, k);
}

/* ---------------------------------------------------------------------
 * Segments and chains
 * ---------------------------------------------------------------------
 */

bool
bf_is_chain(const BfHeader *header)
{
	return header->layout == BF_LAYOUT_CHAINED;
}

/* Reads the descriptor at offset into segment (index already set). */
static void
read_descriptor(const uint8_t *value, size_t offset, BfSegment *segment)
{
	segment->nblocks = bf_load_le32(value + offset);
	segment->k = value[offset + 4];
	segment->inserted = bf_load_le64(value + offset + 8);
	segment->bits = offset + BF_SEGMENT_HEADER_SIZE;
}

BfStatus
bf_check_segments(const uint8_t *value, size_t len, const BfHeader *header)
{
	size_t		offset = BF_HEADER_SIZE;

	if (len > BF_MAX_VALUE_BYTES)
		return BF_ERR_TOO_LARGE;
	if (!bf_is_chain(header))
		return len == bf_value_bytes(header->nblocks) ? BF_OK : BF_ERR_LENGTH;

	for (uint32_t i = 0; i < header->nsegments; i++)
	{
		BfSegment	segment;

		if (len - offset < BF_SEGMENT_HEADER_SIZE)
			return BF_ERR_LENGTH;
		read_descriptor(value, offset, &segment);
		if (segment.k < 1 || segment.k > BF_MAX_K)
			return BF_ERR_K;
		if (segment.nblocks < 1 || segment.nblocks > BF_MAX_BLOCKS)
			return BF_ERR_NBLOCKS;
		if (value[offset + 5] != 0 || value[offset + 6] != 0 || value[offset + 7] != 0)
			return BF_ERR_RESERVED;
		if ((len - segment.bits) / BF_BLOCK_BYTES < segment.nblocks)
			return BF_ERR_LENGTH;
		offset = segment.bits + (size_t) segment.nblocks * BF_BLOCK_BYTES;
	}
	return offset == len ? BF_OK : BF_ERR_LENGTH;
}

/*
 * Capacity grows by the growth factor and the rate halves, segment by
 * segment: fpr/2 + fpr/4 + ... stays below fpr, and halving a double is
 * exact, so every build computes the same sizes.
 */
uint64_t
bf_segment_capacity(const BfHeader *header, uint32_t index)
{
	uint64_t	capacity = header->capacity;

	for (uint32_t i = 0; i < index; i++)
		capacity = capacity > UINT64_MAX / header->growth
			? UINT64_MAX : capacity * header->growth;
	return capacity;
}

BfStatus
bf_segment_plan(const BfHeader *header, uint32_t index, BfSegment *segment,
				BfSizingMemo *memo)
{
	uint64_t	capacity = bf_segment_capacity(header, index);
	double		fpr = header->fpr * 0.5;
	BfSizing	sizing;
	BfStatus	status;

	for (uint32_t i = 0; i < index; i++)
		fpr *= 0.5;
	if (capacity == UINT64_MAX)
		return BF_ERR_TOO_LARGE;
	status = bf_size_for(capacity, fpr, &sizing, memo);
	if (status != BF_OK)
		return status;
	memset(segment, 0, sizeof(*segment));
	segment->index = index;
	segment->capacity = capacity;
	segment->fpr = fpr;
	segment->nblocks = sizing.nblocks;
	segment->k = sizing.k;
	return BF_OK;
}

/*
 * A new chain's header, before its first segment: the caller appends that
 * with bf_chain_next and bf_chain_append, as for every later one.
 */
BfStatus
bf_chain_header(uint64_t capacity, double fpr, uint8_t growth, BfHeader *header)
{
	memset(header, 0, sizeof(*header));
	header->version = BF_FORMAT_VERSION;
	header->layout = BF_LAYOUT_CHAINED;
	header->identity.kind = BF_KIND_NONE;
	header->capacity = capacity;
	header->fpr = fpr;
	header->growth = growth;
	header->nsegments = 0;
	if (growth < BF_MIN_GROWTH || growth > BF_MAX_GROWTH)
		return BF_ERR_GROWTH;
	if (capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(fpr > 0.0 && fpr <= 0.5))
		return BF_ERR_FPR;
	return BF_OK;
}

void
bf_segment_first(const uint8_t *value, const BfHeader *header, BfSegment *segment)
{
	if (!bf_is_chain(header))
	{
		segment->index = 0;
		segment->nblocks = header->nblocks;
		segment->k = header->k;
		segment->capacity = header->capacity;
		segment->fpr = header->fpr;
		segment->inserted = header->inserted;
		segment->bits = BF_HEADER_SIZE;
		return;
	}
	segment->index = 0;
	segment->capacity = header->capacity;
	segment->fpr = header->fpr * 0.5;
	read_descriptor(value, BF_HEADER_SIZE, segment);
}

/* Steps to the next segment; false after the last. */
bool
bf_segment_next(const uint8_t *value, const BfHeader *header, BfSegment *segment)
{
	if (segment->index + 1 >= header->nsegments)
		return false;
	segment->index++;
	segment->capacity = segment->capacity > UINT64_MAX / header->growth
		? UINT64_MAX : segment->capacity * header->growth;
	segment->fpr *= 0.5;
	read_descriptor(value, segment->bits + (size_t) segment->nblocks * BF_BLOCK_BYTES,
					segment);
	return true;
}

void
bf_segment_last(const uint8_t *value, const BfHeader *header, BfSegment *segment)
{
	bf_segment_first(value, header, segment);
	while (bf_segment_next(value, header, segment))
		;
}

/*
 * Stores a chain segment's inserted count in its descriptor; a blocked
 * value keeps its one count in the header instead (bf_write_header).
 */
void
bf_segment_store_inserted(uint8_t *value, const BfSegment *segment)
{
	bf_store_le64(value + segment->bits - BF_SEGMENT_HEADER_SIZE + 8, segment->inserted);
}

BfStatus
bf_chain_next(const BfHeader *header, size_t len, BfSegment *next, size_t *new_len,
			  BfSizingMemo *memo)
{
	BfStatus	status;
	size_t		more;

	if (header->nsegments >= BF_MAX_SEGMENTS)
		return BF_ERR_SEGMENTS;
	status = bf_segment_plan(header, header->nsegments, next, memo);
	if (status != BF_OK)
		return status;
	more = BF_SEGMENT_HEADER_SIZE + (size_t) next->nblocks * BF_BLOCK_BYTES;
	if (more > BF_MAX_VALUE_BYTES - len)
		return BF_ERR_TOO_LARGE;
	next->bits = len + BF_SEGMENT_HEADER_SIZE;
	*new_len = len + more;
	return BF_OK;
}

/* The new segment's zero bits add nothing to S; its descriptor does. */
void
bf_chain_append(uint8_t *value, BfHeader *header, size_t len, const BfSegment *next,
				const BfHooks *hooks)
{
	ensure_body_check(value, len, header);
	bf_zero(value + len, BF_SEGMENT_HEADER_SIZE + (size_t) next->nblocks * BF_BLOCK_BYTES, hooks);
	bf_store_le32(value + len, next->nblocks);
	value[len + 4] = next->k;
	header->body_check += bf_body_sum(value + len, BF_SEGMENT_HEADER_SIZE,
									  (len - BF_HEADER_SIZE) / 4);
	header->nsegments++;
	bf_write_header(value, header);
}

/*
 * Starts loading the block (of every segment, in a chain) that
 * bf_filter_test will read for hash, so that a caller testing many hashes
 * has their cache misses overlap instead of waiting for each in turn.
 */
void
bf_filter_prefetch(const uint8_t *value, const BfHeader *header, uint64_t hash)
{
	BfSegment	segment;

	if (header->layout != BF_LAYOUT_CHAINED)
	{
		prefetch_block_for(value + BF_HEADER_SIZE, header->nblocks, hash, false);
		return;
	}
	bf_segment_first(value, header, &segment);
	do
		prefetch_block_for(value + segment.bits, segment.nblocks, hash, false);
	while (bf_segment_next(value, header, &segment));
}

bool
bf_chain_test(const uint8_t *value, const BfHeader *header, uint64_t hash)
{
	BfSegment	segment;

	bf_segment_first(value, header, &segment);
	do
	{
		if (bf_test_hash(value + segment.bits, segment.nblocks, segment.k, hash))
			return true;
	} while (bf_segment_next(value, header, &segment));
	return false;
}

/*
 * A chain's adds, one by one: each first probes the whole chain, since a
 * value already present must not take room in the last segment, or adding
 * the same values again and again would grow the chain without end.
 */
static size_t
chain_add(uint8_t *value, size_t len, BfHeader *header, const uint64_t *hashes, size_t n,
		  BfSizingMemo *memo)
{
	BfSegment	last;
	int			can_grow = -1;	/* not yet known */
	size_t		taken = 0;

	ensure_body_check(value, len, header);
	bf_segment_last(value, header, &last);
	for (; taken < n; taken++)
	{
		uint64_t	hash = hashes[taken];

		if (!bf_filter_test(value, header, hash))
		{
			if (last.inserted >= last.capacity && can_grow != 0)
			{
				BfSegment	next;
				size_t		new_len;

				can_grow = bf_chain_next(header, len, &next, &new_len, memo) == BF_OK;
				if (can_grow)
					break;
			}
			add_hashes_checked(value, last.bits, last.nblocks, last.k, &hash, 1,
							   &header->body_check);
			last.inserted = bf_count_add(last.inserted, 1);
		}
		header->inserted = bf_count_add(header->inserted, 1);
	}
	store_le64_checked(value, last.bits - BF_SEGMENT_HEADER_SIZE + 8, last.inserted,
					   &header->body_check);
	bf_write_header(value, header);
	return taken;
}

size_t
bf_filter_add(uint8_t *value, size_t len, BfHeader *header, const uint64_t *hashes,
			  size_t n, BfSizingMemo *memo)
{
	if (bf_is_chain(header))
		return chain_add(value, len, header, hashes, n, memo);
	ensure_body_check(value, len, header);
	add_hashes_checked(value, BF_HEADER_SIZE, header->nblocks, header->k, hashes, n,
					   &header->body_check);
	if (header->version < 3)
		header->body_check = 0;		/* version 1 has none */
	header->inserted = bf_count_add(header->inserted, n);
	bf_write_header(value, header);
	return n;
}

/* The caller's memory for a value (BfHooks): *value resized to new_len. */
static BfStatus
resize_value(uint8_t **value, size_t new_len, const BfHooks *hooks)
{
	uint8_t    *resized;

	if (hooks == NULL || hooks->resize == NULL)
		return BF_ERR_NO_MEMORY;
	resized = hooks->resize(hooks->context, *value, new_len);
	if (resized == NULL)
		return BF_ERR_NO_MEMORY;
	*value = resized;
	return BF_OK;
}

BfStatus
bf_chain_grow(uint8_t **value, size_t *len, BfHeader *header, BfSizingMemo *memo,
			  const BfHooks *hooks)
{
	BfSegment	next;
	size_t		new_len;
	BfStatus	status;

	if (!bf_is_chain(header))
		return BF_ERR_LAYOUT;
	status = bf_chain_next(header, *len, &next, &new_len, memo);
	if (status == BF_OK)
		status = resize_value(value, new_len, hooks);
	if (status != BF_OK)
		return status;
	bf_chain_append(*value, header, *len, &next, hooks);
	*len = new_len;
	return BF_OK;
}

/* The header alone first, then its first segment, as every later one. */
BfStatus
bf_chain_create(uint64_t capacity, double fpr, uint8_t growth, uint8_t **value,
				size_t *len, BfHeader *header, BfSizingMemo *memo, const BfHooks *hooks)
{
	BfStatus	status = bf_chain_header(capacity, fpr, growth, header);

	if (status != BF_OK)
		return status;
	*value = NULL;
	*len = BF_HEADER_SIZE;
	return bf_chain_grow(value, len, header, memo, hooks);
}

BfStatus
bf_filter_add_growing(uint8_t **value, size_t *len, BfHeader *header,
					  const uint64_t *hashes, size_t n, BfSizingMemo *memo,
					  const BfHooks *hooks)
{
	for (;;)
	{
		size_t		taken = bf_filter_add(*value, *len, header, hashes, n, memo);
		BfStatus	status;

		if (taken == n)
			return BF_OK;
		status = bf_chain_grow(value, len, header, memo, hooks);
		if (status != BF_OK)
			return status;
		hashes += taken;
		n -= taken;
	}
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

static void
pause_between_slices(const BfHooks *hooks)
{
	if (hooks != NULL && hooks->between_slices != NULL)
		hooks->between_slices(hooks->context);
}

void
bf_zero(uint8_t *bytes, size_t n, const BfHooks *hooks)
{
	for (size_t done = 0; done < n; done += BF_SLICE_BYTES)
	{
		pause_between_slices(hooks);
		memset(bytes + done, 0, n - done < BF_SLICE_BYTES ? n - done : BF_SLICE_BYTES);
	}
}

/* bf_union_bits or bf_intersect_bits, slice by slice. */
static void
combine_slices(uint8_t *dst, const uint8_t *src, size_t nbytes, bool is_union,
			   const BfHooks *hooks)
{
	for (size_t done = 0; done < nbytes; done += BF_SLICE_BYTES)
	{
		size_t		n = nbytes - done < BF_SLICE_BYTES ? nbytes - done : BF_SLICE_BYTES;

		pause_between_slices(hooks);
		if (is_union)
			bf_union_bits(dst + done, src + done, n);
		else
			bf_intersect_bits(dst + done, src + done, n);
	}
}

/*
 * Chains of equal parameters have segments of equal sizes, as the validator
 * makes sure of on input; a stored value is not validated again, so a
 * union checks before it relies on it.
 */
bool
bf_segments_alike(const uint8_t *a, const BfHeader *ah, const uint8_t *b,
				  const BfHeader *bh, BfSegment *sa, BfSegment *sb)
{
	bf_segment_first(a, ah, sa);
	bf_segment_first(b, bh, sb);
	do
	{
		if (sa->nblocks != sb->nblocks || sa->k != sb->k)
			return false;
	} while (bf_segment_next(a, ah, sa) && bf_segment_next(b, bh, sb));
	return true;
}

/*
 * Segment by segment: segment i of two chains with equal parameters has
 * the same size (a filter of fixed size is its one segment).  Where src is
 * longer, dst takes its extra segments as they are.
 */
BfStatus
bf_union_into(uint8_t **dst, size_t *dst_len, BfHeader *d, const uint8_t *src,
			  size_t src_len, const BfHeader *s, const BfHooks *hooks)
{
	size_t		len = *dst_len;
	BfSegment	to;
	BfSegment	from;

	if (!bf_compatible(d, s))
		return BF_ERR_INCOMPATIBLE;
	if (!bf_segments_alike(*dst, d, src, s, &to, &from))
		return BF_ERR_SEGMENT_SIZE;
	if (s->nsegments > d->nsegments)
	{
		BfStatus	status = resize_value(dst, src_len, hooks);

		if (status != BF_OK)
			return status;
		memcpy(*dst + len, src + len, src_len - len);
		*dst_len = src_len;
		d->nsegments = s->nsegments;
	}
	bf_segment_first(*dst, d, &to);
	bf_segment_first(src, s, &from);
	do
	{
		if (to.bits >= len)
			break;				/* the rest came from src whole */
		combine_slices(*dst + to.bits, src + from.bits,
					   (size_t) to.nblocks * BF_BLOCK_BYTES, true, hooks);
		if (bf_is_chain(d))
		{
			to.inserted = bf_count_add(to.inserted, from.inserted);
			bf_segment_store_inserted(*dst, &to);
		}
	} while (bf_segment_next(src, s, &from) && bf_segment_next(*dst, d, &to));

	d->inserted = bf_count_add(d->inserted, s->inserted);
	if (d->identity.kind == BF_KIND_NONE)
		d->identity = s->identity;
	bf_seal(*dst, *dst_len, d);
	return BF_OK;
}

BfStatus
bf_intersect_into(uint8_t *dst, BfHeader *d, const uint8_t *src, const BfHeader *s,
				  const BfHooks *hooks)
{
	if (bf_is_chain(d) || bf_is_chain(s))
		return BF_ERR_LAYOUT;
	if (!bf_compatible(d, s))
		return BF_ERR_INCOMPATIBLE;
	combine_slices(bf_bits(dst), bf_bits_const(src), (size_t) d->nblocks * BF_BLOCK_BYTES,
				   false, hooks);
	d->inserted = d->inserted < s->inserted ? d->inserted : s->inserted;
	if (s->identity.kind == BF_KIND_NONE)
	{
		/* intersecting with an empty filter leaves nothing */
		d->identity = (BfKeyIdentity) {.kind = BF_KIND_NONE};
	}
	bf_seal(dst, bf_value_bytes(d->nblocks), d);
	return BF_OK;
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

/*
 * A segment's bits set and estimated rate, slice by slice: bf_estimate_fpr
 * is a mean over blocks, so the slices' means are summed by weight.
 */
static double
segment_estimates(const uint8_t *value, const BfSegment *segment, uint64_t *set,
				  const BfHooks *hooks)
{
	const uint8_t *bits = value + segment->bits;
	uint32_t	per_slice = (uint32_t) (BF_SLICE_BYTES / BF_BLOCK_BYTES);
	double		sum = 0.0;

	*set = 0;
	for (uint32_t first = 0; first < segment->nblocks; first += per_slice)
	{
		uint32_t	left = segment->nblocks - first;
		uint32_t	n = left < per_slice ? left : per_slice;
		const uint8_t *slice = bits + (size_t) first * BF_BLOCK_BYTES;

		pause_between_slices(hooks);
		*set += bf_popcount(slice, (size_t) n * BF_BLOCK_BYTES);
		sum += bf_estimate_fpr(slice, n, segment->k) * n;
	}
	return sum / segment->nblocks;
}

void
bf_estimate(const uint8_t *value, const BfHeader *header, BfEstimate *estimate,
			const BfHooks *hooks)
{
	BfSegment	segment;

	memset(estimate, 0, sizeof(*estimate));
	bf_segment_first(value, header, &segment);
	do
	{
		uint64_t	set;
		double		rate = segment_estimates(value, &segment, &set, hooks);

		estimate->bits = bf_count_add(estimate->bits,
									  (uint64_t) segment.nblocks * BF_BLOCK_BITS);
		estimate->bits_set += set;
		estimate->capacity = bf_count_add(estimate->capacity, segment.capacity);
		estimate->distinct += bf_estimate_cardinality(segment.nblocks, segment.k, set);
		/* the chance some segment answers "maybe"; with one, exactly its rate */
		estimate->fpr += rate - estimate->fpr * rate;
		estimate->k = segment.k;
	} while (bf_segment_next(value, header, &segment));
	estimate->fill = (double) estimate->bits_set / (double) estimate->bits;
	estimate->over_capacity =
		estimate->distinct > estimate->capacity * BF_OVER_CAPACITY_MARGIN;
}
