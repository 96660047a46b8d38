/*-------------------------------------------------------------------------
 *
 * fuzz_sizing.c
 *	  libFuzzer target: (capacity, fpr) pairs into bf_size_for, the one
 *	  sizing routine every constructor uses, and the promises it makes.
 *
 * Input layout (missing bytes read as zero):
 *
 *	bytes 0..7		capacity, little-endian
 *	bytes 8..15		fpr: the raw IEEE 754 bits, little-endian
 *	byte  16		flags
 *						bit 0: fpr is instead log-uniform in [0.5 * 2^-40, 0.5],
 *							   from bytes 8..11, because raw bits land in
 *							   the useful range (1e-12, 0.5] one time in 60
 *						bit 1: also check that what sizing remembers is
 *							   not stale, by sizing again without a memo
 *							   (costs a full sizing of the rate, hence
 *							   opt-in)
 *
 * Promises checked: a status for every input and the right one; on BF_OK,
 * nblocks in 1..BF_MAX_BLOCKS, k in 1..BF_MAX_K, a value within
 * BF_MAX_VALUE_BYTES, the exact blocked rate at this load at or below the
 * target, the 95% point of one filter's rate at or below it too with the
 * fewest blocks that do that, smaller capacities never needing more blocks,
 * and the same answer every time; on BF_ERR_TOO_LARGE, that the "at most N
 * values fit" the error message quotes is exact: N >= 1 fit, N + 1 do not;
 * BF_ERR_FPR_UNREACHABLE exactly below BF_MIN_FPR.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"
#include "sizing.h"
#include "fuzz_check.h"

#include <math.h>
#include <string.h>

/* The target's one memo of rates sized (sizing.h), as the server has one. */
static BfSizingMemo sizing_memo;

#define FLAG_LOG_UNIFORM_FPR	0x01
#define FLAG_CHECK_MEMO			0x02

/* Headroom for the rounding of the exact-rate sum, not for sizing errors. */
#define RATE_TOLERANCE			1e-9

typedef struct SizingInput
{
	uint64_t	capacity;
	double		fpr;
	uint8_t		flags;
} SizingInput;

static uint64_t
load_le(const uint8_t *data, size_t size, size_t offset, int nbytes)
{
	uint64_t	v = 0;

	for (int i = nbytes - 1; i >= 0; i--)
		v = (v << 8) | (offset + i < size ? data[offset + i] : 0);
	return v;
}

static SizingInput
decode(const uint8_t *data, size_t size)
{
	SizingInput in;
	uint64_t	fpr_bits = load_le(data, size, 8, 8);

	in.capacity = load_le(data, size, 0, 8);
	in.flags = size > 16 ? data[16] : 0;
	if (in.flags & FLAG_LOG_UNIFORM_FPR)
		in.fpr = 0.5 * exp2(-40.0 * (double) load_le(data, size, 8, 4) / 4294967296.0);
	else
		memcpy(&in.fpr, &fpr_bits, sizeof(in.fpr));
	return in;
}

static int
same_sizing(const BfSizing *a, const BfSizing *b)
{
	return a->nblocks == b->nblocks && a->k == b->k &&
		memcmp(&a->bits_per_element, &b->bits_per_element, sizeof(double)) == 0 &&
		a->max_capacity == b->max_capacity;
}

/* What a successful sizing promises to the constructors and to the user. */
static void
check_ok(uint64_t capacity, double fpr, const BfSizing *s)
{
	BfSizing	smaller;
	double		rate;

	FUZZ_CHECK(s->nblocks >= 1 && s->nblocks <= BF_MAX_BLOCKS);
	FUZZ_CHECK(s->k >= 1 && s->k <= BF_MAX_K);
	FUZZ_CHECK(bf_value_bytes(s->nblocks) <= BF_MAX_VALUE_BYTES);
	FUZZ_CHECK(bf_value_bytes(s->nblocks) ==
			   BF_HEADER_SIZE + (size_t) s->nblocks * BF_BLOCK_BYTES);
	FUZZ_CHECK(isfinite(s->bits_per_element) && s->bits_per_element > 0.0);
	FUZZ_CHECK(s->max_capacity >= capacity);

	/* The measured rate is at or below the target: the README's promise. */
	rate = bf_blocked_fpr((double) capacity / s->nblocks, s->k);
	FUZZ_CHECK(rate >= 0.0 && rate <= fpr * (1.0 + RATE_TOLERANCE));

	/* So is that of 95% of single filters, with no block to spare. */
	FUZZ_CHECK(bf_rate_quantile(capacity, s->nblocks, fpr, &sizing_memo) <= fpr);
	if (s->nblocks > 1)
		FUZZ_CHECK(bf_rate_quantile(capacity, s->nblocks - 1, fpr, &sizing_memo) > fpr);

	/* Fewer values never need a bigger filter, and k depends on fpr alone. */
	if (capacity > 1)
	{
		FUZZ_CHECK(bf_size_for(capacity - 1, fpr, &smaller, &sizing_memo) == BF_OK);
		FUZZ_CHECK(smaller.nblocks <= s->nblocks && smaller.k == s->k);
		FUZZ_CHECK(bf_size_for(capacity / 2, fpr, &smaller, &sizing_memo) == BF_OK);
		FUZZ_CHECK(smaller.nblocks <= s->nblocks && smaller.k == s->k);
	}
}

/*
 * The error message says "at most max_capacity values fit": they must, and
 * one more must not (max_capacity < capacity, so one more is in range).
 */
static void
check_too_large(uint64_t capacity, double fpr, const BfSizing *s)
{
	BfSizing	other;

	FUZZ_CHECK(s->k >= 1 && s->k <= BF_MAX_K);
	FUZZ_CHECK(s->max_capacity >= 1);	/* else the rate is unreachable */
	FUZZ_CHECK(s->max_capacity < capacity);
	FUZZ_CHECK(bf_size_for(s->max_capacity + 1, fpr, &other, &sizing_memo) == BF_ERR_TOO_LARGE);
	FUZZ_CHECK(bf_size_for(s->max_capacity, fpr, &other, &sizing_memo) == BF_OK);
	FUZZ_CHECK(other.k == s->k && other.nblocks <= BF_MAX_BLOCKS);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SizingInput in = decode(data, size);
	BfSizing	first;
	BfSizing	again;
	BfStatus	status = bf_size_for(in.capacity, in.fpr, &first, &sizing_memo);

	if (in.capacity < 1)
		FUZZ_CHECK(status == BF_ERR_CAPACITY);
	else if (!(in.fpr > 0.0 && in.fpr <= 0.5))
		FUZZ_CHECK(status == BF_ERR_FPR);
	else if (in.fpr < BF_MIN_FPR)
		FUZZ_CHECK(status == BF_ERR_FPR_UNREACHABLE);
	else
		FUZZ_CHECK(status == BF_OK || status == BF_ERR_TOO_LARGE);

	if (status == BF_OK)
		check_ok(in.capacity, in.fpr, &first);
	else if (status == BF_ERR_TOO_LARGE)
		check_too_large(in.capacity, in.fpr, &first);

	/* Same question, same answer: remembered ... */
	FUZZ_CHECK(bf_size_for(in.capacity, in.fpr, &again, &sizing_memo) == status);
	FUZZ_CHECK(same_sizing(&first, &again));

	/* ... and computed afresh, as a new process would. */
	if ((in.flags & FLAG_CHECK_MEMO) && (status == BF_OK || status == BF_ERR_TOO_LARGE))
	{
		FUZZ_CHECK(bf_size_for(in.capacity, in.fpr, &again, NULL) == status);
		FUZZ_CHECK(same_sizing(&first, &again));
	}
	return 0;
}
