/*-------------------------------------------------------------------------
 *
 * sizing.h
 *	  How large a filter must be (sizing.c, pure core): bf_size_for, the
 *	  one routine every constructor and bloom_params use, the header of a
 *	  new filter it sized, and the search and rates behind it, which tests
 *	  and estimates use too.
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

/* The one sizing routine every constructor uses. */
extern BF_HIDDEN BfStatus bf_size_for(uint64_t capacity, double fpr, BfSizing *out);

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
										double fpr);
extern BF_HIDDEN void bf_sizing_forget(void);

#endif							/* BF_SIZING_H */
