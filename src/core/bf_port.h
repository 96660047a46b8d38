/*-------------------------------------------------------------------------
 *
 * bf_port.h
 *	  Small helpers of the pure core (bloom.c, sizing.c, hashbuf.c): symbol
 *	  visibility, forced inlining, the bit-counting builtins behind inline
 *	  wrappers with a portable fallback, and an integer power.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PORT_H
#define BF_PORT_H

#include <stdint.h>

/*
 * Core functions stay out of the module's dynamic symbol table: calls from
 * the glue then bind directly instead of through the PLT, and can never bind
 * to a same-named symbol of the server or of another module.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BF_HIDDEN __attribute__((visibility("hidden")))
#else
#define BF_HIDDEN
#endif

/* For loops specialised by a constant argument. */
#if defined(__GNUC__) || defined(__clang__)
#define BF_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BF_ALWAYS_INLINE inline
#endif

static inline int
bf_popcount64(uint64_t word)
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

/* base^exponent for a small non-negative exponent, by squaring. */
static inline double
bf_power_int(double base, int exponent)
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

/* Leading zero bits of a nonzero word. */
static inline int
bf_leading_zeros(uint64_t word)
{
#if defined(__GNUC__) || defined(__clang__)
	return __builtin_clzll(word);
#else
	int			zeros = 0;

	while ((word & (UINT64_C(1) << (63 - zeros))) == 0)
		zeros++;
	return zeros;
#endif
}

#endif							/* BF_PORT_H */
