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
#include <string.h>

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

/* For a large stack frame kept out of its caller's. */
#if defined(__GNUC__) || defined(__clang__)
#define BF_NOINLINE __attribute__((noinline))
#else
#define BF_NOINLINE
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

/*
 * Little-endian loads and stores: every format here is little-endian on
 * every platform, and these are the only place that says how.
 */
static inline void
bf_store_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static inline uint32_t
bf_load_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
		(uint32_t) p[3] << 24;
}

static inline void
bf_store_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

static inline uint64_t
bf_load_le64(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void
bf_store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
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
