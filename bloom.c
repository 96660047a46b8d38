/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  The pure core of the bloomfilter extension (see bloom.h for the API
 *	  and the serialised format).
 *
 * Layout
 * ------
 * The filter is an array of 512-bit (64-byte, one cache line) blocks.  A
 * value's 64-bit hash picks one block by multiply-shift of its high 32 bits,
 * and all k bits of the value are set inside that block.  A probe therefore
 * touches one cache line, where a classic Bloom filter touches k.  The price
 * is a little space: blocks receive unequal numbers of values, and the fuller
 * ones answer "maybe" more often.
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
 * Sizing
 * ------
 * With n values in B blocks the load of a block is close to Poisson with mean
 * lambda = n / B.  A block holding j values has each bit set with probability
 * 1 - (1 - 1/512)^(j k), and an absent value is reported present when all its
 * k bits are set, so the false-positive rate is
 *
 *		fpr(lambda, k) = sum_j Poisson(j; lambda) (1 - (1 - 1/512)^(j k))^k
 *
 * For each k we find the largest lambda with fpr <= target by bisection (it
 * does not depend on n) and keep the k that needs the fewest bits.  At 1%
 * that is k = 6 and 9.9 bits per value, against 9.6 for an unblocked filter.
 *
 * XXX: sizing uses exp() from libm; two servers whose libm differ in the last
 * ulp could, at an exact boundary, size the same (capacity, fpr) differently,
 * which would make their filters impossible to union.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"

#include <math.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

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
			return "Unsupported format version";
		case BF_ERR_LAYOUT:
			return "Unknown layout";
		case BF_ERR_K:
			return "Number of hash positions is out of range 1..32";
		case BF_ERR_KIND:
			return "Unknown key kind or key tag";
		case BF_ERR_RESERVED:
			return "Reserved header field is not zero";
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
			return "Filter would exceed the 1 GB value limit";
	}
	return "unknown status";
}

/* ---------------------------------------------------------------------
 * Sizing
 * ---------------------------------------------------------------------
 */

static double
power_int(double base, int exponent)
{
	double		result = 1.0;

	while (exponent > 0)
	{
		if (exponent & 1)
			result *= base;
		base *= base;
		exponent >>= 1;
	}
	return result;
}

/*
 * The usual approximation: a block holding j values has each bit set with
 * probability 1 - (1 - 1/512)^(j k), taken as if bits were independent.  It
 * is slightly optimistic (by Jensen's inequality), so it serves only to
 * bracket the search for the exact answer below.
 */
static double
approximate_fpr(double load_per_block, int k)
{
	const double bit_stays_clear = power_int(1.0 - 1.0 / BF_BLOCK_BITS, k);
	double		weight = exp(-load_per_block);
	double		clear_after_j = 1.0;
	double		sum = 0.0;
	int			last = (int) (load_per_block + 12.0 * sqrt(load_per_block) + 30.0);

	for (int j = 0; j <= last; j++)
	{
		sum += weight * power_int(1.0 - clear_after_j, k);
		clear_after_j *= bit_stays_clear;
		weight *= load_per_block / (j + 1);
	}
	return sum;
}

/* Values per block beyond which a Poisson(load) tail no longer matters. */
static int
last_load_considered(double load_per_block)
{
	return (int) (load_per_block + 12.0 * sqrt(load_per_block) + 30.0);
}

/*
 * rate[j] = probability that an absent value is "present" in a block that
 * holds j values, for j = 0..last.  It is E[(C/512)^k], C being the number of
 * bits set by j k uniformly thrown positions; C's distribution is followed
 * exactly, one position at a time.
 */
static void
block_rates(int k, int last, double *rate)
{
	double		occupancy[BF_BLOCK_BITS + 1] = {1.0};	/* P(C = c) */
	double		hit[BF_BLOCK_BITS + 1];
	int			highest = 0;	/* occupancy[c] is 0 above this */

	for (int c = 0; c <= BF_BLOCK_BITS; c++)
		hit[c] = power_int((double) c / BF_BLOCK_BITS, k);

	rate[0] = 0.0;
	for (int j = 1; j <= last; j++)
	{
		double		sum = 0.0;

		for (int t = 0; t < k; t++)
		{
			if (highest < BF_BLOCK_BITS)
				highest++;
			for (int c = highest; c > 0; c--)
				occupancy[c] = occupancy[c] * c / BF_BLOCK_BITS +
					occupancy[c - 1] * (BF_BLOCK_BITS - c + 1) / BF_BLOCK_BITS;
			occupancy[0] = 0.0;
		}
		for (int c = 0; c <= highest; c++)
			sum += occupancy[c] * hit[c];
		rate[j] = sum;
	}
}

/* Poisson(load) mixture of the per-load rates. */
static double
mixture_fpr(double load_per_block, const double *rate, int last)
{
	double		weight = exp(-load_per_block);
	double		sum = 0.0;

	for (int j = 0; j <= last; j++)
	{
		sum += weight * rate[j];
		weight *= load_per_block / (j + 1);
	}
	return sum;
}

/* Most values a rate table covers: a load of 700 per block, see below. */
#define MAX_RATE_ENTRIES 1100

/*
 * Exact false-positive rate of the blocked layout when blocks hold Poisson
 * (load_per_block) values each; see the file header.
 */
double
bf_blocked_fpr(double load_per_block, int k)
{
	double		rate[MAX_RATE_ENTRIES];
	int			last = last_load_considered(load_per_block);

	if (last >= MAX_RATE_ENTRIES)
		last = MAX_RATE_ENTRIES - 1;
	block_rates(k, last, rate);
	return mixture_fpr(load_per_block, rate, last);
}

/*
 * Largest load per block with a rate <= fpr for this k, by bisection between
 * low and high, with rate(low) <= fpr assumed.
 */
static double
bisect_load(double fpr, double low, double high, bool exact, int k)
{
	double		rate[MAX_RATE_ENTRIES];
	int			last = last_load_considered(high);

	if (exact)
		block_rates(k, last, rate);
	for (int i = 0; i < 50; i++)
	{
		double		mid = (low + high) / 2.0;
		double		mid_rate = exact ? mixture_fpr(mid, rate, last)
			: approximate_fpr(mid, k);

		if (mid_rate <= fpr)
			low = mid;
		else
			high = mid;
	}
	return low;
}

/*
 * Largest load per block that keeps the rate at or below fpr with this k,
 * or 0 if no load reaches it.  The approximation overestimates the load, so
 * it bounds the exact search and keeps its table small.
 */
static double
max_load_for(double fpr, int k, double approximate)
{
	const double smallest = 1e-6;

	if (approximate <= 0.0 || bf_blocked_fpr(smallest, k) > fpr)
		return 0.0;
	return bisect_load(fpr, smallest, approximate, true, k);
}

static double
approximate_max_load_for(double fpr, int k)
{
	const double smallest = 1e-6;

	if (approximate_fpr(smallest, k) > fpr)
		return 0.0;
	return bisect_load(fpr, smallest, 700.0, false, k);	/* exp(-700) is normal */
}

/*
 * Picks k and the load per block for fpr.  The bits needed per value fall
 * and then rise with k; the cheap approximation finds the bottom, and the
 * exact rate decides among its neighbours.  Sizing depends on fpr alone, and
 * callers ask for the same fpr over and over (one filter per group of a
 * GROUP BY), so the last answer is remembered.
 */
static void
choose_k_and_load(double fpr, int *k_out, double *load_out)
{
	static double memo_fpr = -1.0;
	static int	memo_k;
	static double memo_load;
	double		approximate[BF_MAX_K + 1] = {0};
	int			approximate_best = 0;

	if (fpr == memo_fpr)
	{
		*k_out = memo_k;
		*load_out = memo_load;
		return;
	}

	for (int k = 1; k <= BF_MAX_K; k++)
	{
		approximate[k] = approximate_max_load_for(fpr, k);
		if (approximate[k] > approximate[approximate_best])
			approximate_best = k;
	}

	*k_out = 0;
	*load_out = 0.0;
	for (int k = approximate_best - 2; k <= approximate_best + 2; k++)
	{
		double		load;

		if (k < 1 || k > BF_MAX_K)
			continue;
		load = max_load_for(fpr, k, approximate[k]);
		if (load > *load_out)
		{
			*load_out = load;
			*k_out = k;
		}
	}
	memo_fpr = fpr;
	memo_k = *k_out;
	memo_load = *load_out;
}

size_t
bf_value_bytes(uint32_t nblocks)
{
	return BF_HEADER_SIZE + (size_t) nblocks * BF_BLOCK_BYTES;
}

/*
 * Chooses k and the block count for capacity values at false-positive rate
 * fpr: the one sizing routine every constructor uses.
 */
BfStatus
bf_size_for(uint64_t capacity, double fpr, BfSizing *out)
{
	double		best_load = 0.0;
	int			best_k = 0;
	double		blocks_needed;

	memset(out, 0, sizeof(*out));
	if (capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(fpr > 0.0 && fpr <= 0.5))
		return BF_ERR_FPR;

	choose_k_and_load(fpr, &best_k, &best_load);
	if (best_k == 0)
		return BF_ERR_TOO_LARGE;	/* fpr below what any k reaches */

	out->k = (uint8_t) best_k;
	out->max_capacity = (uint64_t) floor(best_load * BF_MAX_BLOCKS);
	blocks_needed = ceil((double) capacity / best_load);
	if (blocks_needed > BF_MAX_BLOCKS)
		return BF_ERR_TOO_LARGE;
	out->nblocks = blocks_needed < 1.0 ? 1 : (uint32_t) blocks_needed;
	out->bits_per_element = (double) out->nblocks * BF_BLOCK_BITS / (double) capacity;
	return BF_OK;
}

/* ---------------------------------------------------------------------
 * Header
 * ---------------------------------------------------------------------
 */

static void
store_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
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

static uint16_t
load_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
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
header_checksum(const uint8_t *value)
{
	return (uint32_t) XXH3_64bits(value, 48);
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
	store_u16(value + 6, 0);
	store_u32(value + 8, header->key_tag);
	store_u32(value + 12, header->nblocks);
	store_u64(value + 16, header->seed);
	store_u64(value + 24, header->capacity);
	store_u64(value + 32, fpr_bits);
	store_u64(value + 40, header->inserted);
	store_u32(value + 48, header_checksum(value));
	store_u32(value + 52, 0);
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
	header->nblocks = load_u32(value + 12);
	header->seed = load_u64(value + 16);
	header->capacity = load_u64(value + 24);
	fpr_bits = load_u64(value + 32);
	memcpy(&header->fpr, &fpr_bits, sizeof(fpr_bits));
	header->inserted = load_u64(value + 40);

	if (header->version != BF_FORMAT_VERSION)
		return BF_ERR_VERSION;
	if (header->layout != BF_LAYOUT_BLOCKED512)
		return BF_ERR_LAYOUT;
	if (header->k < 1 || header->k > BF_MAX_K)
		return BF_ERR_K;
	if (header->key_kind > BF_KIND_LAST ||
		(header->key_kind != BF_KIND_OTHER && header->key_tag != 0))
		return BF_ERR_KIND;
	if (load_u16(value + 6) != 0 || load_u32(value + 52) != 0)
		return BF_ERR_RESERVED;
	if (header->nblocks < 1 || header->nblocks > BF_MAX_BLOCKS)
		return BF_ERR_NBLOCKS;
	if (header->capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(header->fpr > 0.0 && header->fpr <= 0.5))
		return BF_ERR_FPR;
	if (load_u32(value + 48) != header_checksum(value))
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
	return a->key_kind == b->key_kind && a->key_tag == b->key_tag;
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
	return a->capacity == b->capacity &&
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

uint64_t
bf_hash(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

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

void
bf_block_add(uint8_t *block, uint64_t hash, int k)
{
	for (int i = 0; i < k; i++)
	{
		unsigned	pos = position_in_block(hash, i);

		block[pos >> 3] |= (uint8_t) (1u << (pos & 7));
	}
}

bool
bf_block_test(const uint8_t *block, uint64_t hash, int k)
{
	for (int i = 0; i < k; i++)
	{
		unsigned	pos = position_in_block(hash, i);

		if ((block[pos >> 3] & (1u << (pos & 7))) == 0)
			return false;
	}
	return true;
}

/*
 * Adds many hashes.  Each insert is a likely cache miss in a large filter,
 * so the block of a hash a few places ahead is prefetched; sorted hashes
 * (the aggregates sort theirs) also walk the blocks in order.
 */
/* Prefetches the block a hash maps to, where the compiler can. */
static inline void
prefetch_block(const uint8_t *bits, uint32_t nblocks, uint64_t hash)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(bits + (size_t) bf_block_of(hash, nblocks) * BF_BLOCK_BYTES, 1);
#else
	(void) bits;
	(void) nblocks;
	(void) hash;
#endif
}

void
bf_add_hashes(uint8_t *bits, uint32_t nblocks, int k,
			  const uint64_t *hashes, size_t n)
{
	const size_t ahead = 8;

	for (size_t i = 0; i < n; i++)
	{
		if (i + ahead < n)
			prefetch_block(bits, nblocks, hashes[i + ahead]);
		bf_block_add(bits + (size_t) bf_block_of(hashes[i], nblocks) * BF_BLOCK_BYTES,
					 hashes[i], k);
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

void
bf_union_bits(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	for (size_t i = 0; i < nbytes; i++)
		dst[i] |= src[i];
}

void
bf_intersect_bits(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	for (size_t i = 0; i < nbytes; i++)
		dst[i] &= src[i];
}

/* ---------------------------------------------------------------------
 * Fill and estimates
 * ---------------------------------------------------------------------
 */

static inline int
popcount64(uint64_t word)
{
#if defined(__GNUC__) || defined(__clang__)
	return __builtin_popcountll(word);
#else
	int			count = 0;

	while (word)
	{
		word &= word - 1;
		count++;
	}
	return count;
#endif
}

uint64_t
bf_popcount(const uint8_t *bits, size_t nbytes)
{
	uint64_t	count = 0;
	size_t		i = 0;

	for (; i + 8 <= nbytes; i += 8)
	{
		uint64_t	word;

		memcpy(&word, bits + i, sizeof(word));
		count += popcount64(word);
	}
	for (; i < nbytes; i++)
		count += popcount64(bits[i]);
	return count;
}

/*
 * Distinct values implied by the fill: under Poisson loads a bit stays clear
 * with probability exp(-lambda (1 - (1 - 1/512)^k)); solve for lambda.
 */
double
bf_estimate_cardinality(uint32_t nblocks, int k, uint64_t bits_set)
{
	double		total = (double) nblocks * BF_BLOCK_BITS;
	double		fill = (double) bits_set / total;
	double		per_value = 1.0 - power_int(1.0 - 1.0 / BF_BLOCK_BITS, k);

	if (bits_set >= (uint64_t) total)
		return INFINITY;
	return -log1p(-fill) / per_value * nblocks;
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

		sum += power_int((double) set / BF_BLOCK_BITS, k);
	}
	return sum / nblocks;
}

/* ---------------------------------------------------------------------
 * Hash buffers
 * ---------------------------------------------------------------------
 */

static void
insertion_sort(uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		uint64_t	v = a[i];
		size_t		j = i;

		while (j > 0 && a[j - 1] > v)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/*
 * In-place most-significant-digit radix sort (American flag sort).  Hashes
 * are uniform, so after the first level the buckets fit in cache, and after
 * the second they are small enough for insertion sort.  The first level uses
 * wider digits on large inputs, because it is the only pass that misses the
 * cache, and fewer, larger buckets would leave a third pass to do.
 */
#define RADIX_MAX_BITS 11

static void
radix_sort_level(uint64_t *a, size_t n, int shift, int bits)
{
	size_t		head[1 << RADIX_MAX_BITS];
	size_t		tail[1 << RADIX_MAX_BITS];
	const int	nbuckets = 1 << bits;
	const uint64_t mask = (uint64_t) nbuckets - 1;
	size_t		start = 0;

	if (n <= 48)
	{
		insertion_sort(a, n);
		return;
	}

	memset(tail, 0, sizeof(size_t) * nbuckets);
	for (size_t i = 0; i < n; i++)
		tail[(a[i] >> shift) & mask]++;
	for (int b = 0; b < nbuckets; b++)
	{
		size_t		count = tail[b];

		head[b] = start;
		start += count;
		tail[b] = start;
	}

	for (int b = 0; b < nbuckets; b++)
	{
		while (head[b] < tail[b])
		{
			uint64_t	v = a[head[b]];
			int			digit = (int) ((v >> shift) & mask);

			while (digit != b)
			{
				uint64_t	displaced = a[head[digit]];

				a[head[digit]++] = v;
				v = displaced;
				digit = (int) ((v >> shift) & mask);
			}
			a[head[b]++] = v;
		}
	}

	if (shift == 0)
		return;
	start = 0;
	for (int b = 0; b < nbuckets; b++)
	{
		int			next_bits = shift >= 8 ? 8 : shift;

		radix_sort_level(a + start, tail[b] - start, shift - next_bits, next_bits);
		start = tail[b];
	}
}

/*
 * Sorts hashes.  With scratch (room for n hashes) the first level scatters
 * into it instead of permuting in place: the in-place cycles chain one cache
 * miss to the next, while scattered writes overlap, which makes the one pass
 * over a buffer larger than the cache several times faster.
 */
void
bf_sort_hashes(uint64_t *hashes, size_t n, uint64_t *scratch)
{
	const int	bits = n > 65536 ? RADIX_MAX_BITS : 8;
	const int	shift = 64 - bits;
	size_t		start[1 << RADIX_MAX_BITS];
	size_t		next[1 << RADIX_MAX_BITS];
	size_t		position = 0;

	if (scratch == NULL || n <= 65536)
	{
		radix_sort_level(hashes, n, shift, bits);
		return;
	}

	memset(next, 0, sizeof(next));
	for (size_t i = 0; i < n; i++)
		next[hashes[i] >> shift]++;
	for (int b = 0; b < (1 << bits); b++)
	{
		size_t		count = next[b];

		start[b] = next[b] = position;
		position += count;
	}
	for (size_t i = 0; i < n; i++)
		scratch[next[hashes[i] >> shift]++] = hashes[i];
	for (int b = 0; b < (1 << bits); b++)
		radix_sort_level(scratch + start[b], next[b] - start[b], shift - 8, 8);
	memcpy(hashes, scratch, n * sizeof(uint64_t));
}

/* Removes adjacent duplicates from a sorted buffer. */
size_t
bf_unique_hashes(uint64_t *hashes, size_t n)
{
	size_t		kept = 0;

	for (size_t i = 0; i < n; i++)
		if (kept == 0 || hashes[i] != hashes[kept - 1])
			hashes[kept++] = hashes[i];
	return kept;
}

/*
 * Merges two sorted buffers of distinct hashes into out (room for na + nb)
 * and returns how many distinct hashes it holds.
 */
size_t
bf_merge_hashes(const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
				uint64_t *out)
{
	size_t		i = 0;
	size_t		j = 0;
	size_t		n = 0;

	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			out[n++] = a[i++];
		else if (b[j] < a[i])
			out[n++] = b[j++];
		else
		{
			out[n++] = a[i++];
			j++;
		}
	}
	while (i < na)
		out[n++] = a[i++];
	while (j < nb)
		out[n++] = b[j++];
	return n;
}
