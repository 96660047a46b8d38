/*-------------------------------------------------------------------------
 *
 * keyparse.h
 *	  Keys spelled as text, read as the server's input functions read them
 *	  (keyparse.c), for bfc_contains_str and the CLI; and the version 1
 *	  rule for numbers.  Internal to the client library.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFC_KEYPARSE_H
#define BFC_KEYPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomfilter.h"
#include "bf_port.h"

/* Fills err (which may be NULL) with a code and a printf-style message. */
extern BF_HIDDEN void bfc_fail(bfc_error *err, bfc_code code, const char *format, ...)
			__attribute__((format(printf, 3, 4)));

/*
 * A number as numeric's parts (canonical.h): sign word, weight and
 * base-10000 digits, zero digits at both ends removed.
 */
typedef struct BfcNumber
{
	uint16_t	sign;
	int			weight;
	int			ndigits;
	uint16_t   *digits;			/* local or heap */
	uint16_t	local[16];
	uint16_t   *heap;
} BfcNumber;

/* numeric_in's syntax (PostgreSQL 15); release the result after use. */
/* The value of a hexadecimal digit in either case, or -1. */
extern BF_HIDDEN int bfc_hex_digit(char c);

extern BF_HIDDEN int bfc_parse_number(const char *text, size_t len, BfcNumber *out,
									  bfc_error *err);
extern BF_HIDDEN void bfc_number_release(BfcNumber *number);

/*
 * Version 1's hash of a number: the int64 when integral and in range,
 * else numeric_normalize's text (no exponent, no trailing fractional
 * zeros).
 */
extern BF_HIDDEN int bfc_hash_number_v1(const BfcNumber *number, uint64_t seed,
										uint64_t *hash, bfc_error *err);

/* float8in's syntax. */
extern BF_HIDDEN int bfc_parse_double(const char *text, size_t len, double *out,
									  bfc_error *err);

/* boolin's syntax. */
extern BF_HIDDEN int bfc_parse_bool(const char *text, size_t len, bool *out,
									bfc_error *err);

/* uuid_in's syntax. */
extern BF_HIDDEN int bfc_parse_uuid(const char *text, size_t len, uint8_t out[16],
									bfc_error *err);

/*
 * byteain's syntax: \x and hex digits, or the escape format.  *out is
 * malloc'd (free it), *out_len its length.
 */
extern BF_HIDDEN int bfc_parse_bytea(const char *text, size_t len, uint8_t **out,
									 size_t *out_len, bfc_error *err);

/*
 * ISO 8601 dates and timestamps, the subset whose value is certain: see
 * keyparse.c.  Timestamps are microseconds since 2000-01-01, UTC for
 * timestamptz, which needs an explicit offset.
 */
extern BF_HIDDEN int bfc_parse_date(const char *text, size_t len, int32_t *out,
									bfc_error *err);
extern BF_HIDDEN int bfc_parse_timestamp(const char *text, size_t len, bool with_zone,
										 int64_t *out, bfc_error *err);

#endif							/* BFC_KEYPARSE_H */
