/*-------------------------------------------------------------------------
 *
 * sizing.h
 *	  How large a filter must be (sizing.c, pure core): bf_size_for, the
 *	  one routine every constructor and bloom_params use, the memo of
 *	  rates sized that its caller owns (BfSizingMemo), the header of a new
 *	  filter it sized, and the search and rates behind it, which tests and
 *	  estimates use too.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_SIZING_H
#define BF_SIZING_H

#include "bloom.h"

/*
 * The lowest target rate sizing accepts.  Values are told apart by a 64-bit
 * hash, so an absent value shares its hash with one of n present values,
 * and is reported present, with probability about n / 2^64 (2^-64 is
 * 5.4e-20) whatever the size of the filter.  At 1e-18 a filter still holds
 * a few values (18 at most); below 2^-64 not even one.
 */
#define BF_MIN_FPR			1e-18

/* What the sizing routine decides for a (capacity, fpr) pair. */
typedef struct BfSizing
{
	uint32_t	nblocks;
	uint8_t		k;
	double		bits_per_element;	/* nblocks * 512 / capacity */
	uint64_t	max_capacity;	/* at this fpr, within BF_MAX_BLOCKS */
	bool		hash_limited;	/* max_capacity is set by 64-bit hash
								 * collisions (see BF_MIN_FPR), not size */
} BfSizing;

/* Most values a rate table covers: a load of 700 per block (sizing.c). */
#define BF_RATE_ENTRIES		1100

/*
 * What sizing works out for one target rate: k and the asymptotic load from
 * bf_sizing_search (or its table), the per-load rates of that k that the
 * margin needs, and the most values the largest filter holds at that rate.
 * Its fields are sizing.c's; callers only hold them, inside a memo.
 */
typedef struct BfRateSizing
{
	double		fpr;			/* the target; 0 in an unused slot */
	int			k;				/* 0: no k reaches the target */
	double		load;			/* values per block on average at the target */
	int			last;			/* rate[] and rate_both[] cover 0..last + 1 */
	uint64_t	max_capacity;
	double		rate[BF_RATE_ENTRIES + 1];
	double		rate_both[BF_RATE_ENTRIES + 1];
} BfRateSizing;

/*
 * The memo of the last few rates sized, which the caller owns and lends to
 * every function that sizes (bf_size_for, bf_rate_quantile, and in bloom.h
 * and delta.h whatever validates, plans or grows a chain: each segment of
 * a chain is sized at its own rate).  Callers ask for the same rates over
 * and over (one filter per group of a GROUP BY, every segment of a chain
 * whenever it is validated or grows): a new rate costs about 0.4 ms for its
 * tables and maximum capacity, 3 ms more if it is not in bf_known_sizing;
 * from the memo a sizing takes 1-2 us.  A slot is 18 kB, touched only once
 * used; the memo is 640 kB in all.
 *
 * The core keeps no state of its own: a memo is used by one thread at a
 * time, its owner's (the server's one per process, the client library's one
 * per thread).  All zero bytes are an empty memo, so a static one needs no
 * initialisation; bf_sizing_memo_clear empties one.  A NULL memo is none:
 * every sizing then works its rate out afresh, on the stack, with the same
 * answers.  The answers never depend on what a memo holds.
 */
#define BF_SIZING_MEMO_SLOTS (BF_MAX_SEGMENTS + 4)

struct BfSizingMemo
{
	BfRateSizing slot[BF_SIZING_MEMO_SLOTS];
	int			next;			/* the slot the next new rate takes */
};

extern BF_HIDDEN void bf_sizing_memo_clear(BfSizingMemo *memo);

/* The one sizing routine every constructor uses. */
extern BF_HIDDEN BfStatus bf_size_for(uint64_t capacity, double fpr, BfSizing *out,
									  BfSizingMemo *memo);

/*
 * The header of a new, empty filter of fixed size for (capacity, fpr), from
 * what bf_size_for decided for them (a chain's is bf_chain_header's).
 */
extern BF_HIDDEN void bf_fixed_header(uint64_t capacity, double fpr, const BfSizing *sizing,
									  BfHeader *header);

/* The search behind bf_size_for, and its precomputed answers (tests use them). */
typedef struct BfKnownSizing
{
	double		fpr;
	int			k;
	double		load;			/* values per block */
} BfKnownSizing;
extern BF_HIDDEN const BfKnownSizing bf_known_sizing[];
extern BF_HIDDEN const int bf_nknown_sizing;
extern BF_HIDDEN void bf_sizing_search(double fpr, int *k_out, double *load_out);
extern BF_HIDDEN double bf_blocked_fpr(double load_per_block, int k);
extern BF_HIDDEN double bf_rate_quantile(uint64_t capacity, uint32_t nblocks,
										double fpr, BfSizingMemo *memo);

#endif							/* BF_SIZING_H */
