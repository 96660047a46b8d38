/*-------------------------------------------------------------------------
 *
 * canonical.h
 *	  The canonical byte forms of key values and their hashes, part of the
 *	  pure core (canonical.c).  It owns, for each key kind that has one,
 *	  the rule that turns a value into the bytes bf_hash sees:
 *	    - number: an integral value in int64 range as one little-endian
 *	      int64; any other numeric as its sign, weight and base-10000
 *	      digits (bf_hash_numeric);
 *	    - float: the double's bits, -0 made 0 and every NaN one NaN;
 *	    - text: the UTF-8 bytes without trailing blanks;
 *	    - bytea, uuid: the bytes;
 *	    - boolean, date, timestamp, timestamptz: the value as an int64.
 *
 * Two callers share these routines, so that they cannot drift apart: the
 * server's keykind.c, which first takes a SQL value apart (numeric_send,
 * the server encoding converted to UTF-8), and the client library
 * (client/), which first parses an application's value.  Deciding which
 * kind a value is, and refusing the wrong one, stays with each caller.
 *
 * Like bloom.h: no PostgreSQL headers, no allocation, nothing thrown.
 * These are the version 2 rules; version 1 differed only for fractional
 * and out-of-int64 numerics and for strings in a non-UTF-8 server
 * encoding (see bloom.h), which each caller handles itself.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_CANONICAL_H
#define BF_CANONICAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bloom.h"

/*
 * The sign words of numeric's binary form (numeric_send), which the
 * canonical form of a non-integral number keeps.  Persisted: never change.
 */
#define BF_NUMERIC_POS		0x0000
#define BF_NUMERIC_NEG		0x4000
#define BF_NUMERIC_NAN		0xC000
#define BF_NUMERIC_PINF		0xD000
#define BF_NUMERIC_NINF		0xF000

/* Base of numeric's digits. */
#define BF_NUMERIC_BASE		10000

/*
 * An int64 as its little-endian bytes, so the hash is the same on every
 * platform.  Inline: integers are the commonest key, and the aggregates and
 * the client hash one per row.
 */
static inline uint64_t
bf_hash_int64(int64_t value, uint64_t seed)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the value's own bytes: byte stores would stall the hash's 8-byte load */
	uint64_t	bytes = (uint64_t) value;

	return bf_hash(&bytes, sizeof(bytes), seed);
#else
	uint8_t		bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t) ((uint64_t) value >> (8 * i));
	return bf_hash(bytes, sizeof(bytes), seed);
#endif
}

/* -0 and 0 are equal in SQL, and so are all NaNs. */
static inline uint64_t
bf_hash_float8(double value, uint64_t seed)
{
	uint64_t	bits;

	if (value == 0.0)
		value = 0.0;
	if (value != value)
		bits = UINT64_C(0x7FF8000000000000);
	else
		memcpy(&bits, &value, sizeof(bits));
	return bf_hash_int64((int64_t) bits, seed);
}

/*
 * A string's UTF-8 bytes without trailing blanks: bpchar compares ignoring
 * them, and varchar = bpchar compares as bpchar, so 'x '::varchar must find
 * 'x'::char(3).  Strings that differ only in trailing blanks share a key,
 * which costs a false positive, never a false negative.
 */
static inline uint64_t
bf_hash_string(const char *utf8, size_t len, uint64_t seed)
{
	while (len > 0 && utf8[len - 1] == ' ')
		len--;
	return bf_hash(utf8, len, seed);
}

static inline uint64_t
bf_hash_bytes(const void *bytes, size_t len, uint64_t seed)
{
	return bf_hash(bytes, len, seed);
}

#define BF_UUID_BYTES 16

static inline uint64_t
bf_hash_uuid(const uint8_t *uuid, uint64_t seed)
{
	return bf_hash(uuid, BF_UUID_BYTES, seed);
}

static inline uint64_t
bf_hash_bool(bool value, uint64_t seed)
{
	return bf_hash_int64(value ? 1 : 0, seed);
}

/* Days since 2000-01-01, as PostgreSQL's date stores them. */
static inline uint64_t
bf_hash_date(int32_t days, uint64_t seed)
{
	return bf_hash_int64(days, seed);
}

/* Microseconds since 2000-01-01 00:00 (UTC for timestamptz). */
static inline uint64_t
bf_hash_timestamp(int64_t microseconds, uint64_t seed)
{
	return bf_hash_int64(microseconds, seed);
}

/*
 * A number given as numeric's parts: sign (one of BF_NUMERIC_*), weight
 * (the power of 10000 of digits[0]) and ndigits base-10000 digits, most
 * significant first; zero digits at either end are allowed and ignored.
 * An integral value in int64 range hashes as that int64, so 42::numeric
 * finds 42::bigint; any other as sign, weight and the digits without
 * leading or trailing zero digits, so 0.5 and 0.50 hash alike.  The work
 * is proportional to ndigits.
 */
extern BF_HIDDEN uint64_t bf_hash_numeric(uint16_t sign, int weight,
										  const uint16_t *digits, int ndigits,
										  uint64_t seed);

/*
 * The int64 an integral number's parts equal, if it is integral and in
 * range; digits without leading or trailing zero digits.
 */
extern BF_HIDDEN bool bf_numeric_int64(const uint16_t *digits, int ndigits,
									   int weight, bool negative, int64_t *integer);

/*
 * A key kind's name, as bloom_info, the clients and error messages show
 * it ("number", "text", ...); "unknown" for a value no kind has.
 */
extern BF_HIDDEN const char *bf_key_kind_name(uint8_t kind);

#endif							/* BF_CANONICAL_H */
