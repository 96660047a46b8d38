/*-------------------------------------------------------------------------
 *
 * test_bloom.c
 *	  Unit tests of the pure core (bloom.c, sizing.c, hashbuf.c): sizing, layout, the validator,
 *	  set algebra, estimates, and a statistical check that the measured
 *	  false-positive rate stays at the target; and the same for the chained
 *	  layout: growth, segment sizes, values already present, a chain that
 *	  cannot grow, and its validator; and the whole-value operations the
 *	  server and the client share: growth in borrowed memory, union of
 *	  chains, intersection, estimates over segments and slices.
 *
 * Built with plain cc, no PostgreSQL.  Prints one line per check and a final
 * "N passed, N failed" line; exits non-zero when a check fails.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"
#include "sizing.h"
#include "hashbuf.h"
#include "../compare_u64.h"
#include "../fuzz/fuzz_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"

/* The tests' one memo of rates sized (sizing.h), as the server has one. */
static BfSizingMemo sizing_memo;


/* Hash of an integer key as the SQL glue hashes int8: 8 little-endian bytes. */
static uint64_t
key_hash(uint64_t key, uint64_t seed)
{
	uint8_t		bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t) (key >> (8 * i));
	return bf_hash(bytes, sizeof(bytes), seed);
}

/* Allocates a filter sized for (capacity, fpr); the caller frees it. */
static uint8_t *
new_filter(uint64_t capacity, double fpr, BfHeader *header)
{
	BfSizing	sizing;
	uint8_t    *value;

	if (bf_size_for(capacity, fpr, &sizing, &sizing_memo) != BF_OK)
		abort();
	bf_fixed_header(capacity, fpr, &sizing, header);
	header->identity.kind = BF_KIND_NUMBER;
	value = malloc(bf_value_bytes(sizing.nblocks));
	bf_init(value, header, NULL);
	return value;
}

static void
add_keys(uint8_t *value, BfHeader *header, uint64_t first, uint64_t count)
{
	for (uint64_t key = first; key < first + count; key++)
	{
		uint64_t	h = key_hash(key, header->seed);

		bf_add_hashes(bf_bits(value), header->nblocks, header->k, &h, 1);
	}
	header->inserted += count;
	bf_seal(value, bf_value_bytes(header->nblocks), header);
}

/* Whether two sizings decided the same. */
static bool
same_sizing(const BfSizing *a, const BfSizing *b)
{
	return a->nblocks == b->nblocks && a->k == b->k && a->max_capacity == b->max_capacity &&
		a->hash_limited == b->hash_limited && a->bits_per_element == b->bits_per_element;
}

static void
test_sizing(void)
{
	BfSizing	s;
	double		previous = 0;
	int			monotone = 1;

	check(bf_size_for(1000000, 0.01, &s, &sizing_memo) == BF_OK, "sizing 1M at 1% succeeds");
	check(s.k == 6, "k is 6 at 1% for the blocked layout");
	check(s.bits_per_element > 9.8 && s.bits_per_element <= 10.0,
		  "1% costs between 9.8 and 10.0 bits per value");
	check(bf_blocked_fpr((double) 1000000 / s.nblocks, s.k) <= 0.01,
		  "the chosen size meets the target by the formula");
	check(bf_size_for(1, 0.01, &s, &sizing_memo) == BF_OK && s.nblocks == 1, "capacity 1 gives one block");
	check(bf_size_for(0, 0.01, &s, &sizing_memo) == BF_ERR_CAPACITY, "capacity 0 is rejected");
	check(bf_size_for(10, 0.0, &s, &sizing_memo) == BF_ERR_FPR, "fpr 0 is rejected");
	check(bf_size_for(10, 0.6, &s, &sizing_memo) == BF_ERR_FPR, "fpr 0.6 is rejected");
	check(bf_size_for(10, NAN, &s, &sizing_memo) == BF_ERR_FPR, "fpr NaN is rejected");
	check(bf_size_for(10, 0.5, &s, &sizing_memo) == BF_OK && s.k == 1, "fpr 0.5 is allowed and uses k=1");
	check(bf_size_for(1, 5e-324, &s, &sizing_memo) == BF_ERR_FPR_UNREACHABLE,
		  "the smallest subnormal rate is below what the layout supports");
	check(bf_size_for(1, nextafter(BF_MIN_FPR, 0.0), &s, &sizing_memo) == BF_ERR_FPR_UNREACHABLE,
		  "just below the lowest supported rate is unreachable");
	check(bf_size_for(1, BF_MIN_FPR, &s, &sizing_memo) == BF_OK && s.max_capacity >= 10,
		  "at the lowest supported rate ten values still fit");
	check(bf_size_for(1, 1e-15, &s, &sizing_memo) == BF_OK && s.max_capacity <= 1e-15 * 0x1p64,
		  "at 1e-15 at most 18,446 values fit: one in 2^64 absent values shares a present value's hash");
	check(bf_size_for(UINT64_C(1000000000000000), 1e-6, &s, &sizing_memo) == BF_ERR_TOO_LARGE &&
		  !s.hash_limited, "1e15 values at 1e-6 exceed the size limit");
	check(s.max_capacity > 150000000 && s.max_capacity < 160000000,
		  "the size limit at 1e-6 holds about 155M values");
	check(bf_size_for(s.max_capacity, 1e-6, &s, &sizing_memo) == BF_OK && s.nblocks == BF_MAX_BLOCKS,
		  "that many take the largest filter");
	check(bf_value_bytes(BF_MAX_BLOCKS) <= BF_MAX_VALUE_BYTES &&
		  bf_value_bytes(BF_MAX_BLOCKS + 1) > BF_MAX_VALUE_BYTES,
		  "the block limit is the value limit's");
	check(6 + (BF_MAX_VALUE_BYTES + 2) / 3 * 4 <= 1000000006,
		  "the text form of the largest value, bloom: and base64, is at most 1,000,000,006 characters");
	check(1000000006 + 64 * 1024 * 1024 < 0x3FFFFFFF,
		  "which leaves over 64 MB of PostgreSQL's 1 GB allocation limit for a COPY line's other columns");
	check(bf_size_for(100000, 1e-15, &s, &sizing_memo) == BF_ERR_TOO_LARGE && s.hash_limited,
		  "100,000 values at 1e-15 are too many for the 64-bit hash, not for the size limit");
	for (double p = 0.5; p > 1e-9; p /= 3)
	{
		bf_size_for(100000, p, &s, &sizing_memo);
		if (s.bits_per_element < previous)
			monotone = 0;
		previous = s.bits_per_element;
	}
	check(monotone, "bits per value grow as the target rate falls");
	bf_size_for(1000000, 1e-9, &s, &sizing_memo);
	check(s.k >= 16 && s.k <= BF_MAX_K, "tiny rates use many hash positions");
}

/*
 * The sizing margin: the block count is the fewest whose 95% point of one
 * filter's rate meets the target, never fewer blocks for more values, and
 * the margin costs bits only where blocks are few.
 */
static void
test_sizing_margin(void)
{
	const double targets[] = {0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6, 1e-9};
	int			fewest = 1;
	int			monotone = 1;
	BfSizing	s;
	int			k;
	double		load;
	char		what[160];

	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
	{
		uint32_t	previous = 0;

		for (uint64_t n = 1; n <= 3000; n += n < 200 ? 1 : 7)
		{
			if (bf_size_for(n, targets[t], &s, &sizing_memo) != BF_OK)
				abort();
			if (s.nblocks < previous)
				monotone = 0;
			previous = s.nblocks;
			if (!(bf_rate_quantile(n, s.nblocks, targets[t], &sizing_memo) <= targets[t]) ||
				(s.nblocks > 1 && bf_rate_quantile(n, s.nblocks - 1, targets[t], &sizing_memo) <= targets[t]))
				fewest = 0;
		}
	}
	check(fewest, "the block count is the fewest whose 95% point meets the target");
	check(monotone, "more values never get fewer blocks");

	for (uint64_t n = 1000000; n <= UINT64_C(100000000); n *= 10)
	{
		bf_size_for(n, 0.01, &s, &sizing_memo);
		snprintf(what, sizeof(what), "%llu values at 1%%: %.4f bits per value, at most 10.0",
				 (unsigned long long) n, s.bits_per_element);
		check(s.bits_per_element <= 10.0, what);
	}

	bf_sizing_search(0.01, &k, &load);
	bf_size_for(100, 0.01, &s, &sizing_memo);
	check(s.bits_per_element > 1.2 * BF_BLOCK_BITS / load,
		  "100 values at 1% pay for the margin: over 20% more bits than on average");
	bf_size_for(1000000, 0.01, &s, &sizing_memo);
	check(s.bits_per_element < 1.002 * BF_BLOCK_BITS / load,
		  "a million values at 1% barely do: under 0.2% more bits");
	bf_sizing_search(1e-6, &k, &load);
	bf_size_for(1000000, 1e-6, &s, &sizing_memo);
	check(s.bits_per_element < 1.01 * BF_BLOCK_BITS / load,
		  "a million values at 1e-6: under 1% more bits");

	{
		BfSizingMemo *fresh = calloc(1, sizeof(BfSizingMemo));
		BfSizing	again;
		BfSizing	none;
		int			same = 1;

		if (fresh == NULL)
			abort();
		for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
		{
			bf_size_for(12345, targets[t], &s, &sizing_memo);
			bf_sizing_memo_clear(fresh);
			bf_size_for(12345, targets[t], &again, fresh);
			bf_size_for(12345, targets[t], &none, NULL);
			same &= same_sizing(&s, &again) && same_sizing(&s, &none);
		}
		check(same, "sizing from a fresh memo, and from none, gives the remembered answer");
		free(fresh);
	}
}


/*
 * The promise itself, on the core: of 200 filters filled to capacity with
 * different keys, at most 17 (8.5%) have their own rate above the target.
 * Were 5% of all filters above it, more than 17 of 200 would be one time
 * in 80; the keys are fixed, so the result is too.  The sizing before the
 * margin had up to 94 of 200 above here, in 7 of the 12 cases.
 */
static void
test_single_filter_rates(void)
{
	const uint64_t capacities[] = {100, 103, 1000, 10000};
	const double targets[] = {0.01, 0.001, 1e-6};

	for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++)
		for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
		{
			uint64_t	n = capacities[c];
			int			above = 0;
			char		what[160];

			for (uint64_t filter = 0; filter < 200; filter++)
			{
				BfHeader	header;
				uint8_t    *value = new_filter(n, targets[t], &header);

				add_keys(value, &header, filter * 100000, n);
				above += bf_estimate_fpr(bf_bits(value), header.nblocks, header.k) > targets[t];
				free(value);
			}
			snprintf(what, sizeof(what),
					 "n=%llu p=%g: %d of 200 filters at capacity above the target (at most 17)",
					 (unsigned long long) n, targets[t], above);
			check(above <= 17, what);
		}
}

static void
test_header_and_validator(void)
{
	BfHeader	header;
	BfHeader	decoded;
	uint8_t    *value = new_filter(1000, 0.01, &header);
	size_t		len = bf_value_bytes(header.nblocks);
	uint8_t    *copy = malloc(len + 64);

	add_keys(value, &header, 0, 1000);
	check(bf_validate(value, len, &decoded, &sizing_memo) == BF_OK, "a fresh filter validates");
	check(decoded.k == header.k && decoded.nblocks == header.nblocks &&
		  decoded.inserted == 1000 && decoded.fpr == 0.01 &&
		  decoded.capacity == 1000, "the header round-trips");
	check(bf_validate(value, 10, &decoded, &sizing_memo) == BF_ERR_TRUNCATED, "truncated header is rejected");
	check(bf_validate(value, len - 1, &decoded, &sizing_memo) == BF_ERR_LENGTH, "truncated bits are rejected");
	memcpy(copy, value, len);
	check(bf_validate(copy, len + 64, &decoded, &sizing_memo) == BF_ERR_LENGTH, "oversized value is rejected");

#define MUTATED(offset, byte, expected, what) \
	do { \
		memcpy(copy, value, len); \
		copy[offset] = (byte); \
		check(bf_validate(copy, len, &decoded, &sizing_memo) == (expected), what); \
	} while (0)
	MUTATED(0, 'X', BF_ERR_MAGIC, "bad magic is rejected");
	MUTATED(2, 4, BF_ERR_VERSION, "an unknown later version is rejected");
	MUTATED(2, 0, BF_ERR_VERSION, "version 0 is rejected");
	MUTATED(3, 7, BF_ERR_LAYOUT, "unknown layout is rejected");
	MUTATED(4, 0, BF_ERR_K, "k = 0 is rejected");
	MUTATED(4, 33, BF_ERR_K, "k = 33 is rejected");
	MUTATED(5, 99, BF_ERR_KIND, "unknown key kind is rejected");
	MUTATED(6, 1, BF_ERR_RESERVED, "an environment on a number filter is rejected");
	MUTATED(7, 1, BF_ERR_RESERVED, "non-zero reserved byte 7 is rejected");
	MUTATED(53, 1, BF_ERR_RESERVED, "non-zero trailing reserved field is rejected");
	MUTATED(4, header.k + 1, BF_ERR_BODY_CHECKSUM, "a changed k fails the checksum");
	MUTATED(17, 1, BF_ERR_BODY_CHECKSUM, "a changed seed fails the checksum");
	MUTATED(5, BF_KIND_TEXT, BF_ERR_BODY_CHECKSUM, "a changed key kind fails the checksum");
	MUTATED(15, 0x40, BF_ERR_NBLOCKS, "a huge block count is rejected");
	MUTATED(60, copy[60] ^ 1, BF_ERR_BODY_CHECKSUM,
			"a flip inside the bit array fails the version 3 body check");

	/* Every single-byte change of the body is caught, exactly (bloom.h). */
	{
		int			all_caught = 1;

		for (size_t at = BF_HEADER_SIZE; at < len; at++)
			for (int delta = 1; delta < 256; delta += 37)
			{
				memcpy(copy, value, len);
				copy[at] ^= (uint8_t) delta;
				if (bf_validate(copy, len, &decoded, &sizing_memo) != BF_ERR_BODY_CHECKSUM)
					all_caught = 0;
			}
		check(all_caught, "every single-byte change of the bit array is rejected");
	}

	/* Version 2 (1.0): header checksum and structure only. */
	{
		BfHeader	v2 = header;

		v2.version = 2;
		memcpy(copy, value, len);
		bf_write_header(copy, &v2);
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_OK && decoded.version == 2,
			  "a version 2 value still validates");
		copy[60] ^= 1;
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_OK,
			  "a version 2 value has no body check: a flipped bit is not seen");
		copy[4] ^= 1;
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_ERR_CHECKSUM,
			  "a version 2 value's header checksum still holds");
		copy[4] ^= 1;
		copy[60] ^= 1;
		v2.version = 2;
		check(bf_filter_add(copy, len, &v2, &(uint64_t) {42}, 1, &sizing_memo) == 1 &&
			  v2.version == 3 && bf_validate(copy, len, &decoded, &sizing_memo) == BF_OK &&
			  decoded.version == 3,
			  "adding to a version 2 value makes it version 3, with its body check");
	}

	/* Every single-bit flip of the header is caught. */
	{
		int			all_caught = 1;

		for (int bit = 0; bit < BF_HEADER_SIZE * 8; bit++)
		{
			memcpy(copy, value, len);
			copy[bit / 8] ^= (uint8_t) (1u << (bit % 8));
			if (bf_validate(copy, len, &decoded, &sizing_memo) == BF_OK)
				all_caught = 0;
		}
		check(all_caught, "every single-bit flip of the header is rejected");
	}

	/* Version 2 records an environment for kind "other" only, checksummed. */
	{
		BfHeader	other = header;

		other.identity.kind = BF_KIND_OTHER;
		other.identity.tag = 0x1234567u | 1;
		other.identity.env_encoding = 7;
		other.identity.env_locale = 0xDEADBEEFu;
		bf_write_header(copy, &other);
		memcpy(copy + BF_HEADER_SIZE, value + BF_HEADER_SIZE, len - BF_HEADER_SIZE);
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_OK &&
			  decoded.identity.env_encoding == 7 && decoded.identity.env_locale == 0xDEADBEEFu,
			  "a kind-other filter's environment round-trips");
		copy[53] ^= 4;
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_ERR_BODY_CHECKSUM,
			  "a changed locale fingerprint fails the checksum");
		copy[53] ^= 4;
		copy[6] ^= 1;
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_ERR_BODY_CHECKSUM,
			  "a changed environment encoding fails the checksum");

		/* Version 1: checksum of bytes 0..47 only, no environment. */
		other.version = 1;
		other.identity.env_encoding = 0;
		other.identity.env_locale = 0;
		bf_write_header(copy, &other);
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_OK && decoded.version == 1,
			  "a version 1 value still validates");
		other.identity.env_encoding = 7;
		bf_write_header(copy, &other);
		check(bf_validate(copy, len, &decoded, &sizing_memo) == BF_ERR_RESERVED,
			  "a version 1 value cannot record an environment");
	}

	/* A filter of no kind with bits set is rejected. */
	header.identity.kind = BF_KIND_NONE;
	header.inserted = 0;
	bf_write_header(value, &header);
	check(bf_validate(value, len, &decoded, &sizing_memo) == BF_ERR_EMPTY_HAS_BITS,
		  "a kindless filter with bits set is rejected");
	free(value);
	free(copy);
}

static void
test_no_false_negatives(void)
{
	BfHeader	header;
	uint8_t    *value = new_filter(50000, 0.01, &header);
	int			missing = 0;

	add_keys(value, &header, 1000000, 200000);	/* overfilled 4x on purpose */
	for (uint64_t key = 1000000; key < 1200000; key++)
		if (!bf_test_hash(bf_bits(value), header.nblocks, header.k, key_hash(key, 0)))
			missing++;
	check(missing == 0, "no false negatives, even overfilled");
	free(value);
}

/*
 * Measured rate over absent keys must not exceed the target by more than
 * four standard deviations of a binomial count (twelve cases are checked,
 * so three would fail by chance now and then).
 */
static void
test_fpr_grid(void)
{
	const uint64_t capacities[] = {100, 10000, 200000};
	const double targets[] = {0.2, 0.05, 0.01, 0.001};

	for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++)
		for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
		{
			BfHeader	header;
			uint64_t	n = capacities[c];
			double		p = targets[t];
			uint8_t    *value = new_filter(n, p, &header);
			uint64_t	probes = 400000;
			uint64_t	hits = 0;
			double		rate;
			double		sigma = sqrt(p * (1 - p) / probes);
			char		what[160];

			add_keys(value, &header, 0, n);
			for (uint64_t key = UINT64_C(1) << 40; key < (UINT64_C(1) << 40) + probes; key++)
				hits += bf_test_hash(bf_bits(value), header.nblocks, header.k, key_hash(key, 0));
			rate = (double) hits / probes;
			snprintf(what, sizeof(what),
					 "n=%llu p=%g: measured %.5f <= p + 4 sigma (and >= p/2 once n >= 10000)",
					 (unsigned long long) n, p, rate);
			check(rate <= p + 4 * sigma && (n < 10000 || rate >= p / 2), what);
			snprintf(what, sizeof(what),
					 "n=%llu p=%g: this filter's own estimate %.5f is within 20%% of measured",
					 (unsigned long long) n, p,
					 bf_estimate_fpr(bf_bits(value), header.nblocks, header.k));
			check(fabs(bf_estimate_fpr(bf_bits(value), header.nblocks, header.k) - rate)
				  <= 0.2 * rate + 3 * sigma, what);
			free(value);
		}
}

static void
test_set_algebra_and_estimates(void)
{
	BfHeader	ha;
	BfHeader	hb;
	uint8_t    *a = new_filter(100000, 0.01, &ha);
	uint8_t    *b = new_filter(100000, 0.01, &hb);
	size_t		nbytes = (size_t) ha.nblocks * BF_BLOCK_BYTES;
	uint8_t    *u = malloc(nbytes);
	uint8_t    *x = malloc(nbytes);
	int			union_ok = 1;
	int			intersection_ok = 1;
	double		estimate;

	add_keys(a, &ha, 0, 60000);
	add_keys(b, &hb, 30000, 60000);
	check(bf_compatible(&ha, &hb), "same sizing is compatible");
	memcpy(u, bf_bits(a), nbytes);
	bf_union_bits(u, bf_bits(b), nbytes);
	memcpy(x, bf_bits(a), nbytes);
	bf_intersect_bits(x, bf_bits(b), nbytes);
	for (uint64_t key = 0; key < 90000; key++)
	{
		uint64_t	h = key_hash(key, 0);

		union_ok &= bf_test_hash(u, ha.nblocks, ha.k, h);
		if (key >= 30000 && key < 60000)
			intersection_ok &= bf_test_hash(x, ha.nblocks, ha.k, h);
	}
	check(union_ok, "union contains both sets");
	check(intersection_ok, "intersection contains the common values");

	estimate = bf_estimate_cardinality(ha.nblocks, ha.k,
									   bf_popcount(bf_bits(a), nbytes));
	check(fabs(estimate - 60000) < 0.03 * 60000, "cardinality estimate within 3%");

	hb.k++;
	check(!bf_compatible(&ha, &hb), "different k is incompatible");
	hb.k--;
	hb.identity.kind = BF_KIND_TEXT;
	check(!bf_compatible(&ha, &hb), "different key kind is incompatible");
	hb.identity.kind = BF_KIND_NONE;
	check(bf_compatible(&ha, &hb), "a kindless filter is compatible with any kind");
	hb.capacity++;
	check(!bf_compatible(&ha, &hb), "different capacity is incompatible, even with the same bits");
	hb.capacity--;
	hb.fpr = 0.0100001;
	check(!bf_compatible(&ha, &hb), "different target rate is incompatible");
	hb.fpr = ha.fpr;
	memset(u, 0xFF, nbytes);
	{
		uint64_t	total = (uint64_t) nbytes * 8;
		double		saturated = bf_estimate_cardinality(ha.nblocks, ha.k,
														bf_popcount(u, nbytes));
		double		one_clear = bf_estimate_cardinality(ha.nblocks, ha.k, total - 1);
		double		per_value = 1.0 - pow(1.0 - 1.0 / BF_BLOCK_BITS, ha.k);

		check(isfinite(saturated) && saturated > one_clear,
			  "a saturated filter estimates a finite count, above any with a bit clear");
		check(fabs(total * exp(-saturated / ha.nblocks * per_value) - 0.5) < 1e-6,
			  "that count leaves half a bit clear on average");
	}
	{
		BfHeader	h;
		uint8_t    *over = new_filter(1000, 0.01, &h);
		size_t		bytes = (size_t) h.nblocks * BF_BLOCK_BYTES;
		double		estimate;
		char		what[160];

		add_keys(over, &h, 0, 100000);	/* 100 times its capacity */
		estimate = bf_estimate_cardinality(h.nblocks, h.k, bf_popcount(bf_bits(over), bytes));
		snprintf(what, sizeof(what),
				 "100x overfilled, every bit set: %.0f distinct, a finite lower bound of 100000",
				 estimate);
		check(bf_popcount(bf_bits(over), bytes) == bytes * 8 && isfinite(estimate) &&
			  estimate > 1000 && estimate < 100000, what);
		free(over);
	}
	{
		/* word by word with a byte tail, at an odd offset and length */
		uint8_t		left[21],
					right[21],
					either[21],
					both[21];
		bool		same = true;

		for (int i = 0; i < 21; i++)
		{
			left[i] = (uint8_t) (i * 37 + 1);
			right[i] = (uint8_t) (i * 101 + 7);
		}
		memcpy(either, left, sizeof(left));
		memcpy(both, left, sizeof(left));
		bf_union_bits(either + 1, right + 1, 19);
		bf_intersect_bits(both + 1, right + 1, 19);
		for (int i = 0; i < 21; i++)
		{
			bool		inside = i >= 1 && i < 20;

			same &= either[i] == (inside ? (uint8_t) (left[i] | right[i]) : left[i]);
			same &= both[i] == (inside ? (uint8_t) (left[i] & right[i]) : left[i]);
		}
		check(same, "union and intersection of bytes at any offset and length");
	}
	free(a);
	free(b);
	free(u);
	free(x);
}

/* How many distinct values h[0..n) holds, by sorting a copy. */
static size_t
count_distinct(const uint64_t *h, size_t n)
{
	uint64_t   *copy = malloc(n * sizeof(uint64_t));
	size_t		distinct = 0;

	memcpy(copy, h, n * sizeof(uint64_t));
	qsort(copy, n, sizeof(uint64_t), compare_u64);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || copy[i] != copy[i - 1])
			distinct++;
	free(copy);
	return distinct;
}

/*
 * De-duplicates h[0..n) with and without scratch space, and with scratch
 * leaving the result where it lands, and checks all three against sorting:
 * the same count, the same set.
 */
static void
check_distinct(uint64_t *h, size_t n, const char *what)
{
	uint64_t   *copy = malloc(n * sizeof(uint64_t) + 1);
	uint64_t   *third = malloc(n * sizeof(uint64_t) + 1);
	uint64_t   *scratch = malloc(n * sizeof(uint64_t) + 1);
	uint64_t   *scratch_placed = malloc(n * sizeof(uint64_t) + 1);
	uint64_t   *placed;
	size_t		expected = count_distinct(h, n);
	size_t		kept;
	size_t		kept_scratch;
	size_t		kept_placed;
	char		label[160];

	memcpy(copy, h, n * sizeof(uint64_t));
	memcpy(third, h, n * sizeof(uint64_t));
	kept = bf_distinct_hashes(h, n, NULL);
	kept_scratch = bf_distinct_hashes(copy, n, scratch);
	kept_placed = bf_distinct_hashes_placed(third, n, scratch_placed, &placed);
	snprintf(label, sizeof(label), "%s: %zu distinct of %zu, in place and with scratch",
			 what, expected, n);
	check(kept == expected && kept_scratch == expected && kept_placed == expected &&
		  (placed == third || placed == scratch_placed) &&
		  count_distinct(h, kept) == kept && count_distinct(copy, kept) == kept &&
		  count_distinct(placed, kept) == kept,
		  label);
	if (kept > 65536)
	{
		snprintf(label, sizeof(label), "%s: a large result is left in scratch", what);
		check(placed == scratch_placed, label);
	}
	qsort(h, kept, sizeof(uint64_t), compare_u64);
	qsort(copy, kept, sizeof(uint64_t), compare_u64);
	qsort(placed, kept, sizeof(uint64_t), compare_u64);
	snprintf(label, sizeof(label), "%s: all three keep the same hashes", what);
	check(memcmp(h, copy, kept * sizeof(uint64_t)) == 0 &&
		  memcmp(h, placed, kept * sizeof(uint64_t)) == 0, label);
	free(copy);
	free(third);
	free(scratch);
	free(scratch_placed);
}

static void
test_distinct_hashes(void)
{
	size_t		n = 300000;
	uint64_t   *h = malloc(n * sizeof(uint64_t));
	uint64_t   *scratch = malloc(n * sizeof(uint64_t));
	int			grouped = 1;
	size_t		kept;
	size_t		kept_sorted;

	/* Three copies of 100,000 values: the result is grouped by block. */
	for (size_t i = 0; i < n; i++)
		h[i] = key_hash(i % 100000, 0);
	kept = bf_distinct_hashes(h, n, scratch);
	check(kept == 100000, "distinct keeps one copy per value");
	for (size_t i = 1; i < kept; i++)
		if ((h[i - 1] >> 56) > (h[i] >> 56))
			grouped = 0;
	check(grouped, "a large result is grouped by its top bits, so by block");
	check(count_distinct(h, kept) == kept, "what is kept is distinct");

	for (size_t i = 0; i < n; i++)
		h[i] = key_hash(i, 1);
	check_distinct(h, n, "all distinct");
	for (size_t i = 0; i < n; i++)
		h[i] = key_hash(i % 7, 2);
	check_distinct(h, n, "seven values");
	for (size_t i = 0; i < n; i++)
		h[i] = 0;
	check_distinct(h, n, "all zero");
	for (size_t i = 0; i < n; i++)
		h[i] = i % 3 == 0 ? 0 : key_hash(i % 5000, 3);
	check_distinct(h, n, "zero among 5,000 values");
	/* Long shared prefixes force the partitioning down to the low bits. */
	for (size_t i = 0; i < n; i++)
		h[i] = (UINT64_C(0xABCDEF) << 40) | (i % 20000);
	check_distinct(h, n, "20,000 values sharing their top 24 bits");
	for (size_t i = 0; i < n; i++)
		h[i] = (UINT64_C(0x5A5A5A5A5A5A5) << 12) | (key_hash(i, 4) & 0xFFF);
	check_distinct(h, n, "values differing only in their low 12 bits");
	/*
	 * Few duplicates, one value in 20 twice: a bucket keeps the hashes whose
	 * fingerprint no other shares where they are and de-duplicates the rest
	 * (drop_duplicates_by_fingerprint).  Also at the size of one bucket,
	 * with 0 twice among them.
	 */
	for (size_t i = 0; i < n; i++)
		h[i] = key_hash(i % 20 == 0 ? i + 1 : i, 7);
	check_distinct(h, n, "one value in 20 twice");
	for (size_t i = 0; i < 4000; i++)
		h[i] = i == 7 || i == 3999 ? 0 : key_hash(i % 20 == 0 ? i + 1 : i, 8);
	check_distinct(h, 4000, "one value in 20 twice and 0 twice, a bucket's worth");
	/*
	 * Distinct, yet equal in the bits that index the table: the table gives
	 * up on long probes instead of going quadratic, on short buffers (sorted)
	 * and long ones (split further).  The table's index is the hash times
	 * 0x9E3779B97F4A7C15, so these are chosen values times its inverse.
	 */
	for (size_t size = n; size >= 3; size /= 20)
	{
		const uint64_t mix = UINT64_C(0x9E3779B97F4A7C15);
		uint64_t	inverse = mix;
		char		what[80];

		for (int step = 0; step < 6; step++)
			inverse *= 2 - mix * inverse;
		for (size_t i = 0; i < size; i++)
			h[i] = ((UINT64_C(0x1555) << 51) | ((uint64_t) (i % 150000) << 20)) * inverse;
		snprintf(what, sizeof(what), "%zu values colliding in the table's index", size);
		check_distinct(h, size, what);
	}
	/*
	 * A large split streams whole cache lines; the lines a bucket shares
	 * with its neighbours depend on where the scratch space starts, and a
	 * bucket of fewer than 8 hashes may share both ends of one line (the
	 * uneven shape: most hashes in one bucket, the others spread thin).
	 */
	for (int shape = 0; shape < 16; shape++)
	{
		int			skew = shape % 8;
		bool		uneven = shape >= 8;
		uint64_t   *lines = aligned_alloc(64, (n + 8) * sizeof(uint64_t));
		uint64_t   *copy = malloc(n * sizeof(uint64_t));
		char		what[96];

		for (size_t i = 0; i < n; i++)
		{
			h[i] = key_hash(i % 250000, 6 + skew);
			if (uneven && i % 300 != 0)
				h[i] = (h[i] >> 10) | (UINT64_C(0x155) << 54);
		}
		memcpy(copy, h, n * sizeof(uint64_t));
		kept = bf_distinct_hashes(h, n, lines + skew);
		qsort(h, kept, sizeof(uint64_t), compare_u64);
		qsort(copy, n, sizeof(uint64_t), compare_u64);
		kept_sorted = 0;
		for (size_t i = 0; i < n; i++)
			if (i == 0 || copy[i] != copy[i - 1])
				copy[kept_sorted++] = copy[i];
		snprintf(what, sizeof(what),
				 "%s buckets, scratch starting %d words into a cache line: the same distinct hashes",
				 uneven ? "uneven" : "even", skew);
		check(kept == kept_sorted && memcmp(h, copy, kept * sizeof(uint64_t)) == 0, what);
		free(copy);
		free(lines);
	}
	for (size_t size = 0; size <= 8200; size += size < 16 ? 1 : 1023)
	{
		char		what[64];

		for (size_t i = 0; i < size; i++)
			h[i] = key_hash(i % 4097, 5);
		snprintf(what, sizeof(what), "%zu hashes around the table limit", size);
		check_distinct(h, size, what);
	}
	free(h);
	free(scratch);
}

/*
 * Partial results of a parallel plan: de-duplicated runs, counted together
 * group by group without merging them.
 */
static void
test_count_distinct_grouped(void)
{
	size_t		n = 200000;
	uint64_t   *runs[3];
	size_t		lengths[3];
	uint64_t   *scratch = malloc(n * sizeof(uint64_t));
	uint64_t   *all = malloc(3 * n * sizeof(uint64_t));
	size_t		total = 0;
	size_t		expected;
	int			bits = 64;
	uint64_t	small[] = {9, 3, UINT64_C(1) << 63, 7};

	/* Overlapping ranges of keys, so runs share values. */
	for (int r = 0; r < 3; r++)
	{
		runs[r] = malloc(n * sizeof(uint64_t));
		for (size_t i = 0; i < n; i++)
			runs[r][i] = key_hash(r * 150000 + i % 180000, 0);
		memcpy(all + total, runs[r], n * sizeof(uint64_t));
		total += n;
		lengths[r] = bf_distinct_hashes(runs[r], n, scratch);
		if (bf_grouped_bits(runs[r], lengths[r]) < bits)
			bits = bf_grouped_bits(runs[r], lengths[r]);
	}
	expected = count_distinct(all, total);
	check(bits >= BF_MAX_GROUP_BITS, "a large de-duplicated run is grouped by the widest split");
	check(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 3,
									BF_MAX_GROUP_BITS, scratch, n) == expected,
		  "grouped runs counted together: the distinct count of their union");
	check(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 3,
									BF_MAX_GROUP_BITS, scratch, 10) == SIZE_MAX,
		  "shared fingerprints beyond the scratch space give up");
	check(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 3,
									1, scratch, n) == SIZE_MAX,
		  "a group too large for the bitmaps and the scratch space gives up");
	{
		uint64_t   *big = malloc(3 * n * sizeof(uint64_t));

		check(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 3,
										1, big, 3 * n) == expected,
			  "a group too large for the bitmaps is counted whole");
		free(big);
	}
	check(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 3,
									0, scratch, n) == SIZE_MAX,
		  "zero group bits give up");
	{
		/* The first and last hash of a run belong to different groups. */
		uint64_t	first = runs[1][0];

		runs[1][0] = runs[1][lengths[1] - 1];
		runs[1][lengths[1] - 1] = first;
		check(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 3,
										BF_MAX_GROUP_BITS, scratch, n) == SIZE_MAX,
			  "a run out of group order is noticed, not miscounted");
		runs[1][lengths[1] - 1] = runs[1][0];
		runs[1][0] = first;
	}

	{
		/*
		 * Hashes that differ only below their fingerprint bits (chosen
		 * values could do that) all share one; duplicates among them too.
		 */
		size_t		m = 3000;
		uint64_t   *alike = malloc(m * sizeof(uint64_t));
		const uint64_t *one[1] = {alike};
		size_t		length[1] = {m};

		for (size_t i = 0; i < m; i++)
			alike[i] = (UINT64_C(5) << 54) | (i % 2000);
		check(bf_count_distinct_grouped(one, length, 1, BF_MAX_GROUP_BITS, scratch, n) == 2000,
			  "hashes sharing one fingerprint are counted exactly");
		free(alike);
	}
	{
		/* distinct random hashes: nearly all fingerprints unshared */
		size_t		m = 300000;
		uint64_t   *arrived = malloc(m * sizeof(uint64_t));
		uint64_t   *fresh = malloc(m * sizeof(uint64_t));
		const uint64_t *one[1] = {fresh};
		size_t		length[1] = {m};

		for (size_t i = 0; i < m; i++)
			arrived[i] = key_hash(i, 9);
		bf_group_hashes_into(arrived, m, fresh);
		check(bf_count_distinct_grouped(one, length, 1, BF_MAX_GROUP_BITS, scratch, n) == m,
			  "distinct hashes are counted exactly");
		free(arrived);
		free(fresh);
	}

	check(bf_grouped_bits(small, 4) == 0, "a buffer out of order in its top bit is grouped by none");
	check(bf_grouped_bits(small + 1, 2) == 64 && bf_grouped_bits(small, 1) == 64,
		  "an ascending buffer is grouped by all 64 bits");
	{
		uint64_t	pair[] = {5, 3};

		check(bf_grouped_bits(pair, 2) == 61, "5 then 3 share their top 61 bits");
	}
	memcpy(scratch, all, 1000 * sizeof(uint64_t));
	bf_group_hashes(scratch, 1000);
	check(bf_grouped_bits(scratch, 1000) >= BF_MAX_GROUP_BITS &&
		  count_distinct(scratch, 1000) == count_distinct(all, 1000),
		  "grouping in place keeps the hashes and groups them");
	/* out of place, streamed (600,000 hashes) and not (1,000), at two alignments */
	for (int shape = 0; shape < 4; shape++)
	{
		size_t		count = shape < 2 ? 3 * n : 1000;
		uint64_t   *grouped = malloc((count + 1) * sizeof(uint64_t));
		uint64_t   *into = grouped + (shape % 2);
		uint64_t   *sorted = malloc(count * sizeof(uint64_t));
		char		label[120];

		bf_group_hashes_into(all, count, into);
		memcpy(sorted, all, count * sizeof(uint64_t));
		qsort(sorted, count, sizeof(uint64_t), compare_u64);
		snprintf(label, sizeof(label),
				 "grouping %zu hashes out of place (offset %d) groups them", count, shape % 2);
		check(bf_grouped_bits(into, count) >= BF_MAX_GROUP_BITS, label);
		qsort(into, count, sizeof(uint64_t), compare_u64);
		snprintf(label, sizeof(label), "grouping %zu hashes out of place keeps them all", count);
		check(memcmp(into, sorted, count * sizeof(uint64_t)) == 0, label);
		free(grouped);
		free(sorted);
	}
	for (int r = 0; r < 3; r++)
		free(runs[r]);
	free(all);
	free(scratch);
}

/*
 * The written-out sizing answers are the search's, to the last bit: a filter
 * sized from the table must be unionable with one sized by the search.  (On
 * a platform whose exp() differs in the last place this can fail, and then
 * its filters would not be unionable with other platforms' either.)
 */
static void
test_sizing_table(void)
{
	for (int i = 0; i < bf_nknown_sizing; i++)
	{
		int			k;
		double		load;
		char		what[96];

		bf_sizing_search(bf_known_sizing[i].fpr, &k, &load);
		snprintf(what, sizeof(what), "sizing table entry for fpr %g is the search's answer",
				 bf_known_sizing[i].fpr);
		check(k == bf_known_sizing[i].k && load == bf_known_sizing[i].load, what);
	}
}

/*
 * Every k takes the bits the byte-wise probe (bf_block_test) looks for: the
 * insert loops are written word-wise and specialised for the common k, and
 * must all set the format's positions.  For one value in an empty block,
 * the probe finds it, and clearing any bit it set makes the probe miss, so
 * each bit set is one of the value's positions; and many values inserted
 * together set what inserting them one block at a time sets.
 */
static void
test_insert_positions(void)
{
	int			agree = 1;
	int			same_as_one_by_one = 1;

	for (int k = 1; k <= BF_MAX_K; k++)
	{
		uint8_t		together[4 * BF_BLOCK_BYTES] = {0};
		uint8_t		one_by_one[4 * BF_BLOCK_BYTES] = {0};

		for (uint64_t key = 0; key < 200; key++)
		{
			uint64_t	h = key_hash(key, 7);
			uint8_t		block[BF_BLOCK_BYTES] = {0};

			bf_add_hashes(block, 1, k, &h, 1);
			agree &= bf_block_test(block, h, k);
			for (int bit = 0; bit < BF_BLOCK_BITS; bit++)
			{
				if ((block[bit / 8] >> (bit % 8)) & 1)
				{
					block[bit / 8] ^= (uint8_t) (1u << (bit % 8));
					agree &= !bf_block_test(block, h, k);
					block[bit / 8] ^= (uint8_t) (1u << (bit % 8));
				}
			}
			bf_block_add(one_by_one + (size_t) bf_block_of(h, 4) * BF_BLOCK_BYTES, h, k);
		}
		{
			uint64_t	hashes[200];

			for (uint64_t key = 0; key < 200; key++)
				hashes[key] = key_hash(key, 7);
			bf_add_hashes(together, 4, k, hashes, 200);
		}
		same_as_one_by_one &= memcmp(together, one_by_one, sizeof(together)) == 0;
	}
	check(agree, "for every k, an insert sets exactly bits the probe tests");
	check(same_as_one_by_one, "for every k, bf_add_hashes sets what bf_block_add sets");
}

/* ---------------------------------------------------------------------
 * The chained layout (layout 2): a scalable Bloom filter
 * ---------------------------------------------------------------------
 */

/*
 * The memory the core borrows (BfHooks) in these tests: realloc, each
 * buffer exactly as long as the value, so that the sanitizers see any
 * access past its end.  A Lender may refuse after a number of loans, and
 * counts the pauses between slices.
 */
typedef struct Lender
{
	int			loans_left;		/* -1: no limit */
	int			loans;
	int			pauses;
} Lender;

static uint8_t *
lend(void *context, uint8_t *value, size_t new_len)
{
	Lender	   *lender = context;
	uint8_t    *resized;

	if (lender->loans_left == 0)
		return NULL;
	if (lender->loans_left > 0)
		lender->loans_left--;
	resized = realloc(value, new_len);
	if (resized == NULL)
		abort();
	lender->loans++;
	return resized;
}

static void
count_pause(void *context)
{
	((Lender *) context)->pauses++;
}

/* A lender without limit, for the helpers below. */
static Lender unlimited = {-1, 0, 0};
static const BfHooks unlimited_hooks = {lend, count_pause, &unlimited};

/* A chain in malloc'd memory, made and grown by the core as the glue's are. */
typedef struct TestChain
{
	uint8_t    *value;
	size_t		len;
	BfHeader	header;
} TestChain;

/* A new chain of one empty segment, of kind "number" so that it takes adds. */
static void
new_chain(TestChain *chain, uint64_t capacity, double fpr, uint8_t growth,
		  uint64_t seed)
{
	if (bf_chain_create(capacity, fpr, growth, &chain->value, &chain->len,
						&chain->header, &sizing_memo, &unlimited_hooks) != BF_OK)
		abort();
	chain->header.seed = seed;
	chain->header.identity.kind = BF_KIND_NUMBER;
	bf_write_header(chain->value, &chain->header);
}

/*
 * Adds hashes as the glue does (bf_filter_add_growing).  False when the
 * core asked for a segment that it could then not append.
 */
static bool
add_to_chain(TestChain *chain, const uint64_t *hashes, size_t n)
{
	return bf_filter_add_growing(&chain->value, &chain->len, &chain->header, hashes, n,
								 &sizing_memo, &unlimited_hooks) == BF_OK;
}

/* Adds keys first..first+count-1, hashed as int8, in batches of batch. */
static bool
add_keys_to_chain(TestChain *chain, uint64_t first, uint64_t count, size_t batch)
{
	uint64_t   *hashes = malloc(batch * sizeof(uint64_t));
	bool		ok = true;

	if (hashes == NULL)
		abort();
	for (uint64_t key = first; key < first + count && ok; key += batch)
	{
		size_t		n = first + count - key < batch ? (size_t) (first + count - key) : batch;

		for (size_t i = 0; i < n; i++)
			hashes[i] = key_hash(key + i, chain->header.seed);
		ok = add_to_chain(chain, hashes, n);
	}
	free(hashes);
	return ok;
}

/* Whether bf_filter_test finds every key first..first+count-1. */
static bool
chain_has_keys(const TestChain *chain, uint64_t first, uint64_t count)
{
	for (uint64_t key = first; key < first + count; key++)
		if (!bf_filter_test(chain->value, &chain->header,
							key_hash(key, chain->header.seed)))
			return false;
	return true;
}

/*
 * Whether every segment has the size the format prescribes, computed here
 * apart from bf_segment_plan (capacity * growth^i values at fpr / 2^(i+1)),
 * agrees with bf_segment_plan, and lies where the one before it ends; and
 * whether the segments fill the value exactly.  Also sums the segments'
 * counts, and says whether every segment but the last took its capacity.
 */
static bool
chain_segments_as_planned(const TestChain *chain, uint64_t *taken_out,
						  bool *full_but_last)
{
	BfSegment	segment;
	BfSegment	last;
	size_t		expected_bits = BF_HEADER_SIZE + BF_SEGMENT_HEADER_SIZE;
	uint64_t	capacity = chain->header.capacity;
	uint64_t	taken = 0;
	uint32_t	count = 0;
	bool		as_planned = true;

	*full_but_last = true;
	bf_segment_first(chain->value, &chain->header, &segment);
	do
	{
		BfSegment	planned;
		BfSizing	sizing;
		double		fpr = ldexp(chain->header.fpr, -(int) (segment.index + 1));

		as_planned &= segment.index == count;
		as_planned &= bf_size_for(capacity, fpr, &sizing, &sizing_memo) == BF_OK;
		as_planned &= segment.capacity == capacity && segment.fpr == fpr &&
			segment.nblocks == sizing.nblocks && segment.k == sizing.k;
		as_planned &= bf_segment_plan(&chain->header, segment.index, &planned, &sizing_memo) == BF_OK &&
			planned.index == segment.index && planned.capacity == capacity &&
			planned.fpr == fpr && planned.nblocks == sizing.nblocks &&
			planned.k == sizing.k;
		as_planned &= segment.bits == expected_bits;
		if (segment.index + 1 < chain->header.nsegments &&
			segment.inserted != segment.capacity)
			*full_but_last = false;
		taken += segment.inserted;
		expected_bits = segment.bits + (size_t) segment.nblocks * BF_BLOCK_BYTES +
			BF_SEGMENT_HEADER_SIZE;
		capacity *= chain->header.growth;
		count++;
	} while (bf_segment_next(chain->value, &chain->header, &segment));

	bf_segment_last(chain->value, &chain->header, &last);
	as_planned &= count == chain->header.nsegments &&
		last.index == count - 1 && last.bits == segment.bits &&
		last.nblocks == segment.nblocks && last.inserted == segment.inserted;
	as_planned &= expected_bits - BF_SEGMENT_HEADER_SIZE == chain->len;
	*taken_out = taken;
	return as_planned;
}

/* A new chain: header, then its first segment appended like any later one. */
static void
test_chain_new(void)
{
	BfHeader	header;
	BfHeader	decoded;
	BfSegment	next;
	BfSegment	segment;
	BfSizing	sizing;
	size_t		new_len;
	TestChain	chain;
	uint8_t    *value;

	check(bf_chain_header(1000, 0.01, 2, &header) == BF_OK &&
		  header.version == BF_FORMAT_VERSION && header.layout == BF_LAYOUT_CHAINED &&
		  header.k == 0 && header.nblocks == 0 && header.nsegments == 0 &&
		  header.growth == 2 && header.identity.kind == BF_KIND_NONE &&
		  header.capacity == 1000 && header.fpr == 0.01 && header.inserted == 0,
		  "chain: a new chain's header is version 2, layout 2, k 0, no segment yet");
	check(bf_is_chain(&header), "chain: bf_is_chain says so");
	check(bf_chain_header(1000, 0.01, 1, &decoded) == BF_ERR_GROWTH &&
		  bf_chain_header(1000, 0.01, 17, &decoded) == BF_ERR_GROWTH &&
		  bf_chain_header(0, 0.01, 2, &decoded) == BF_ERR_CAPACITY &&
		  bf_chain_header(1000, 0.0, 2, &decoded) == BF_ERR_FPR &&
		  bf_chain_header(1000, 0.6, 2, &decoded) == BF_ERR_FPR &&
		  bf_chain_header(1000, NAN, 2, &decoded) == BF_ERR_FPR,
		  "chain: growth outside 2..16, capacity 0 and a rate outside (0, 0.5] are refused");
	check(bf_chain_header(1, 0.5, BF_MIN_GROWTH, &decoded) == BF_OK &&
		  bf_chain_header(1, 0.5, BF_MAX_GROWTH, &decoded) == BF_OK,
		  "chain: growth 2 and 16 are accepted");

	bf_size_for(1000, 0.005, &sizing, &sizing_memo);
	check(bf_chain_next(&header, BF_HEADER_SIZE, &next, &new_len, &sizing_memo) == BF_OK &&
		  next.index == 0 && next.capacity == 1000 && next.fpr == 0.005 &&
		  next.nblocks == sizing.nblocks && next.k == sizing.k && next.inserted == 0 &&
		  next.bits == BF_HEADER_SIZE + BF_SEGMENT_HEADER_SIZE &&
		  new_len == BF_HEADER_SIZE + BF_SEGMENT_HEADER_SIZE +
		  (size_t) sizing.nblocks * BF_BLOCK_BYTES,
		  "chain: the first segment is sized for the capacity at half the rate");

	value = malloc(new_len);
	bf_chain_append(value, &header, BF_HEADER_SIZE, &next, NULL);
	check(header.nsegments == 1, "chain: appending counts the segment in the header");
	check(bf_validate(value, new_len, &decoded, &sizing_memo) == BF_OK &&
		  decoded.layout == BF_LAYOUT_CHAINED && decoded.version == BF_FORMAT_VERSION &&
		  decoded.k == 0 && decoded.nblocks == 0 && decoded.nsegments == 1 &&
		  decoded.growth == 2 && decoded.capacity == 1000 && decoded.fpr == 0.01 &&
		  decoded.inserted == 0 && decoded.identity.kind == BF_KIND_NONE,
		  "chain: a new chain of one segment validates and its header round-trips");
	check(value[4] == 0 && value[7] == 2 && value[12] == 1 && value[13] == 0 &&
		  value[14] == 0 && value[15] == 0,
		  "chain: k byte 0, growth in byte 7, segment count at offset 12");
	bf_segment_first(value, &decoded, &segment);
	check(segment.index == 0 && segment.nblocks == sizing.nblocks &&
		  segment.k == sizing.k && segment.capacity == 1000 && segment.fpr == 0.005 &&
		  segment.inserted == 0 && segment.bits == next.bits &&
		  !bf_segment_next(value, &decoded, &segment),
		  "chain: its one segment reads back as planned, and is the last");
	check(!bf_filter_test(value, &decoded, key_hash(1, 0)) &&
		  !bf_filter_test(value, &decoded, key_hash(2, 0)),
		  "chain: an empty chain finds nothing");
	free(value);

	header.nsegments = BF_MAX_SEGMENTS;
	check(bf_chain_next(&header, BF_HEADER_SIZE, &next, &new_len, &sizing_memo) == BF_ERR_SEGMENTS,
		  "chain: a chain of 32 segments cannot grow");

	new_chain(&chain, 10, 0.01, 2, 0);
	check(bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK &&
		  decoded.identity.kind == BF_KIND_NUMBER,
		  "chain: the test helper's new chain validates");
	free(chain.value);
}

/*
 * Growth to 13 and 15 times the first capacity, in batches through
 * bf_filter_add as the glue adds: no false negatives, segments of the
 * planned sizes, and a measured rate at or below the chain's target.
 */
static void
test_chain_growth(void)
{
	static const struct
	{
		uint8_t		growth;
		uint64_t	count;
		uint32_t	nsegments;
	}			cases[] = {
		{2, 15000, 4},			/* 1000 + 2000 + 4000 + 8000 */
		{3, 13000, 3},			/* 1000 + 3000 + 9000 */
	};
	const uint64_t capacity = 1000;
	const double fpr = 0.01;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		TestChain	chain;
		BfHeader	decoded;
		uint64_t	taken;
		bool		full_but_last;
		uint64_t	probes = 1000000;
		uint64_t	hits = 0;
		double		rate;
		char		what[200];

		new_chain(&chain, capacity, fpr, cases[c].growth, UINT64_C(0x5eed) + c);
		snprintf(what, sizeof(what),
				 "chain growth %d: %llu values added in batches of 700, growing when asked",
				 cases[c].growth, (unsigned long long) cases[c].count);
		check(add_keys_to_chain(&chain, 0, cases[c].count, 700), what);
		snprintf(what, sizeof(what), "chain growth %d: %u segments, as %llu values need",
				 cases[c].growth, chain.header.nsegments,
				 (unsigned long long) cases[c].count);
		check(chain.header.nsegments == cases[c].nsegments, what);
		snprintf(what, sizeof(what), "chain growth %d: validates, header counts every value",
				 cases[c].growth);
		check(bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK &&
			  decoded.nsegments == cases[c].nsegments &&
			  decoded.inserted == cases[c].count && chain.header.inserted == cases[c].count,
			  what);
		snprintf(what, sizeof(what), "chain growth %d: no false negatives", cases[c].growth);
		check(chain_has_keys(&chain, 0, cases[c].count), what);
		snprintf(what, sizeof(what),
				 "chain growth %d: segment i holds capacity * %d^i at fpr / 2^(i+1), back to back",
				 cases[c].growth, cases[c].growth);
		check(chain_segments_as_planned(&chain, &taken, &full_but_last), what);
		snprintf(what, sizeof(what),
				 "chain growth %d: every segment but the last took its capacity; %llu of %llu took room",
				 cases[c].growth, (unsigned long long) taken,
				 (unsigned long long) cases[c].count);
		check(full_but_last && taken <= cases[c].count &&
			  taken >= cases[c].count - cases[c].count / 100, what);

		for (uint64_t key = UINT64_C(1) << 40; key < (UINT64_C(1) << 40) + probes; key++)
			hits += bf_filter_test(chain.value, &chain.header,
								   key_hash(key, chain.header.seed));
		rate = (double) hits / probes;
		snprintf(what, sizeof(what),
				 "chain growth %d: measured rate %.5f over %llu absent values is at most the target %g",
				 cases[c].growth, rate, (unsigned long long) probes, fpr);
		check(rate <= fpr && hits > 0, what);
		free(chain.value);
	}
}

/*
 * Values already present take no room: adding them again changes no bit
 * and no segment, only the header's count.  So does a batch of one value
 * repeated.
 */
static void
test_chain_duplicates(void)
{
	TestChain	chain;
	BfHeader	decoded;
	uint8_t    *before;
	size_t		len_before;
	uint32_t	nsegments_before;
	BfSegment	last_before;
	BfSegment	last;
	uint64_t	hashes[100];

	new_chain(&chain, 100, 0.01, 2, 99);
	add_keys_to_chain(&chain, 0, 1000, 64);
	len_before = chain.len;
	nsegments_before = chain.header.nsegments;
	before = malloc(chain.len);
	memcpy(before, chain.value, chain.len);

	check(add_keys_to_chain(&chain, 0, 1000, 64) &&
		  add_keys_to_chain(&chain, 0, 1000, 1000),
		  "chain duplicates: adding the same 1000 values twice more succeeds");
	check(chain.len == len_before && chain.header.nsegments == nsegments_before,
		  "chain duplicates: no segment was added");
	check(memcmp(chain.value, before, 40) == 0 &&
		  memcmp(chain.value + BF_HEADER_SIZE, before + BF_HEADER_SIZE,
				 chain.len - BF_HEADER_SIZE) == 0,
		  "chain duplicates: no bit and no segment count changed, nor the header but its count");
	check(bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK &&
		  decoded.inserted == 3000,
		  "chain duplicates: the header counts every value added");
	check(bf_filter_add(chain.value, chain.len, &chain.header, hashes, 0, &sizing_memo) == 0 &&
		  bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK && decoded.inserted == 3000,
		  "chain duplicates: adding no value changes nothing");

	/* One new value a hundred times: one place in the last segment. */
	bf_segment_last(chain.value, &chain.header, &last_before);
	for (int i = 0; i < 100; i++)
		hashes[i] = key_hash(UINT64_C(1) << 50, chain.header.seed);
	check(!bf_filter_test(chain.value, &chain.header, hashes[0]) &&
		  add_to_chain(&chain, hashes, 100) && chain.header.nsegments == nsegments_before,
		  "chain duplicates: one new value repeated in a batch is added without growth");
	bf_segment_last(chain.value, &chain.header, &last);
	check(last.index == last_before.index && last.inserted == last_before.inserted + 1 &&
		  chain.header.inserted == 3100 &&
		  bf_filter_test(chain.value, &chain.header, hashes[0]),
		  "chain duplicates: it took one place, and the header counts all 100");
	free(before);
	free(chain.value);
}

/*
 * A chain whose next segment cannot be sized adds into its last segment
 * for good, past its capacity, and still finds everything.  At capacity 1
 * and 1e-16 the fifth segment would hold more values than 64-bit hashes
 * tell apart at its rate; at 5e-18 the third segment's rate, 6.25e-19,
 * passes the lowest supported, 1e-18.
 */
static void
test_chain_cannot_grow(void)
{
	static const struct
	{
		double		fpr;
		uint32_t	nsegments;
		BfStatus	refusal;
	}			cases[] = {
		{1e-16, 5, BF_ERR_TOO_LARGE},
		{5e-18, 2, BF_ERR_FPR_UNREACHABLE},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		TestChain	chain;
		BfHeader	decoded;
		BfSegment	next;
		BfSegment	last;
		size_t		new_len;
		uint64_t	taken;
		bool		full_but_last;
		BfStatus	status;
		char		what[200];

		new_chain(&chain, 1, cases[c].fpr, 2, 7);
		snprintf(what, sizeof(what),
				 "chain at its limit, fpr %g: 500 values added, bf_filter_add never asks in vain",
				 cases[c].fpr);
		check(add_keys_to_chain(&chain, 0, 500, 50), what);
		status = bf_chain_next(&chain.header, chain.len, &next, &new_len, &sizing_memo);
		snprintf(what, sizeof(what),
				 "chain at its limit, fpr %g: stops at %u segments, the next one cannot be sized (%s)",
				 cases[c].fpr, chain.header.nsegments, bf_status_message(status));
		check(chain.header.nsegments == cases[c].nsegments && status == cases[c].refusal &&
			  bf_segment_plan(&chain.header, chain.header.nsegments, &next, &sizing_memo) == status, what);
		snprintf(what, sizeof(what),
				 "chain at its limit, fpr %g: its segments are as planned, all but the last full",
				 cases[c].fpr);
		check(chain_segments_as_planned(&chain, &taken, &full_but_last) && full_but_last,
			  what);
		bf_segment_last(chain.value, &chain.header, &last);
		snprintf(what, sizeof(what),
				 "chain at its limit, fpr %g: the last segment took %llu values, capacity %llu",
				 cases[c].fpr, (unsigned long long) last.inserted,
				 (unsigned long long) last.capacity);
		check(last.inserted > last.capacity && taken <= 500, what);
		snprintf(what, sizeof(what), "chain at its limit, fpr %g: still validates",
				 cases[c].fpr);
		check(bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK &&
			  decoded.inserted == 500, what);
		snprintf(what, sizeof(what), "chain at its limit, fpr %g: no false negatives",
				 cases[c].fpr);
		check(chain_has_keys(&chain, 0, 500), what);
		free(chain.value);
	}
}

/* Offset of the descriptor of segment index. */
static size_t
descriptor_at(const TestChain *chain, uint32_t index)
{
	BfSegment	segment;

	bf_segment_first(chain->value, &chain->header, &segment);
	while (segment.index < index && bf_segment_next(chain->value, &chain->header, &segment))
		;
	return segment.bits - BF_SEGMENT_HEADER_SIZE;
}

/* The validator's verdict on a chain whose header was rewritten as given. */
static BfStatus
validate_with_header(const TestChain *chain, const BfHeader *header)
{
	uint8_t    *copy = malloc(chain->len);
	BfHeader	decoded;
	BfStatus	status;

	memcpy(copy, chain->value, chain->len);
	bf_write_header(copy, header);
	status = bf_validate(copy, chain->len, &decoded, &sizing_memo);
	free(copy);
	return status;
}

/* The validator's verdict on a chain with the byte at offset at set to byte. */
static BfStatus
validate_with_byte(const TestChain *chain, size_t at, uint8_t byte)
{
	uint8_t    *copy = malloc(chain->len);
	BfHeader	decoded;
	BfStatus	status;

	memcpy(copy, chain->value, chain->len);
	copy[at] = byte;
	status = bf_validate(copy, chain->len, &decoded, &sizing_memo);
	free(copy);
	return status;
}

/*
 * The validator's verdict on a chain whose segment index is one block
 * longer (more = 1) or shorter (-1) than planned: its descriptor says so,
 * and a zero block is inserted at the end of its bits or its last block
 * removed, so that the segments still fill the value exactly.
 */
static BfStatus
validate_resized_segment(const TestChain *chain, uint32_t index, int more)
{
	size_t		at = descriptor_at(chain, index);
	uint32_t	nblocks = (uint32_t) chain->value[at] | (uint32_t) chain->value[at + 1] << 8 |
		(uint32_t) chain->value[at + 2] << 16 | (uint32_t) chain->value[at + 3] << 24;
	size_t		end = at + BF_SEGMENT_HEADER_SIZE + (size_t) nblocks * BF_BLOCK_BYTES;
	size_t		len = more > 0 ? chain->len + BF_BLOCK_BYTES : chain->len - BF_BLOCK_BYTES;
	uint8_t    *copy = calloc(1, len);
	BfHeader	decoded;
	BfStatus	status;

	if (more > 0)
	{
		memcpy(copy, chain->value, end);
		memcpy(copy + end + BF_BLOCK_BYTES, chain->value + end, chain->len - end);
	}
	else
	{
		memcpy(copy, chain->value, end - BF_BLOCK_BYTES);
		memcpy(copy + end - BF_BLOCK_BYTES, chain->value + end, chain->len - end);
	}
	nblocks += (uint32_t) more;
	for (int i = 0; i < 4; i++)
		copy[at + i] = (uint8_t) (nblocks >> (8 * i));
	status = bf_validate(copy, len, &decoded, &sizing_memo);
	free(copy);
	return status;
}

/*
 * The memo is the caller's: what one remembers is never another's, and no
 * answer depends on what a memo holds (a fresh one, one that has recycled
 * every slot, none at all), for a sizing as for a chain's validation and
 * growth, each of whose segments is sized at its own rate.
 */
static void
test_sizing_memos(void)
{
	BfSizingMemo *a = calloc(1, sizeof(BfSizingMemo));
	BfSizingMemo *b = calloc(1, sizeof(BfSizingMemo));
	BfSizingMemo *empty = calloc(1, sizeof(BfSizingMemo));
	BfSizing	first;
	BfSizing	other;
	BfSizing	none;
	BfHeader	decoded;
	TestChain	chain;
	int			same = 1;
	int			recycled = 1;

	if (a == NULL || b == NULL || empty == NULL)
		abort();

	bf_size_for(54321, 0.0123, &first, a);
	check(memcmp(b, empty, sizeof(BfSizingMemo)) == 0,
		  "sizing from one memo leaves another as it was");
	check(memcmp(a, empty, sizeof(BfSizingMemo)) != 0, "... and keeps its rate in its own");
	bf_size_for(54321, 0.0123, &other, b);
	check(same_sizing(&first, &other), "two memos give the same answer");

	/* more rates than a memo holds: the first's slot is taken and made again */
	for (int i = 1; i <= BF_SIZING_MEMO_SLOTS; i++)
	{
		bf_size_for(1000, 0.0123 + i * 1e-4, &other, a);
		bf_size_for(1000, 0.0123 + i * 1e-4, &none, NULL);
		recycled &= same_sizing(&other, &none);
	}
	bf_size_for(54321, 0.0123, &other, a);
	check(recycled && same_sizing(&first, &other),
		  "a memo that recycled every slot answers as a fresh one and as none");
	check(bf_rate_quantile(54321, first.nblocks, 0.0123, a) ==
		  bf_rate_quantile(54321, first.nblocks, 0.0123, NULL) &&
		  bf_rate_quantile(54321, first.nblocks, 0.0123, b) ==
		  bf_rate_quantile(54321, first.nblocks, 0.0123, NULL),
		  "the rate quantile is the same from any memo and from none");

	/* a chain of rates no memo has yet: grown with one, judged with others */
	bf_sizing_memo_clear(a);
	bf_sizing_memo_clear(b);
	if (bf_chain_create(20, 0.0077, 2, &chain.value, &chain.len, &chain.header, a,
						&unlimited_hooks) != BF_OK)
		abort();
	chain.header.identity.kind = BF_KIND_NUMBER;
	bf_write_header(chain.value, &chain.header);
	for (uint64_t key = 0; key < 5000; key++)
	{
		uint64_t	hash = key_hash(key, 0);

		same &= bf_filter_add_growing(&chain.value, &chain.len, &chain.header, &hash, 1,
									  a, &unlimited_hooks) == BF_OK;
	}
	check(same && chain.header.nsegments >= 6, "a chain grows from one memo");
	check(bf_validate(chain.value, chain.len, &decoded, b) == BF_OK &&
		  bf_validate(chain.value, chain.len, &decoded, NULL) == BF_OK &&
		  bf_validate(chain.value, chain.len, &decoded, a) == BF_OK,
		  "... and validates from another, from none, and from its own");
	bf_sizing_memo_clear(a);
	check(memcmp(a, empty, sizeof(BfSizingMemo)) == 0, "a cleared memo is an empty one");
	free(chain.value);
	free(a);
	free(b);
	free(empty);
}

static void
test_chain_validator(void)
{
	TestChain	chain;
	BfHeader	h;
	BfHeader	decoded;
	uint8_t    *copy;
	uint32_t	nsegments;
	size_t		last_at;
	char		what[200];

	/* 50 + 100 + 200: three segments of different sizes */
	new_chain(&chain, 50, 0.01, 2, 3);
	add_keys_to_chain(&chain, 0, 300, 300);
	nsegments = chain.header.nsegments;
	check(nsegments == 3 && bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK,
		  "chain validator: the base chain of 3 segments validates");
	last_at = descriptor_at(&chain, nsegments - 1);

	/* The outer header, its checksum rewritten: each field's own error. */
	h = chain.header;
	h.k = 1;
	check(validate_with_header(&chain, &h) == BF_ERR_K,
		  "chain validator: a nonzero k byte in the header is rejected");
	h = chain.header;
	h.growth = 1;
	check(validate_with_header(&chain, &h) == BF_ERR_GROWTH,
		  "chain validator: growth 1 is rejected");
	h.growth = 0;
	check(validate_with_header(&chain, &h) == BF_ERR_GROWTH,
		  "chain validator: growth 0 is rejected");
	h.growth = 17;
	check(validate_with_header(&chain, &h) == BF_ERR_GROWTH,
		  "chain validator: growth 17 is rejected");
	h.growth = 255;
	check(validate_with_header(&chain, &h) == BF_ERR_GROWTH,
		  "chain validator: growth 255 is rejected");
	h = chain.header;
	h.nsegments = 0;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENTS,
		  "chain validator: 0 segments are rejected");
	h.nsegments = BF_MAX_SEGMENTS + 1;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENTS,
		  "chain validator: 33 segments are rejected");
	h.nsegments = UINT32_MAX;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENTS,
		  "chain validator: 2^32 - 1 segments are rejected");
	h.nsegments = nsegments - 1;
	check(validate_with_header(&chain, &h) == BF_ERR_LENGTH,
		  "chain validator: a segment more than the header announces is rejected");
	h.nsegments = nsegments + 1;
	check(validate_with_header(&chain, &h) == BF_ERR_LENGTH,
		  "chain validator: a segment fewer than the header announces is rejected");
	h = chain.header;
	h.version = 1;
	check(validate_with_header(&chain, &h) == BF_ERR_LAYOUT,
		  "chain validator: layout 2 in format version 1 is rejected");
	h = chain.header;
	h.growth = 4;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENT_SIZE,
		  "chain validator: another growth factor fails the plan");
	h = chain.header;
	h.capacity = 1000;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENT_SIZE,
		  "chain validator: another capacity fails the plan");
	h = chain.header;
	h.fpr = 0.001;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENT_SIZE,
		  "chain validator: another rate fails the plan");
	h = chain.header;
	h.fpr = 4e-18;
	check(validate_with_header(&chain, &h) == BF_ERR_SEGMENT_SIZE,
		  "chain validator: a rate at which the segments cannot be sized fails the plan");
	h = chain.header;
	h.identity.kind = BF_KIND_NONE;
	h.inserted = 0;
	check(validate_with_header(&chain, &h) == BF_ERR_EMPTY_HAS_BITS,
		  "chain validator: a kindless chain with values is rejected");
	h = chain.header;
	h.layout = BF_LAYOUT_BLOCKED512;
	h.k = 6;
	h.growth = 0;
	h.nblocks = nsegments;
	check(validate_with_header(&chain, &h) == BF_ERR_LENGTH,
		  "chain validator: its bytes under a blocked header are rejected");

	{
		int			all_caught = 1;

		copy = malloc(chain.len);
		memcpy(copy, chain.value, chain.len);
		for (int bit = 0; bit < BF_HEADER_SIZE * 8; bit++)
		{
			copy[bit / 8] ^= (uint8_t) (1u << (bit % 8));
			if (bf_validate(copy, chain.len, &decoded, &sizing_memo) == BF_OK)
				all_caught = 0;
			copy[bit / 8] ^= (uint8_t) (1u << (bit % 8));
		}
		free(copy);
		check(all_caught, "chain validator: every single-bit flip of the header is rejected");
	}

	/* The segment descriptors: size, k and reserved bytes. */
	for (uint32_t i = 0; i < nsegments; i += nsegments - 1)
	{
		const char *which = i == 0 ? "first" : "last";
		size_t		at = descriptor_at(&chain, i);
		uint8_t		k = chain.value[at + 4];
		int			all_caught = 1;

		snprintf(what, sizeof(what),
				 "chain validator: %s segment: k one more or one less than planned is rejected",
				 which);
		check(validate_with_byte(&chain, at + 4, k + 1) == BF_ERR_SEGMENT_SIZE &&
			  validate_with_byte(&chain, at + 4, k - 1) == BF_ERR_SEGMENT_SIZE, what);
		snprintf(what, sizeof(what), "chain validator: %s segment: k 0 and 33 are rejected",
				 which);
		check(validate_with_byte(&chain, at + 4, 0) == BF_ERR_K &&
			  validate_with_byte(&chain, at + 4, BF_MAX_K + 1) == BF_ERR_K, what);
		snprintf(what, sizeof(what),
				 "chain validator: %s segment: a block more or less than planned is rejected",
				 which);
		check(validate_resized_segment(&chain, i, 1) == BF_ERR_SEGMENT_SIZE &&
			  (chain.value[at] <= 1 ||
			   validate_resized_segment(&chain, i, -1) == BF_ERR_SEGMENT_SIZE), what);
		snprintf(what, sizeof(what),
				 "chain validator: %s segment: 0 blocks and more than the most are rejected",
				 which);
		check(validate_with_byte(&chain, at, 0) != BF_OK &&
			  validate_with_byte(&chain, at + 3, 0xFF) == BF_ERR_NBLOCKS, what);
		for (int byte = 5; byte < 8; byte++)
		{
			snprintf(what, sizeof(what),
					 "chain validator: %s segment: reserved descriptor byte %d set is rejected",
					 which, byte);
			check(validate_with_byte(&chain, at + (size_t) byte, 0x80) == BF_ERR_RESERVED,
				  what);
		}
		for (int bit = 0; bit < 8 * 8; bit++)
			if (validate_with_byte(&chain, at + (size_t) bit / 8,
								   chain.value[at + (size_t) bit / 8] ^
								   (uint8_t) (1u << (bit % 8))) == BF_OK)
				all_caught = 0;
		snprintf(what, sizeof(what),
				 "chain validator: %s segment: every single-bit flip of its size, k and reserved bytes is rejected",
				 which);
		check(all_caught, what);
	}
	check(chain.value[last_at] < 255 &&
		  validate_with_byte(&chain, last_at, chain.value[last_at] + 1) == BF_ERR_LENGTH &&
		  validate_with_byte(&chain, last_at, chain.value[last_at] - 1) == BF_ERR_LENGTH,
		  "chain validator: the last segment's block count off by one, bits unchanged, is a length error");

	/* Lengths. */
	copy = calloc(1, chain.len + BF_SEGMENT_HEADER_SIZE + BF_BLOCK_BYTES);
	memcpy(copy, chain.value, chain.len);
	check(bf_validate(copy, chain.len - 1, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, chain.len - BF_BLOCK_BYTES, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, last_at + 8, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, last_at, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, BF_HEADER_SIZE + 8, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, BF_HEADER_SIZE, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, BF_HEADER_SIZE - 1, &decoded, &sizing_memo) == BF_ERR_TRUNCATED,
		  "chain validator: cut in the bits, in or before a descriptor, or after the header is rejected");
	check(bf_validate(copy, chain.len + 1, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, chain.len + BF_BLOCK_BYTES, &decoded, &sizing_memo) == BF_ERR_LENGTH &&
		  bf_validate(copy, chain.len + BF_SEGMENT_HEADER_SIZE + BF_BLOCK_BYTES, &decoded, &sizing_memo)
		  == BF_ERR_LENGTH,
		  "chain validator: a byte, a block or an unannounced segment too long is rejected");
	free(copy);

	/* Structure lets a segment's count be any number; the body check does not. */
	check(validate_with_byte(&chain, descriptor_at(&chain, 1) + 9, 0x10) == BF_ERR_BODY_CHECKSUM,
		  "chain validator: a damaged segment count fails the body check");
	{
		bool		all_caught = true;

		for (size_t at = BF_HEADER_SIZE; at < chain.len; at++)
			if (validate_with_byte(&chain, at, chain.value[at] ^ 0x5a) == BF_OK)
				all_caught = false;
		check(all_caught, "chain validator: every damaged byte after the header is rejected");
	}
	{
		BfHeader	h;

		check(bf_validate(chain.value, chain.len, &h, &sizing_memo) == BF_OK && h.version == 3,
			  "chain validator: a chain grown by adds carries a valid body check");
	}

	/* Chains of one set of parameters combine, whatever their lengths. */
	{
		TestChain	other;

		new_chain(&other, 50, 0.01, 2, 3);
		check(other.header.nsegments == 1 && bf_compatible(&chain.header, &other.header) &&
			  bf_compatible(&other.header, &chain.header),
			  "chain validator: chains of one capacity, rate, growth and seed are compatible");
		h = chain.header;
		h.growth = 3;
		check(!bf_compatible(&chain.header, &h),
			  "chain validator: chains of different growth factors are not");
		free(other.value);
	}
	free(chain.value);
}

/* A blocked value walks as one segment, the whole filter. */
static void
test_blocked_as_segment(void)
{
	BfHeader	header;
	BfHeader	decoded;
	BfSegment	segment;
	BfSegment	last;
	uint8_t    *value = new_filter(1000, 0.01, &header);
	size_t		len = bf_value_bytes(header.nblocks);
	uint8_t    *same = malloc(len);
	uint64_t	hashes[500];
	int			agree = 1;

	add_keys(value, &header, 0, 500);
	check(bf_validate(value, len, &decoded, &sizing_memo) == BF_OK && !bf_is_chain(&decoded) &&
		  decoded.nsegments == 1 && decoded.growth == 0,
		  "blocked as segment: a blocked value has one segment and no growth");
	check(bf_check_segments(value, len, &decoded) == BF_OK &&
		  bf_check_segments(value, len + 1, &decoded) == BF_ERR_LENGTH,
		  "blocked as segment: bf_check_segments checks its length");
	bf_segment_first(value, &decoded, &segment);
	check(segment.index == 0 && segment.nblocks == header.nblocks && segment.k == header.k &&
		  segment.capacity == 1000 && segment.fpr == 0.01 && segment.inserted == 500 &&
		  segment.bits == BF_HEADER_SIZE,
		  "blocked as segment: bf_segment_first gives the whole filter");
	check(!bf_segment_next(value, &decoded, &segment),
		  "blocked as segment: and no segment after it");
	bf_segment_last(value, &decoded, &last);
	check(last.index == 0 && last.bits == BF_HEADER_SIZE && last.nblocks == header.nblocks,
		  "blocked as segment: bf_segment_last gives the same segment");

	for (uint64_t key = 0; key < 2000; key++)
	{
		uint64_t	h = key_hash(key, 0);

		agree &= bf_filter_test(value, &decoded, h) ==
			bf_test_hash(bf_bits(value), header.nblocks, header.k, h);
	}
	check(agree, "blocked as segment: bf_filter_test is bf_test_hash");

	for (int i = 0; i < 500; i++)
		hashes[i] = key_hash(UINT64_C(1) << 45 | (uint64_t) i, 0);
	memcpy(same, value, len);
	bf_add_hashes(bf_bits(same), header.nblocks, header.k, hashes, 500);
	check(bf_filter_add(value, len, &decoded, hashes, 500, &sizing_memo) == 500 && decoded.inserted == 1000 &&
		  memcmp(bf_bits_const(value), bf_bits_const(same), len - BF_HEADER_SIZE) == 0 &&
		  bf_validate(value, len, &decoded, &sizing_memo) == BF_OK && decoded.inserted == 1000,
		  "blocked as segment: bf_filter_add takes every hash, past capacity too, and counts them");
	free(value);
	free(same);
}

/* ---------------------------------------------------------------------
 * Whole-value operations: growth with borrowed memory, union,
 * intersection, estimates (what the server and the client both call)
 * ---------------------------------------------------------------------
 */

/* A chain's growth when the memory runs out, and where growth is refused. */
static void
test_chain_growth_memory(void)
{
	Lender		none = {0, 0, 0};
	Lender		one = {1, 0, 0};
	BfHooks		refusing = {lend, NULL, &none};
	BfHooks		once = {lend, NULL, &one};
	BfHeader	header;
	BfHeader	decoded;
	BfHeader	blocked;
	TestChain	chain;
	uint8_t    *value = NULL;
	size_t		len = 0;
	uint64_t	hashes[3000];
	uint8_t    *single;

	check(bf_chain_create(1000, 0.01, 2, &value, &len, &header, &sizing_memo, &refusing) == BF_ERR_NO_MEMORY &&
		  value == NULL && none.loans == 0,
		  "chain memory: a new chain without memory is BF_ERR_NO_MEMORY, and nothing is made");
	check(bf_chain_create(1000, 0.01, 2, &value, &len, &header, &sizing_memo, NULL) == BF_ERR_NO_MEMORY &&
		  value == NULL,
		  "chain memory: without hooks, a new chain is BF_ERR_NO_MEMORY");
	check(bf_chain_create(1000, 0.01, 1, &value, &len, &header, &sizing_memo, &unlimited_hooks) == BF_ERR_GROWTH &&
		  bf_chain_create(0, 0.01, 2, &value, &len, &header, &sizing_memo, &unlimited_hooks) == BF_ERR_CAPACITY &&
		  value == NULL,
		  "chain memory: bf_chain_create refuses what bf_chain_header refuses, before any memory");

	/* 1000 + 2000: the second segment is the one loan the lender makes */
	new_chain(&chain, 1000, 0.01, 2, 5);
	for (uint64_t key = 0; key < 2000; key++)
		hashes[key] = key_hash(key, 5);
	check(bf_filter_add_growing(&chain.value, &chain.len, &chain.header, hashes, 2000,
								&sizing_memo, &once) == BF_OK &&
		  one.loans == 1 && chain.header.nsegments == 2 && chain_has_keys(&chain, 0, 2000),
		  "chain memory: an add of 2000 to a chain of 1000 grows it by one segment");
	for (uint64_t key = 0; key < 3000; key++)
		hashes[key] = key_hash(10000 + key, 5);
	check(bf_filter_add_growing(&chain.value, &chain.len, &chain.header, hashes, 3000,
								&sizing_memo, &once) == BF_ERR_NO_MEMORY &&
		  chain.header.nsegments == 2 && chain.header.inserted >= 3000 &&
		  chain.header.inserted < 5000 &&
		  bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK &&
		  decoded.inserted == chain.header.inserted &&
		  chain_has_keys(&chain, 0, 2000) &&
		  chain_has_keys(&chain, 10000, chain.header.inserted - 2000),
		  "chain memory: refused a third segment, the add stops with BF_ERR_NO_MEMORY, the chain "
		  "valid and holding what went before");
	check(bf_chain_grow(&chain.value, &chain.len, &chain.header, &sizing_memo, &unlimited_hooks) == BF_OK &&
		  chain.header.nsegments == 3 && bf_validate(chain.value, chain.len, &decoded, &sizing_memo) == BF_OK,
		  "chain memory: bf_chain_grow appends the segment it could not have");
	free(chain.value);

	single = new_filter(1000, 0.01, &blocked);
	len = bf_value_bytes(blocked.nblocks);
	check(bf_chain_grow(&single, &len, &blocked, &sizing_memo, &unlimited_hooks) == BF_ERR_LAYOUT &&
		  len == bf_value_bytes(blocked.nblocks),
		  "chain memory: a filter of fixed size does not grow");
	free(single);
}

/* A copy of a chain, in memory of its own. */
static void
copy_chain(TestChain *copy, const TestChain *chain)
{
	copy->len = chain->len;
	copy->header = chain->header;
	copy->value = malloc(chain->len);
	memcpy(copy->value, chain->value, chain->len);
}

/* Union of chains and of filters of fixed size, and its refusals. */
static void
test_union_into(void)
{
	TestChain	a;
	TestChain	b;
	TestChain	ab;
	TestChain	ba;
	TestChain	bad;
	BfHeader	decoded;
	BfSegment	sa;
	BfSegment	sb;
	BfSegment	from_a;
	BfSegment	from_b;
	BfSegment	to;
	Lender		none = {0, 0, 0};
	BfHooks		refusing = {lend, NULL, &none};
	bool		sums = true;
	BfHeader	he;
	BfHeader	hf;
	BfHeader	before;
	uint8_t    *e;
	uint8_t    *f;
	uint8_t    *bits;
	size_t		len;
	size_t		nbytes;

	/* 1000 + 2000 segments, and 1000 + 2000 + 4000 */
	new_chain(&a, 1000, 0.01, 2, 9);
	add_keys_to_chain(&a, 0, 3000, 500);
	new_chain(&b, 1000, 0.01, 2, 9);
	add_keys_to_chain(&b, 100000, 7000, 500);
	check(a.header.nsegments == 2 && b.header.nsegments == 3,
		  "union: chains of 2 and 3 segments");

	copy_chain(&ab, &a);
	copy_chain(&ba, &b);
	check(bf_union_into(&ab.value, &ab.len, &ab.header, b.value, b.len, &b.header,
						&unlimited_hooks) == BF_OK &&
		  bf_union_into(&ba.value, &ba.len, &ba.header, a.value, a.len, &a.header,
						&unlimited_hooks) == BF_OK,
		  "union: of the shorter chain with the longer and the other way round");
	check(ab.len == b.len && ab.header.nsegments == 3 &&
		  bf_validate(ab.value, ab.len, &decoded, &sizing_memo) == BF_OK && decoded.nsegments == 3 &&
		  decoded.inserted == 10000,
		  "union: the shorter takes the longer's third segment, validates, counts 10000 values");
	check(chain_has_keys(&ab, 0, 3000) && chain_has_keys(&ab, 100000, 7000),
		  "union: holds every key of both");
	check(ab.len == ba.len && memcmp(ab.value, ba.value, ab.len) == 0,
		  "union: either order gives the same bytes");
	bf_segment_first(ab.value, &ab.header, &to);
	bf_segment_first(a.value, &a.header, &from_a);
	bf_segment_first(b.value, &b.header, &from_b);
	do
	{
		uint64_t	expected = from_b.inserted + (to.index < a.header.nsegments ? from_a.inserted : 0);

		sums &= to.inserted == expected;
		if (to.index + 1 < a.header.nsegments)
			bf_segment_next(a.value, &a.header, &from_a);
	} while (bf_segment_next(b.value, &b.header, &from_b) &&
			 bf_segment_next(ab.value, &ab.header, &to));
	check(sums, "union: each segment's count is the sum of the two segments'");
	free(ab.value);
	free(ba.value);

	/* refusals leave dst as it was */
	copy_chain(&ab, &a);
	check(bf_union_into(&ab.value, &ab.len, &ab.header, b.value, b.len, &b.header,
						&refusing) == BF_ERR_NO_MEMORY &&
		  ab.len == a.len && memcmp(ab.value, a.value, a.len) == 0 &&
		  ab.header.nsegments == 2,
		  "union: without memory for the longer chain's segments, BF_ERR_NO_MEMORY, dst unchanged");
	copy_chain(&bad, &b);
	bad.header.seed = 10;
	bf_write_header(bad.value, &bad.header);
	check(bf_union_into(&ab.value, &ab.len, &ab.header, bad.value, bad.len, &bad.header,
						&unlimited_hooks) == BF_ERR_INCOMPATIBLE &&
		  ab.len == a.len && memcmp(ab.value, a.value, a.len) == 0,
		  "union: of another seed, BF_ERR_INCOMPATIBLE, dst unchanged");
	free(bad.value);
	copy_chain(&bad, &b);
	bad.value[descriptor_at(&bad, 1) + 4]++;	/* segment 2's k */
	check(!bf_segments_alike(a.value, &a.header, bad.value, &bad.header, &sa, &sb) &&
		  sa.index == 1 && sb.index == 1 && sb.k == sa.k + 1 &&
		  bf_union_into(&ab.value, &ab.len, &ab.header, bad.value, bad.len, &bad.header,
						&unlimited_hooks) == BF_ERR_SEGMENT_SIZE &&
		  memcmp(ab.value, a.value, a.len) == 0,
		  "union: segments of different sizes, BF_ERR_SEGMENT_SIZE naming segment 2, dst unchanged");
	check(bf_segments_alike(a.value, &a.header, b.value, &b.header, &sa, &sb),
		  "union: chains of equal parameters have segments alike");
	free(bad.value);
	free(ab.value);
	free(a.value);
	free(b.value);

	/* fixed size: the bits ORed, counts summed, the empty side takes the kind */
	e = new_filter(5000, 0.01, &he);
	f = new_filter(5000, 0.01, &hf);
	he.identity.kind = BF_KIND_NONE;
	bf_write_header(e, &he);
	hf.identity.kind = BF_KIND_OTHER;
	hf.identity.tag = 77;
	hf.identity.env_encoding = 7;
	hf.identity.env_locale = 0xabcdef;
	add_keys(f, &hf, 0, 4000);
	nbytes = (size_t) hf.nblocks * BF_BLOCK_BYTES;
	bf_read_header(e, bf_value_bytes(he.nblocks), &he);
	bf_read_header(f, bf_value_bytes(hf.nblocks), &hf);
	bits = malloc(nbytes);
	memcpy(bits, bf_bits(e), nbytes);
	bf_union_bits(bits, bf_bits(f), nbytes);
	len = bf_value_bytes(he.nblocks);
	check(bf_union_into(&e, &len, &he, f, bf_value_bytes(hf.nblocks), &hf, NULL) == BF_OK &&
		  len == bf_value_bytes(hf.nblocks) && memcmp(bf_bits(e), bits, nbytes) == 0 &&
		  bf_read_header(e, len, &decoded) == BF_OK && decoded.inserted == 4000 &&
		  decoded.identity.kind == BF_KIND_OTHER && decoded.identity.tag == 77 &&
		  decoded.identity.env_encoding == 7 && decoded.identity.env_locale == 0xabcdef,
		  "union: of fixed size, the bits ORed (no memory needed) and the empty side takes the "
		  "other's key kind, tag and environment");
	before = hf;
	check(bf_union_into(&f, &len, &hf, e, len, &decoded, NULL) == BF_OK &&
		  hf.inserted == 8000 && hf.identity.tag == before.identity.tag &&
		  bf_read_header(f, len, &decoded) == BF_OK && decoded.inserted == 8000,
		  "union: counts add up, a side with a kind keeps it");
	free(e);
	free(f);
	free(bits);
}

/* Intersection of filters of fixed size, and its refusals. */
static void
test_intersect_into(void)
{
	BfHeader	ha;
	BfHeader	hb;
	BfHeader	decoded;
	uint8_t    *a = new_filter(5000, 0.01, &ha);
	uint8_t    *b = new_filter(5000, 0.01, &hb);
	size_t		len = bf_value_bytes(ha.nblocks);
	size_t		nbytes = (size_t) ha.nblocks * BF_BLOCK_BYTES;
	uint8_t    *bits = malloc(nbytes);
	TestChain	chain;

	add_keys(a, &ha, 0, 3000);
	add_keys(b, &hb, 1000, 4000);
	memcpy(bits, bf_bits(a), nbytes);
	bf_intersect_bits(bits, bf_bits(b), nbytes);
	check(bf_intersect_into(a, &ha, b, &hb, NULL) == BF_OK &&
		  memcmp(bf_bits(a), bits, nbytes) == 0 &&
		  bf_read_header(a, len, &decoded) == BF_OK && decoded.inserted == 3000 &&
		  decoded.identity.kind == BF_KIND_NUMBER,
		  "intersect: the bits ANDed, the smaller count kept");

	hb.identity.kind = BF_KIND_NONE;
	hb.inserted = 0;
	bf_init(b, &hb, NULL);
	check(bf_intersect_into(a, &ha, b, &hb, NULL) == BF_OK &&
		  bf_validate(a, len, &decoded, &sizing_memo) == BF_OK && decoded.identity.kind == BF_KIND_NONE &&
		  decoded.inserted == 0,
		  "intersect: with an empty filter, nothing is left, of no kind");
	hb.seed = 3;
	check(bf_intersect_into(a, &ha, b, &hb, NULL) == BF_ERR_INCOMPATIBLE,
		  "intersect: of another seed, BF_ERR_INCOMPATIBLE");
	new_chain(&chain, 1000, 0.01, 2, 0);
	check(bf_intersect_into(chain.value, &chain.header, chain.value, &chain.header, NULL) ==
		  BF_ERR_LAYOUT,
		  "intersect: chains are refused (BF_ERR_LAYOUT)");
	free(chain.value);
	free(a);
	free(b);
	free(bits);
}

/* A new filter of fixed size: the header bloom_empty writes. */
static void
test_fixed_header(void)
{
	BfSizing	sizing;
	BfHeader	header;
	BfHeader	decoded;
	uint8_t    *value;

	bf_size_for(1000, 0.01, &sizing, &sizing_memo);
	bf_fixed_header(1000, 0.01, &sizing, &header);
	value = malloc(bf_value_bytes(header.nblocks));
	bf_init(value, &header, NULL);
	check(header.version == BF_FORMAT_VERSION && header.layout == BF_LAYOUT_BLOCKED512 &&
		  header.k == sizing.k && header.nblocks == sizing.nblocks &&
		  header.identity.kind == BF_KIND_NONE && header.seed == 0 && header.inserted == 0 &&
		  header.growth == 0 && header.nsegments == 1 &&
		  bf_validate(value, bf_value_bytes(header.nblocks), &decoded, &sizing_memo) == BF_OK &&
		  decoded.version == header.version && decoded.layout == header.layout &&
		  decoded.k == header.k && decoded.nblocks == header.nblocks &&
		  decoded.identity.kind == BF_KIND_NONE && decoded.capacity == 1000 &&
		  decoded.fpr == 0.01 && decoded.nsegments == 1 && decoded.growth == 0,
		  "fixed header: as sized, no kind yet, and it decodes to itself");
	free(value);
}

/* bf_estimate of a fixed-size filter and of a chain, and the clamp. */
static void
test_estimate(void)
{
	BfHeader	h;
	BfEstimate	e;
	TestChain	chain;
	BfSegment	segment;
	uint8_t    *value = new_filter(10000, 0.01, &h);
	size_t		nbytes = (size_t) h.nblocks * BF_BLOCK_BYTES;
	uint64_t	bits = 0;
	uint64_t	set = 0;
	uint64_t	capacity = 0;
	double		distinct = 0.0;
	double		none = 1.0;
	int			k = 0;

	add_keys(value, &h, 0, 10000);
	bf_estimate(value, &h, &e, NULL);
	check(e.bits == (uint64_t) h.nblocks * BF_BLOCK_BITS &&
		  e.bits_set == bf_popcount(bf_bits(value), nbytes) &&
		  e.capacity == 10000 && e.k == h.k &&
		  e.fill == (double) e.bits_set / (double) e.bits &&
		  e.distinct == bf_estimate_cardinality(h.nblocks, h.k, e.bits_set) &&
		  fabs(e.fpr - bf_estimate_fpr(bf_bits(value), h.nblocks, h.k)) < 1e-15,
		  "estimate: of a filter of fixed size, its bits, fill, cardinality and rate");
	check(!e.over_capacity && fabs(e.distinct - 10000) < 300,
		  "estimate: filled to capacity, about 10000 distinct and not over capacity");
	add_keys(value, &h, 10000, 2000);
	bf_estimate(value, &h, &e, NULL);
	check(e.over_capacity && e.distinct > 10000 * BF_OVER_CAPACITY_MARGIN,
		  "estimate: 20% past capacity, over capacity");
	free(value);

	new_chain(&chain, 1000, 0.01, 2, 4);
	add_keys_to_chain(&chain, 0, 5000, 1000);
	bf_estimate(chain.value, &chain.header, &e, NULL);
	bf_segment_first(chain.value, &chain.header, &segment);
	do
	{
		const uint8_t *segment_bits = chain.value + segment.bits;
		uint64_t	segment_set = bf_popcount(segment_bits,
											  (size_t) segment.nblocks * BF_BLOCK_BYTES);

		bits += (uint64_t) segment.nblocks * BF_BLOCK_BITS;
		set += segment_set;
		capacity += segment.capacity;
		distinct += bf_estimate_cardinality(segment.nblocks, segment.k, segment_set);
		none *= 1.0 - bf_estimate_fpr(segment_bits, segment.nblocks, segment.k);
		k = segment.k;
	} while (bf_segment_next(chain.value, &chain.header, &segment));
	check(chain.header.nsegments == 3 && e.bits == bits && e.bits_set == set &&
		  e.capacity == capacity && capacity == 7000 && e.k == k &&
		  e.distinct == distinct && fabs(e.fpr - (1.0 - none)) < 1e-15 &&
		  e.fill == (double) set / (double) bits,
		  "estimate: of a chain of 3 segments, sums over them; the rate that any answers maybe");
	check(!e.over_capacity && fabs(e.distinct - 5000) < 200,
		  "estimate: the chain's distinct count is about the 5000 added");
	free(chain.value);

	check(bf_clamp_int64(0) == 0 && bf_clamp_int64((uint64_t) INT64_MAX) == INT64_MAX &&
		  bf_clamp_int64((uint64_t) INT64_MAX + 1) == INT64_MAX &&
		  bf_clamp_int64(UINT64_MAX) == INT64_MAX,
		  "bf_clamp_int64: a count past a bigint shows as the largest bigint");
}

/*
 * A filter larger than one slice: the loops pause between slices, once per
 * slice, and the rate summed slice by slice is the whole filter's mean.
 */
static void
test_slices(void)
{
	BfHeader	h;
	BfHeader	h2;
	BfEstimate	e;
	Lender		counter = {-1, 0, 0};
	BfHooks		hooks = {lend, count_pause, &counter};
	uint8_t    *value = new_filter(15000000, 0.01, &h);
	uint8_t    *other = new_filter(15000000, 0.01, &h2);
	size_t		nbytes = (size_t) h.nblocks * BF_BLOCK_BYTES;
	size_t		len = bf_value_bytes(h.nblocks);
	int			slices = (int) ((nbytes + BF_SLICE_BYTES - 1) / BF_SLICE_BYTES);
	uint32_t	per_slice = (uint32_t) (BF_SLICE_BYTES / BF_BLOCK_BYTES);
	double		sliced = 0.0;
	char		what[200];

	add_keys(value, &h, 0, 200000);
	add_keys(other, &h2, 1000000, 200000);
	for (uint32_t first = 0; first < h.nblocks; first += per_slice)
	{
		uint32_t	n = h.nblocks - first < per_slice ? h.nblocks - first : per_slice;

		sliced += bf_estimate_fpr(bf_bits(value) + (size_t) first * BF_BLOCK_BYTES, n, h.k) * n;
	}
	sliced /= h.nblocks;

	bf_estimate(value, &h, &e, &hooks);
	snprintf(what, sizeof(what),
			 "slices: the estimates of a filter of %zu bytes pause %d times, once per slice",
			 nbytes, slices);
	check(slices == 2 && counter.pauses == slices, what);
	check(e.bits_set == bf_popcount(bf_bits(value), nbytes) && e.fpr == sliced &&
		  fabs(e.fpr - bf_estimate_fpr(bf_bits(value), h.nblocks, h.k)) < 1e-15,
		  "slices: bits set over every slice, and the rate summed slice by slice");

	counter.pauses = 0;
	check(bf_union_into(&value, &len, &h, other, len, &h2, &hooks) == BF_OK &&
		  counter.pauses == slices && counter.loans == 0,
		  "slices: a union pauses once per slice, and needs no memory");
	counter.pauses = 0;
	check(bf_intersect_into(value, &h, other, &h2, &hooks) == BF_OK &&
		  counter.pauses == slices,
		  "slices: an intersection pauses once per slice");
	free(value);
	free(other);
}

/*
 * bf_body_sum_copy, whichever form the machine runs (the wide one stops
 * sixteen words early and leaves the rest to the portable loop), against
 * the sum written out from its definition: every length up to 100 words
 * and some longer, from unaligned sources, starting at words other than 0,
 * with and without a copy, which must be the bytes read.
 */
static void
test_body_sum(void)
{
	size_t		most = 4 * 1000 + 3;
	uint8_t    *source = malloc(most + 64);
	uint8_t    *copy = malloc(most + 64);
	bool		sums = true;
	bool		copies = true;

	for (size_t i = 0; i < most + 64; i++)
		source[i] = (uint8_t) (i * 131 + (i >> 7));
	for (size_t words = 0; words <= 1000; words += words < 100 ? 1 : 97)
		for (size_t misalign = 0; misalign < 4; misalign++)
		{
			const uint8_t *src = source + 64 + misalign;
			size_t		nbytes = 4 * words;
			/* the reference starts at word 0 after a header of 64 bytes */
			uint32_t	expected = reference_body_sum(src - 64, nbytes + 64, 64);

			memset(copy, 0xA5, most + 64);
			sums &= bf_body_sum(src, nbytes, 0) == expected;
			sums &= bf_body_sum_copy(copy + misalign, src, nbytes, 0) == expected;
			copies &= memcmp(copy + misalign, src, nbytes) == 0 &&
				copy[misalign + nbytes] == 0xA5;
			/* from word 3 on: the whole sum less its first three terms */
			if (words >= 3)
				sums &= bf_body_sum(src + 12, nbytes - 12, 3) ==
					expected - reference_body_sum(src - 64, 64 + 12, 64);
		}
	check(sums, "body sum: every length, alignment and first word, as defined");
	check(copies, "body sum: the copy holds exactly the bytes summed");
	free(source);
	free(copy);
}

int
main(void)
{
	test_sizing();
	test_sizing_memos();
	test_sizing_margin();
	test_single_filter_rates();
	test_header_and_validator();
	test_body_sum();
	test_no_false_negatives();
	test_fpr_grid();
	test_set_algebra_and_estimates();
	test_sizing_table();
	test_distinct_hashes();
	test_count_distinct_grouped();
	test_insert_positions();
	test_chain_new();
	test_chain_growth();
	test_chain_duplicates();
	test_chain_cannot_grow();
	test_chain_validator();
	test_blocked_as_segment();
	test_chain_growth_memory();
	test_union_into();
	test_intersect_into();
	test_fixed_header();
	test_estimate();
	test_slices();
	return unit_result();
}
