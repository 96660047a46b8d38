/*-------------------------------------------------------------------------
 *
 * wasm.c
 *	  What the Node.js package's WebAssembly module exports beside the
 *	  client library's own functions (client/bloomfilter.h, exported as
 *	  they are): the few things JavaScript cannot say in C's terms.
 *	    - A JavaScript number as a key: one type for integers and
 *	      fractions, so its kind follows the value and the filter (an
 *	      integer is a number key, any other value a float key; every
 *	      value is a float key for a float filter), singly and in batches.
 *	    - The key wrappers' parsers (bloomfilter.uuid('...'), numeric,
 *	      date, timestamp): keyparse.c's readers, so that a wrapper is
 *	      refused when it is made, with the server's syntax.
 *	    - The layouts of bfc_info and bfc_error that lib/wasm.js reads,
 *	      pinned here so that a change of either fails this build instead
 *	      of being misread.
 *
 * Nothing here hashes or decides a bit: every key goes through the client
 * library's typed functions, whose canonical forms are the core's.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "keyparse.h"

#define BFN_EXPORT(name) __attribute__((export_name(#name))) name

/*
 * lib/wasm.js reads these offsets (INFO_LAYOUT there); pointers and size_t
 * are 4 bytes in wasm32.
 */
_Static_assert(sizeof(void *) == 4 && sizeof(size_t) == 4, "wasm32 pointers");
_Static_assert(offsetof(bfc_error, code) == 0 && offsetof(bfc_error, message) == 4 &&
			   sizeof(bfc_error) == 324, "bfc_error as lib/wasm.js reads it");
_Static_assert(offsetof(bfc_info, format_version) == 0 &&
			   offsetof(bfc_info, layout) == 4 &&
			   offsetof(bfc_info, bits) == 8 &&
			   offsetof(bfc_info, bytes) == 16 &&
			   offsetof(bfc_info, hashes) == 24 &&
			   offsetof(bfc_info, capacity) == 32 &&
			   offsetof(bfc_info, target_fpr) == 40 &&
			   offsetof(bfc_info, inserted) == 48 &&
			   offsetof(bfc_info, bits_set) == 56 &&
			   offsetof(bfc_info, fill_ratio) == 64 &&
			   offsetof(bfc_info, estimated_distinct) == 72 &&
			   offsetof(bfc_info, estimated_fpr) == 80 &&
			   offsetof(bfc_info, key_kind) == 88 &&
			   offsetof(bfc_info, seed) == 96 &&
			   offsetof(bfc_info, key_environment) == 104 &&
			   offsetof(bfc_info, over_capacity) == 200 &&
			   sizeof(bfc_info) == 208, "bfc_info as lib/wasm.js reads it");

/* Keys converted to int64 per step of a batch of numbers. */
#define NUMBER_BATCH 1024

/* Whether a double is an integer that an int64 holds exactly. */
static bool
is_int64(double key)
{
	return key == floor(key) && key >= -9223372036854775808.0 &&
		key < 9223372036854775808.0;
}

/*
 * One JavaScript number as a key: a float key for a float filter or a
 * value that is not an integer (NaN and the infinities included); an
 * integer otherwise, as an int64 or, beyond its range, as the numeric of
 * its exact decimal digits (which "%.0f" prints for any integral double).
 */
static int
number_key(bfc_filter *filter, double key, bool contains, bfc_error *err)
{
	char		digits[400];
	int			len;

	if (bfc_filter_kind(filter) == BFC_KIND_FLOAT || !(key == floor(key)) || isinf(key))
		return contains ? bfc_contains_double(filter, key, err)
			: bfc_add_double(filter, key, err);
	if (is_int64(key))
		return contains ? bfc_contains_int64(filter, (int64_t) key, err)
			: bfc_add_int64(filter, (int64_t) key, err);
	len = snprintf(digits, sizeof(digits), "%.0f", key);
	return contains ? bfc_contains_str_as(filter, BFC_KIND_NUMBER, digits, (size_t) len, err)
		: bfc_add_str_as(filter, BFC_KIND_NUMBER, digits, (size_t) len, err);
}

int
BFN_EXPORT(bfn_contains_number) (const bfc_filter *filter, double key, bfc_error *err)
{
	return number_key((bfc_filter *) filter, key, true, err);
}

int
BFN_EXPORT(bfn_add_number) (bfc_filter *filter, double key, bfc_error *err)
{
	return number_key(filter, key, false, err);
}

/*
 * Many numbers: the library's batches for probes of a float filter and for
 * steps of int64 integers; a step holding another value goes key by key,
 * as single calls would (a fraction on a number filter is then the kind
 * error, the keys before it added).  Probes into out, or adds when out is
 * NULL.
 */
static int
numbers(bfc_filter *filter, const double *keys, size_t n, uint8_t *out, bfc_error *err)
{
	int64_t		integers[NUMBER_BATCH];
	bool		floats = bfc_filter_kind(filter) == BFC_KIND_FLOAT;

	if (floats && out != NULL)
		return bfc_contains_double_many(filter, keys, n, out, err);
	for (size_t done = 0; done < n; done += NUMBER_BATCH)
	{
		size_t		m = n - done < NUMBER_BATCH ? n - done : NUMBER_BATCH;
		size_t		i = 0;

		if (!floats)
			for (; i < m && is_int64(keys[done + i]); i++)
				integers[i] = (int64_t) keys[done + i];
		if (i == m)
		{
			int			status = out != NULL
				? bfc_contains_int64_many(filter, integers, m, out + done, err)
				: bfc_add_int64_many(filter, integers, m, err);

			if (status != 0)
				return status;
			continue;
		}
		for (i = 0; i < m; i++)
		{
			int			result = number_key(filter, keys[done + i], out != NULL, err);

			if (result < 0)
				return result;
			if (out != NULL)
				out[done + i] = (uint8_t) result;
		}
	}
	return 0;
}

int
BFN_EXPORT(bfn_contains_number_many) (const bfc_filter *filter, const double *keys, size_t n,
									  uint8_t *out, bfc_error *err)
{
	return numbers((bfc_filter *) filter, keys, n, out, err);
}

int
BFN_EXPORT(bfn_add_number_many) (bfc_filter *filter, const double *keys, size_t n,
								 bfc_error *err)
{
	return numbers(filter, keys, n, NULL, err);
}

/*
 * The key wrappers' readers: the text as the server's input function for
 * the kind reads it (keyparse.c), or an error saying why not.
 */
int
BFN_EXPORT(bfn_parse_uuid) (const char *text, size_t len, uint8_t *out, bfc_error *err)
{
	return bfc_parse_uuid(text, len, out, err);
}

int
BFN_EXPORT(bfn_parse_date) (const char *text, size_t len, int32_t *out, bfc_error *err)
{
	return bfc_parse_date(text, len, out, err);
}

int
BFN_EXPORT(bfn_parse_timestamp) (const char *text, size_t len, bool with_zone, int64_t *out,
								 bfc_error *err)
{
	return bfc_parse_timestamp(text, len, with_zone, out, err);
}

/* A numeric's text is kept as it is, once known to be one. */
int
BFN_EXPORT(bfn_check_number) (const char *text, size_t len, bfc_error *err)
{
	BfcNumber	number;

	if (bfc_parse_number(text, len, &number, err) != 0)
		return -1;
	bfc_number_release(&number);
	return 0;
}
