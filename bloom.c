/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  The filter itself, part of the pure core (see bloom.h for the API and
 *	  the serialised format): sizing, the header and its validator, the
 *	  blocked bit layout, set algebra and estimates.  The aggregates' hash
 *	  buffers are in hashbuf.c.
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
 * Sizing
 * ------
 * With n values in B blocks the load of a block is close to Poisson with mean
 * lambda = n / B.  An absent value is reported present when its k positions
 * in its block are all set; in a block holding j values that happens with
 * probability rate_k(j) = E[(C/512)^k], C being the number of bits set by
 * j k positions (about (1 - (1 - 1/512)^(j k))^k), so on average
 *
 *		fpr(lambda, k) = sum_j Poisson(j; lambda) rate_k(j)
 *
 * For each k we find the largest lambda with fpr <= target by bisection (it
 * does not depend on n) and keep the k that needs the fewest bits.  At 1%
 * that is k = 6 and 9.9 bits per value, against 9.6 for an unblocked filter.
 *
 * That is the rate of filters on average.  The rate of one filter (what
 * bloom_fpr reports) is the mean over its blocks of (bits set / 512)^k,
 * and with few blocks it strays: sized that way, a quarter of the filters
 * of 103 values at 1% were above the target, the worst of 200 by 45%, and
 * at 1e-6 some of 1000 values were at 5 times it.  So the block count is
 * grown from there to the fewest with which at least 95% of filters filled
 * to capacity are at or below the target:
 *
 *		mean + 2.01 sd <= target
 *
 * for one filter's rate.  With independent Poisson(lambda) loads a block's
 * rate has mean m1 = fpr(lambda, k) and second moment m2 = sum_j
 * Poisson(j; lambda) rate_2k(j) (two absent values both reported present:
 * 2k positions hit), so variance m2 - m1^2.  The loads of one filter add up
 * to n exactly, though, which takes out the part of that variance the load
 * explains, lambda m1'^2 (m1' = dm1/dlambda); the filter's rate, a mean of B
 * blocks, has variance (m2 - m1^2 - lambda m1'^2) / B.  (Its true mean is a
 * little below m1, as loads adding up to n vary less than Poisson ones: an
 * error on the safe side.)  The rate is a sum of positive, right-skewed
 * terms, so its 95% point lies further above its mean than a normal
 * distribution's 1.645 sd: up to 2.01 sd for a gamma distribution of any
 * skewness, and up to 1.87 sd in simulations of these filters; 2.01 sd
 * covers both.  The margin falls as 1/sqrt(B), so it costs bits at small n
 * only: at 1%, 50% more at 100 values, 0.1% at a million (9.93 bits per
 * value); at 1e-6, 25% more at 100 values, 0.6% at a million.
 *
 * The mean also counts the chance, n / 2^64, that an absent value's 64-bit
 * hash is a present value's: then it is reported present whatever the
 * size.  It matters only below about 1e-9 (0.4% of the rate of the largest
 * filter there); at 1e-12 it limits a filter to 18 million values, at 1e-15
 * to 18 thousand, and it sets the lowest rate sizing accepts, BF_MIN_FPR.
 *
 * Sizing must give the same answer on every machine, or filters built for
 * the same (capacity, fpr) on two servers could not be unioned.  So it uses
 * only what IEEE 754 defines exactly (+, -, *, /, sqrt, floor and ceil) and
 * no other libm function (exp_neg below stands in for exp(), whose last bit
 * differs between libm versions), and the section is compiled without
 * contracting a * b + c into a fused multiply-add, which GCC does by default
 * where the CPU has one (arm64; baseline x86-64 has none).  XXX: a
 * compiler told to use x87 extended precision (32-bit x86 without SSE2) or
 * to contract anyway (clang -ffp-contract=fast) could still differ in the
 * last bit, and then, at an exact boundary, by a block.
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
 * Sizing
 * ---------------------------------------------------------------------
 */

/* No fused multiply-add in sizing: see "Sizing" in the file header. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

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
 * exp(-x) for 0 <= x <= 700, from +, -, * and / alone so that every machine
 * gets the same bits (see the file header); within about one ulp of the
 * true value.  x = n ln 2 - r with |r| <= ln 2 / 2 (ln 2 split in two so
 * that n ln 2 is exact), e^-r by its Taylor series to r^13 / 13!, whose
 * remainder is below 2^-57, then times 2^-n, which is exact.
 */
static double
exp_neg(double x)
{
	const double ln2_high = 0x1.62e42fee00000p-1;	/* 33 bits: n * it is exact */
	const double ln2_low = 0x1.a39ef35793c76p-33;
	const double inv_ln2 = 0x1.71547652b82fep0;
	int			n = (int) (x * inv_ln2 + 0.5);
	double		r = (n * ln2_high - x) + n * ln2_low;
	double		result = 1.0;

	for (int i = 13; i >= 1; i--)
		result = 1.0 + result * r / i;
	while (n > 0)
	{
		int			step = n > 1000 ? 1000 : n;
		uint64_t	bits = (uint64_t) (1023 - step) << 52;	/* 2^-step */
		double		scale;

		memcpy(&scale, &bits, sizeof(scale));
		result *= scale;
		n -= step;
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
	double		weight = exp_neg(load_per_block);
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

/* Probabilities of a bit count below this are dropped: see block_rates. */
#define NEGLIGIBLE_PROBABILITY 1e-300

/*
 * rate[j] = probability that an absent value is "present" in a block that
 * holds j values, for j = 0..last.  It is E[(C/512)^k], C being the number of
 * bits set by j k uniformly thrown positions; C's distribution is followed
 * exactly, one position at a time.  If rate_both is not NULL, it gets
 * E[(C/512)^2k], the chance that two absent values are both "present" in
 * that block: the second moment the sizing margin needs.
 *
 * Probabilities of the lowest counts fall towards zero as positions are
 * thrown; once one is below NEGLIGIBLE_PROBABILITY it is dropped.  That
 * changes no rate by more than 1e-200 of itself: at most 513 * 1e-300 is
 * dropped per throw, below 1e-292 over the at most 700 * 32 throws, and no
 * rate is below 512^-32 = 2e-87.  It spares the subnormal numbers those
 * probabilities would decay into, on which x86 is slower a hundredfold.
 * Each throw maps one array into the other, which pipelines better than an
 * update in place.
 */
static void
block_rates(int k, int last, double *rate, double *rate_both)
{
	double		occupancy[2][BF_BLOCK_BITS + 1] = {{1.0}};	/* P(C = c) */
	double		stay[BF_BLOCK_BITS + 1];	/* P(a throw hits one of c set bits) */
	double		enter[BF_BLOCK_BITS + 1];	/* P(it hits a clear bit, of c - 1 set) */
	double		hit[BF_BLOCK_BITS + 1];
	int			current = 0;
	int			lowest = 0;		/* occupancy[current][c] is 0 below this */
	int			highest = 0;	/* and above this */

	for (int c = 0; c <= BF_BLOCK_BITS; c++)
	{
		stay[c] = (double) c / BF_BLOCK_BITS;
		enter[c] = (double) (BF_BLOCK_BITS - c + 1) / BF_BLOCK_BITS;
		hit[c] = power_int((double) c / BF_BLOCK_BITS, k);
	}

	rate[0] = 0.0;
	if (rate_both != NULL)
		rate_both[0] = 0.0;
	for (int j = 1; j <= last; j++)
	{
		const double *now;
		double		sum = 0.0;
		double		sum_both = 0.0;

		for (int t = 0; t < k; t++)
		{
			const double *before = occupancy[current];
			double	   *after = occupancy[1 - current];

			after[lowest] = before[lowest] * stay[lowest];
			for (int c = lowest + 1; c <= highest; c++)
				after[c] = before[c] * stay[c] + before[c - 1] * enter[c];
			if (highest < BF_BLOCK_BITS)
			{
				highest++;
				after[highest] = before[highest - 1] * enter[highest];
			}
			current = 1 - current;
			while (after[lowest] < NEGLIGIBLE_PROBABILITY && lowest < highest)
				after[lowest++] = 0.0;
		}
		now = occupancy[current];
		for (int c = lowest; c <= highest; c++)
		{
			sum += now[c] * hit[c];
			sum_both += now[c] * hit[c] * hit[c];
		}
		rate[j] = sum;
		if (rate_both != NULL)
			rate_both[j] = sum_both;
	}
}

/* Poisson(load) mixture of the per-load rates. */
static double
mixture_fpr(double load_per_block, const double *rate, int last)
{
	double		weight = exp_neg(load_per_block);
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
	block_rates(k, last, rate, NULL);
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
		block_rates(k, last, rate, NULL);
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
 * exact rate decides among its neighbours.
 */
void
bf_sizing_search(double fpr, int *k_out, double *load_out)
{
	double		approximate[BF_MAX_K + 1] = {0};
	int			approximate_best = 0;

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
}

/*
 * The search's answers for common rates, written out (hexadecimal, so
 * exactly) because it takes milliseconds and every new process would pay
 * them: each parallel worker of every bloom_agg, each new connection.  The
 * unit tests check every entry against the search.
 */
const BfKnownSizing bf_known_sizing[] = {
	{0.1, 3, 0x1.a782975315006p+6},	/* 105.877530 values per block */
	{0.05, 4, 0x1.441cc663d2698p+6},	/* 81.028101 values per block */
	{0.02, 6, 0x1.ea8c239554b34p+5},	/* 61.318427 values per block */
	{0.01, 6, 0x1.9cfcaae9c6be2p+5},	/* 51.623373 values per block */
	{0.005, 7, 0x1.6312a8817301cp+5},	/* 44.384110 values per block */
	{0.001, 9, 0x1.077c0c09065b8p+5},	/* 32.935570 values per block */
	{0.0001, 12, 0x1.73da5716fb87ap+4},	/* 23.240806 values per block */
	{0.00001, 14, 0x1.1419dbdb92ab2p+4},	/* 17.256313 values per block */
};
const int	bf_nknown_sizing = sizeof(bf_known_sizing) / sizeof(bf_known_sizing[0]);

/*
 * How far above its mean the sizing puts the 95% point of one filter's rate,
 * in standard deviations: see "Sizing" in the file header.
 */
#define RATE_QUANTILE_SDS 2.01

/*
 * What sizing keeps for one target rate: k and the asymptotic load from
 * bf_sizing_search (or its table), the per-load rates of that k that the
 * margin needs, and the most values the largest filter holds at that rate.
 */
typedef struct RateSizing
{
	double		fpr;			/* the target; 0 in an unused slot */
	int			k;				/* 0: no k reaches the target */
	double		load;			/* values per block on average at the target */
	int			last;			/* rate[] and rate_both[] cover 0..last + 1 */
	uint64_t	max_capacity;
	double		rate[MAX_RATE_ENTRIES + 1];
	double		rate_both[MAX_RATE_ENTRIES + 1];
} RateSizing;

/*
 * The last few rates sized, because callers ask for the same ones over and
 * over (one filter per group of a GROUP BY, two rates in one query): a new
 * one costs about 0.4 ms for its rate tables and maximum capacity, 3 ms
 * more if it is not in bf_known_sizing; after that a sizing takes 1-2 us.
 * Not thread-safe; the server runs one thread per process.
 */
#define RATE_SIZING_SLOTS 4
static RateSizing rate_sizings[RATE_SIZING_SLOTS];
static int	next_rate_sizing;

/*
 * The sizing's 95% point of the rate of one filter of n values in nblocks
 * blocks: mean + RATE_QUANTILE_SDS standard deviations, as in the file
 * header.  Also gives the derivative of the mean by the load, for the
 * search; a load above the asymptotic one exceeds the target by its mean
 * alone and is not computed (the rate tables stop there).
 */
static double
rate_quantile(const RateSizing *sizing, uint64_t n, uint32_t nblocks,
			  double *slope_out)
{
	double		load = (double) n / nblocks;
	int			last = last_load_considered(load);
	double		weight = exp_neg(load);
	double		mean = 0.0;
	double		both = 0.0;
	double		slope = 0.0;
	double		variance;

	*slope_out = 0.0;
	if (load > sizing->load)
		return INFINITY;
	if (last > sizing->last)
		last = sizing->last;
	for (int j = 0; j <= last; j++)
	{
		mean += weight * sizing->rate[j];
		both += weight * sizing->rate_both[j];
		slope += weight * (sizing->rate[j + 1] - sizing->rate[j]);
		weight *= load / (j + 1);
	}
	/* Poisson variance less what the load explains, lambda m1'^2 */
	variance = both - mean * mean - load * slope * slope;
	if (variance < 0.0)
		variance = 0.0;
	*slope_out = slope;
	/* an absent value whose 64-bit hash a present value has: see BF_MIN_FPR */
	mean += (double) n * 0x1p-64;
	return mean + RATE_QUANTILE_SDS * sqrt(variance / nblocks);
}

static bool
meets_target(const RateSizing *sizing, uint64_t n, uint32_t nblocks)
{
	double		slope;

	return rate_quantile(sizing, n, nblocks, &slope) <= sizing->fpr;
}

/*
 * The fewest blocks that hold n values at the target, n being at most
 * max_capacity (so BF_MAX_BLOCKS do).  Newton's method on the load, from
 * the asymptotic answer, finds it in three or four evaluations; each
 * evaluation also narrows a bracket, and after eight the search bisects
 * it, so it always ends.  The rate falls as blocks are added, so the
 * answer is the one block count that meets the target where one fewer
 * does not.
 */
static uint32_t
fewest_blocks(const RateSizing *sizing, uint64_t n)
{
	uint32_t	failing = 0;	/* the most blocks known to be too few */
	uint32_t	meeting = BF_MAX_BLOCKS;	/* the fewest known to do */
	double		guess = ceil((double) n / sizing->load);

	for (int step = 0; meeting - failing > 1; step++)
	{
		uint32_t	nblocks;
		double		slope;
		double		excess;
		double		load;
		double		better_load;

		if (step < 8 && guess > failing && guess < meeting)
			nblocks = (uint32_t) guess;
		else
			nblocks = failing + (meeting - failing) / 2;
		excess = rate_quantile(sizing, n, nblocks, &slope) - sizing->fpr;
		load = (double) n / nblocks;
		/* the load whose mean is lower by the excess, linearly */
		better_load = slope > 0.0 && isfinite(excess) ? load - excess / slope : 0.0;
		guess = better_load > 0.0 ? ceil((double) n / better_load) : 0.0;
		if (excess <= 0.0)
		{
			meeting = nblocks;
			if (guess >= nblocks)
				guess = nblocks - 1.0;	/* is one fewer enough too? */
		}
		else
		{
			failing = nblocks;
			if (guess <= nblocks)
				guess = nblocks + 1.0;
		}
	}
	return meeting;
}

/*
 * The most values BF_MAX_BLOCKS hold at the target, by bisection: at most
 * load * BF_MAX_BLOCKS, where the mean alone reaches the target.  So it is
 * exact as the error message quotes it: that many values fit, one more
 * does not.
 */
static uint64_t
max_capacity_for(const RateSizing *sizing)
{
	uint64_t	fitting = 0;
	uint64_t	too_many = (uint64_t) (sizing->load * BF_MAX_BLOCKS) + 1;

	while (meets_target(sizing, too_many, BF_MAX_BLOCKS))
		too_many *= 2;			/* cannot happen: its load exceeds the asymptotic one */
	while (too_many - fitting > 1)
	{
		uint64_t	middle = fitting + (too_many - fitting) / 2;

		if (meets_target(sizing, middle, BF_MAX_BLOCKS))
			fitting = middle;
		else
			too_many = middle;
	}
	return fitting;
}

/*
 * Sizing for fpr, from the slots above, or made in the least recently made
 * slot: k and load from the table or the search, then the rate tables of
 * that k and the maximum capacity.
 */
static const RateSizing *
rate_sizing_for(double fpr)
{
	RateSizing *sizing;

	for (int i = 0; i < RATE_SIZING_SLOTS; i++)
		if (rate_sizings[i].fpr == fpr)
			return &rate_sizings[i];

	sizing = &rate_sizings[next_rate_sizing];
	next_rate_sizing = (next_rate_sizing + 1) % RATE_SIZING_SLOTS;
	sizing->fpr = 0.0;			/* unused until complete */
	sizing->k = 0;
	sizing->load = 0.0;
	for (int i = 0; i < bf_nknown_sizing; i++)
		if (bf_known_sizing[i].fpr == fpr)
		{
			sizing->k = bf_known_sizing[i].k;
			sizing->load = bf_known_sizing[i].load;
		}
	if (sizing->k == 0)
		bf_sizing_search(fpr, &sizing->k, &sizing->load);
	sizing->max_capacity = 0;
	if (sizing->k != 0)
	{
		sizing->last = last_load_considered(sizing->load);
		if (sizing->last >= MAX_RATE_ENTRIES)
			sizing->last = MAX_RATE_ENTRIES - 1;
		block_rates(sizing->k, sizing->last + 1, sizing->rate, sizing->rate_both);
		sizing->fpr = fpr;		/* meets_target reads it */
		sizing->max_capacity = max_capacity_for(sizing);
	}
	sizing->fpr = fpr;
	return sizing;
}

/* Forgets every rate sized: for tests of what a new process computes. */
void
bf_sizing_forget(void)
{
	memset(rate_sizings, 0, sizeof(rate_sizings));
	next_rate_sizing = 0;
}

/*
 * The 95% point sizing assumes for the rate of one filter of capacity values
 * in nblocks blocks, with the k of fpr; INFINITY where sizing never goes
 * (more values per block than the asymptotic load), NAN for a bad fpr.
 */
double
bf_rate_quantile(uint64_t capacity, uint32_t nblocks, double fpr)
{
	const RateSizing *sizing;
	double		slope;

	if (!(fpr > 0.0 && fpr <= 0.5) || nblocks < 1)
		return NAN;
	sizing = rate_sizing_for(fpr);
	if (sizing->k == 0)
		return INFINITY;
	return rate_quantile(sizing, capacity, nblocks, &slope);
}

size_t
bf_value_bytes(uint32_t nblocks)
{
	return BF_HEADER_SIZE + (size_t) nblocks * BF_BLOCK_BYTES;
}

/*
 * Chooses k and the block count for capacity values at false-positive rate
 * fpr: the one sizing routine every constructor uses.  k depends on fpr
 * alone; the block count is the fewest with which at least 95% of filters
 * filled to capacity are at or below fpr (see the file header).
 */
BfStatus
bf_size_for(uint64_t capacity, double fpr, BfSizing *out)
{
	const RateSizing *sizing;

	memset(out, 0, sizeof(*out));
	if (capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(fpr > 0.0 && fpr <= 0.5))
		return BF_ERR_FPR;

	if (fpr < BF_MIN_FPR)
		return BF_ERR_FPR_UNREACHABLE;

	sizing = rate_sizing_for(fpr);
	if (sizing->k == 0 || sizing->max_capacity == 0)
		return BF_ERR_FPR_UNREACHABLE;	/* cannot happen at BF_MIN_FPR */

	out->k = (uint8_t) sizing->k;
	out->max_capacity = sizing->max_capacity;
	/* more than half the rate at that count is hash collisions */
	out->hash_limited = (double) sizing->max_capacity * 0x1p-64 > fpr / 2;
	if (capacity > sizing->max_capacity)
		return BF_ERR_TOO_LARGE;
	out->nblocks = fewest_blocks(sizing, capacity);
	out->bits_per_element = (double) out->nblocks * BF_BLOCK_BITS / (double) capacity;
	return BF_OK;
}

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif

/* ---------------------------------------------------------------------
 * Header
 * ---------------------------------------------------------------------
 */

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
	double		per_value = 1.0 - power_int(1.0 - 1.0 / BF_BLOCK_BITS, k);

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

		sum += power_int((double) set / BF_BLOCK_BITS, k);
	}
	return sum / nblocks;
}
