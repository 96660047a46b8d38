/*-------------------------------------------------------------------------
 *
 * fuzz_check.h
 *	  The assertion macro shared by the fuzz targets and the seed generator.
 *
 * assert() would vanish under -DNDEBUG; a violated invariant must always
 * abort, because an abort is what libFuzzer reports (with the input that
 * caused it saved as a crash artifact).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_FUZZ_CHECK_H
#define BF_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(condition) \
	do { \
		if (!(condition)) \
		{ \
			fprintf(stderr, "invariant violated: %s (%s:%d)\n", \
					#condition, __FILE__, __LINE__); \
			abort(); \
		} \
	} while (0)

/*
 * The body sum of bloom.h ("The body check"), written out apart from the
 * core: word j of what follows a header_size-byte header times
 * (j * 0x9E3779B1 + 0x7F4A7C15) | 1 (a cut last word counts for nothing:
 * the length check refuses it).  bloom and qfilter sum alike.
 */
static inline uint32_t
reference_body_sum(const uint8_t *value, size_t len, size_t header_size)
{
	uint32_t	sum = 0;

	for (size_t j = 0; header_size + 4 * j + 4 <= len; j++)
	{
		const uint8_t *w = value + header_size + 4 * j;
		uint32_t	word = (uint32_t) w[0] | (uint32_t) w[1] << 8 |
			(uint32_t) w[2] << 16 | (uint32_t) w[3] << 24;

		sum += word * (((uint32_t) j * UINT32_C(0x9E3779B1) + UINT32_C(0x7F4A7C15)) | 1);
	}
	return sum;
}

#endif							/* BF_FUZZ_CHECK_H */
