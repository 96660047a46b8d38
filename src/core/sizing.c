/*-------------------------------------------------------------------------
 *
 * sizing.c
 *	  How large a filter must be: k and the block count for a capacity and
 *	  a target false-positive rate (bf_size_for, the one sizing routine),
 *	  from the exact false-positive rate of the blocked layout and the
 *	  spread of single filters, and the memo of rates sized that its
 *	  caller lends it (BfSizingMemo).  Part of the pure core (see
 *	  sizing.h): it keeps no state of its own.
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
#include "sizing.h"

#include <math.h>
#include <string.h>

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
	const double bit_stays_clear = bf_power_int(1.0 - 1.0 / BF_BLOCK_BITS, k);
	double		weight = exp_neg(load_per_block);
	double		clear_after_j = 1.0;
	double		sum = 0.0;
	int			last = (int) (load_per_block + 12.0 * sqrt(load_per_block) + 30.0);

	for (int j = 0; j <= last; j++)
	{
		sum += weight * bf_power_int(1.0 - clear_after_j, k);
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
		hit[c] = bf_power_int((double) c / BF_BLOCK_BITS, k);
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
#define MAX_RATE_ENTRIES BF_RATE_ENTRIES

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

/* What sizing works out for one rate (sizing.h), kept in the caller's memo. */
typedef BfRateSizing RateSizing;

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
 * Works out the sizing of fpr in *sizing: k and load from the table or the
 * search, then the rate tables of that k and the maximum capacity.
 */
static void
make_rate_sizing(RateSizing *sizing, double fpr)
{
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
}

/*
 * The sizing of fpr from the memo's slots, or made in the least recently
 * made slot.
 */
static const RateSizing *
memo_rate_sizing(BfSizingMemo *memo, double fpr)
{
	RateSizing *sizing;

	for (int i = 0; i < BF_SIZING_MEMO_SLOTS; i++)
		if (memo->slot[i].fpr == fpr)
			return &memo->slot[i];
	sizing = &memo->slot[memo->next];
	memo->next = (memo->next + 1) % BF_SIZING_MEMO_SLOTS;
	make_rate_sizing(sizing, fpr);
	return sizing;
}

/* Empties a memo: what a zeroed one is. */
void
bf_sizing_memo_clear(BfSizingMemo *memo)
{
	memset(memo, 0, sizeof(*memo));
}

/*
 * The 95% point sizing assumes for the rate of one filter of capacity values
 * in nblocks blocks, with the k of fpr; INFINITY where sizing never goes
 * (more values per block than the asymptotic load), NAN for a bad fpr.
 */
static double
quantile_from(const RateSizing *sizing, uint64_t capacity, uint32_t nblocks)
{
	double		slope;

	if (sizing->k == 0)
		return INFINITY;
	return rate_quantile(sizing, capacity, nblocks, &slope);
}

/*
 * Without a memo a rate's sizing is worked out in a frame of its own (18 kB
 * of stack), so that a sizing from a memo does not reserve the room.
 */
static BF_NOINLINE double
quantile_afresh(uint64_t capacity, uint32_t nblocks, double fpr)
{
	RateSizing	sizing;

	make_rate_sizing(&sizing, fpr);
	return quantile_from(&sizing, capacity, nblocks);
}

double
bf_rate_quantile(uint64_t capacity, uint32_t nblocks, double fpr, BfSizingMemo *memo)
{
	if (!(fpr > 0.0 && fpr <= 0.5) || nblocks < 1)
		return NAN;
	if (memo == NULL)
		return quantile_afresh(capacity, nblocks, fpr);
	return quantile_from(memo_rate_sizing(memo, fpr), capacity, nblocks);
}

/* What bf_size_for decides for valid arguments, from the sizing of fpr. */
static BfStatus
size_from(const RateSizing *sizing, uint64_t capacity, double fpr, BfSizing *out)
{
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

/* As quantile_afresh: the frame of a sizing without a memo. */
static BF_NOINLINE BfStatus
size_afresh(uint64_t capacity, double fpr, BfSizing *out)
{
	RateSizing	sizing;

	make_rate_sizing(&sizing, fpr);
	return size_from(&sizing, capacity, fpr, out);
}

/*
 * Chooses k and the block count for capacity values at false-positive rate
 * fpr: the one sizing routine every constructor uses.  k depends on fpr
 * alone; the block count is the fewest with which at least 95% of filters
 * filled to capacity are at or below fpr (see the file header).  The memo
 * (NULL: none) changes how long it takes, never the answer.
 */
BfStatus
bf_size_for(uint64_t capacity, double fpr, BfSizing *out, BfSizingMemo *memo)
{
	memset(out, 0, sizeof(*out));
	if (capacity < 1)
		return BF_ERR_CAPACITY;
	if (!(fpr > 0.0 && fpr <= 0.5))
		return BF_ERR_FPR;

	if (fpr < BF_MIN_FPR)
		return BF_ERR_FPR_UNREACHABLE;

	if (memo == NULL)
		return size_afresh(capacity, fpr, out);
	return size_from(memo_rate_sizing(memo, fpr), capacity, fpr, out);
}

/*
 * The header of a new filter of fixed size, as bloom_empty makes it: no
 * key kind and no value yet, seed 0, one segment (as bf_read_header
 * decodes a blocked value).
 */
void
bf_fixed_header(uint64_t capacity, double fpr, const BfSizing *sizing, BfHeader *header)
{
	memset(header, 0, sizeof(*header));
	header->version = BF_FORMAT_VERSION;
	header->layout = BF_LAYOUT_BLOCKED512;
	header->k = sizing->k;
	header->identity.kind = BF_KIND_NONE;
	header->nblocks = sizing->nblocks;
	header->nsegments = 1;
	header->capacity = capacity;
	header->fpr = fpr;
}

#if defined(__clang__)
#pragma STDC FP_CONTRACT DEFAULT
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
