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

#endif							/* BF_FUZZ_CHECK_H */
