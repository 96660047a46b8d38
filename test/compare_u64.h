/*-------------------------------------------------------------------------
 *
 * compare_u64.h
 *	  The qsort comparison of 64-bit hashes that the unit tests and the fuzz
 *	  targets check de-duplication against.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_TEST_COMPARE_U64_H
#define BF_TEST_COMPARE_U64_H

#include <stdint.h>

static inline int
compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a;
	uint64_t	y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

#endif							/* BF_TEST_COMPARE_U64_H */
