/*-------------------------------------------------------------------------
 *
 * canonical.c
 *	  The canonical form of numbers, part of the pure core (see
 *	  canonical.h, which also holds the one-line forms of the other kinds):
 *	  the one routine that both the server (keykind.c, from numeric_send's
 *	  parts) and the client library (from a decimal string) hash numbers
 *	  with.
 *
 * Numbers
 * -------
 * Values equal in SQL must hash equal.  An integral value that fits an
 * int64 hashes as that int64, whatever its type (int2, int4, int8,
 * numeric) or spelling (1000, 1e3, 1000.00).  Any other number hashes as
 * numeric's own parts with the zero digits at both ends removed: a 16-bit
 * sign word, a 16-bit weight and the base-10000 digits, all little-endian
 * 16-bit words.  Display scale is left out (0.5 = 0.50).  That form costs
 * the value's stored size, where its text could be 131,072 characters for
 * 1e131071.
 *
 * A long form is hashed with XXH3's streaming interface, which gives the
 * same hash as hashing it in one piece, so nothing is allocated.
 *
 *-------------------------------------------------------------------------
 */
#include "canonical.h"

bool
bf_numeric_int64(const uint16_t *digits, int ndigits, int weight, bool negative,
				 int64_t *integer)
{
	uint64_t	magnitude = 0;

	if (ndigits > 0 && weight < ndigits - 1)
		return false;			/* has a fractional part */
	if (weight > 4)
		return false;			/* at least 10000^5 > 2^63 */
	for (int i = 0; i <= weight; i++)
	{
		uint64_t	digit = i < ndigits ? digits[i] : 0;

		if (magnitude > (UINT64_MAX - digit) / BF_NUMERIC_BASE)
			return false;
		magnitude = magnitude * BF_NUMERIC_BASE + digit;
	}
	if (magnitude > (uint64_t) INT64_MAX + (negative ? 1 : 0))
		return false;
	*integer = negative ? (int64_t) (0 - magnitude) : (int64_t) magnitude;
	return true;
}

/* Bytes of the canonical form hashed in one piece; longer ones stream. */
#define NUMERIC_CHUNK 256

uint64_t
bf_hash_numeric(uint16_t sign, int weight, const uint16_t *digits, int ndigits,
				uint64_t seed)
{
	bool		finite = sign == BF_NUMERIC_POS || sign == BF_NUMERIC_NEG;
	uint8_t		chunk[NUMERIC_CHUNK];
	size_t		used;
	int64_t		integer;
	XXH3_state_t state;

	while (ndigits > 0 && digits[0] == 0)
	{
		digits++;
		ndigits--;
		weight--;
	}
	while (ndigits > 0 && digits[ndigits - 1] == 0)
		ndigits--;
	if (finite && ndigits == 0)
		return bf_hash_int64(0, seed);
	if (finite && bf_numeric_int64(digits, ndigits, weight, sign == BF_NUMERIC_NEG,
								   &integer))
		return bf_hash_int64(integer, seed);

	bf_store_le16(chunk, sign);
	bf_store_le16(chunk + 2, (uint16_t) weight);
	used = 4;
	if (used + 2 * (size_t) ndigits <= NUMERIC_CHUNK)
	{
		for (int i = 0; i < ndigits; i++)
			bf_store_le16(chunk + 4 + 2 * i, digits[i]);
		return bf_hash(chunk, used + 2 * (size_t) ndigits, seed);
	}

	/* a state on the stack must start zeroed: reset reads its old seed */
	memset(&state, 0, sizeof(state));
	XXH3_64bits_reset_withSeed(&state, seed);
	for (int i = 0; i < ndigits; i++)
	{
		if (used == NUMERIC_CHUNK)
		{
			XXH3_64bits_update(&state, chunk, used);
			used = 0;
		}
		bf_store_le16(chunk + used, digits[i]);
		used += 2;
	}
	XXH3_64bits_update(&state, chunk, used);
	return XXH3_64bits_digest(&state);
}

const char *
bf_key_kind_name(uint8_t kind)
{
	static const char *const names[] = {
		[BF_KIND_NONE] = "none",
		[BF_KIND_NUMBER] = "number",
		[BF_KIND_FLOAT] = "float",
		[BF_KIND_TEXT] = "text",
		[BF_KIND_BYTEA] = "bytea",
		[BF_KIND_UUID] = "uuid",
		[BF_KIND_BOOL] = "boolean",
		[BF_KIND_DATE] = "date",
		[BF_KIND_TIMESTAMP] = "timestamp",
		[BF_KIND_TIMESTAMPTZ] = "timestamptz",
		[BF_KIND_OTHER] = "other",
	};

	return kind <= BF_KIND_LAST ? names[kind] : "unknown";
}
