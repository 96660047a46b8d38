/*-------------------------------------------------------------------------
 *
 * filter.c
 *	  The client library's filters (bloomfilter.h): loading and validating
 *	  the binary, text and hex forms, serialising, bloom_info's fields,
 *	  creating, adding, probing, union, and applying an index's deltas.
 *
 * Everything that decides a bit or a byte is the core's, the same source
 * files and functions the server module calls: bf_validate for every
 * input, bf_size_for and bf_fixed_header for every new filter, the
 * canonical forms of canonical.h for every key, bf_filter_test for a
 * probe, bf_filter_add_growing for an add (a chain grows there),
 * bf_chain_create for a new chain, bf_union_into for a union with its
 * header merge, bf_estimate for bloom_info's figures, and bf_delta_check
 * and bf_delta_apply for an index's deltas.  What this file adds is what
 * the SQL glue adds on the server side: the text form's checks (bloom_in),
 * the key kind an add writes into the header (BloomAddValue), and the
 * refusals with their messages.  A key's kind is checked as CheckKeyKind
 * does: a key of another kind is an error, not an "absent".
 *
 * A chain grows in place: the core asks for more memory (BfHooks), which
 * realloc gives, when an add fills its last segment or a union brings a
 * longer chain's segments.
 *
 * The core keeps no state; what sizing remembers lives in a memo its caller
 * owns (sizing.h), here one per thread (thread_sizing_memo), so that
 * threads size, validate and grow filters at once without a lock.
 *
 * Version 1 filters are read and probed.  Their hashing differs from
 * version 2 in two places: numbers that are fractional or out of int64
 * range hash as numeric_normalize's text, which the client reproduces
 * (keyparse.c); strings hashed the server encoding's bytes, which the
 * client cannot know, so a non-ASCII text key is refused unless the caller
 * says the server encoding was UTF8 (bfc_set_v1_utf8).
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "sizing.h"
#include "canonical.h"
#include "delta.h"
#include "base64.h"

/*
 * The public key kinds are the core's, value for value: the library casts
 * a header's kind to bfc_kind and back.
 */
#define SAME_KIND(a, b) ((int) (a) == (int) (b))
_Static_assert(SAME_KIND(BFC_KIND_NONE, BF_KIND_NONE) &&
			   SAME_KIND(BFC_KIND_NUMBER, BF_KIND_NUMBER) &&
			   SAME_KIND(BFC_KIND_FLOAT, BF_KIND_FLOAT) &&
			   SAME_KIND(BFC_KIND_TEXT, BF_KIND_TEXT) &&
			   SAME_KIND(BFC_KIND_BYTEA, BF_KIND_BYTEA) &&
			   SAME_KIND(BFC_KIND_UUID, BF_KIND_UUID) &&
			   SAME_KIND(BFC_KIND_BOOL, BF_KIND_BOOL) &&
			   SAME_KIND(BFC_KIND_DATE, BF_KIND_DATE) &&
			   SAME_KIND(BFC_KIND_TIMESTAMP, BF_KIND_TIMESTAMP) &&
			   SAME_KIND(BFC_KIND_TIMESTAMPTZ, BF_KIND_TIMESTAMPTZ) &&
			   SAME_KIND(BFC_KIND_OTHER, BF_KIND_OTHER) && BF_KIND_LAST == BF_KIND_OTHER,
			   "bfc_kind must match the core's key kinds");
#include "keyparse.h"

struct bfc_filter
{
	uint8_t    *value;			/* the serialised filter */
	size_t		len;
	BfHeader	header;			/* decoded; written back after every change */
	bfc_kind	intended;		/* kind given to bfc_create, or NONE */
	bool		v1_utf8;		/* see bfc_set_v1_utf8 */
};

#define TEXT_PREFIX "bloom:"
#define TEXT_PREFIX_LEN (sizeof(TEXT_PREFIX) - 1)

const char *
bfc_kind_name(bfc_kind kind)
{
	return (unsigned) kind <= BFC_KIND_OTHER ? bf_key_kind_name((uint8_t) kind) : "unknown";
}

int
bfc_kind_from_name(const char *name)
{
	for (int kind = 0; kind <= BFC_KIND_OTHER; kind++)
		if (strcmp(name, bf_key_kind_name((uint8_t) kind)) == 0)
			return kind;
	if (strcmp(name, "bool") == 0)
		return BFC_KIND_BOOL;
	return -1;
}

/* ---------------------------------------------------------------------
 * Loading and validation
 * ---------------------------------------------------------------------
 */

/*
 * The calling thread's memo of rates sized, which every core call that
 * sizes is given: besides a new filter, a chain's validation and growth
 * size its segments (bf_segment_plan).  Made the first time a thread asks
 * (calloc's zeroes are an empty memo, its pages touched only as rates are
 * sized) and freed when the thread exits: the key's destructor is free
 * itself, so that no code of this library need be loaded then.  NULL when
 * there is no memory for one: the core then sizes afresh, slower, with the
 * same answers.  Calls on a filter of fixed size, which sizes nothing, pass
 * NULL themselves, so that a thread that only reads those makes no memo.
 */
static pthread_key_t sizing_memo_key;
static bool sizing_memo_key_made;
static pthread_once_t sizing_memo_once = PTHREAD_ONCE_INIT;

static void
make_sizing_memo_key(void)
{
	sizing_memo_key_made = pthread_key_create(&sizing_memo_key, free) == 0;
}

static BfSizingMemo *
thread_sizing_memo(void)
{
	BfSizingMemo *memo;

	pthread_once(&sizing_memo_once, make_sizing_memo_key);
	if (!sizing_memo_key_made)
		return NULL;
	memo = pthread_getspecific(sizing_memo_key);
	if (memo == NULL)
	{
		memo = calloc(1, sizeof(BfSizingMemo));
		if (memo != NULL && pthread_setspecific(sizing_memo_key, memo) != 0)
		{
			free(memo);
			memo = NULL;
		}
	}
	return memo;
}

/*
 * The server's check of bytes from outside (BloomFromBytes), copying them
 * to copy (len bytes, or NULL for none) as it reads them.
 */
static BfStatus
validate(uint8_t *copy, const uint8_t *bytes, size_t len, BfHeader *header)
{
	BfStatus	status;

	if (len > BF_MAX_VALUE_BYTES)
		return BF_ERR_TOO_LARGE;
	status = bf_read_header(bytes, len, header);
	if (status != BF_OK || !bf_is_chain(header))
		return bf_validate_copy(copy, bytes, len, header, NULL);	/* sizes nothing */
	return bf_validate_copy(copy, bytes, len, header, thread_sizing_memo());
}

/* A filter with room for a value of len bytes, not yet written. */
static bfc_filter *
filter_of_length(size_t len, bfc_error *err)
{
	bfc_filter *filter = calloc(1, sizeof(bfc_filter));

	if (filter == NULL || (filter->value = malloc(len)) == NULL)
	{
		free(filter);
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory for a filter of %zu bytes", len);
		return NULL;
	}
	filter->len = len;
	return filter;
}

static bfc_filter *
filter_of_bytes(const uint8_t *bytes, size_t len, const BfHeader *header,
				bfc_error *err)
{
	bfc_filter *filter = filter_of_length(len, err);

	if (filter == NULL)
		return NULL;
	memcpy(filter->value, bytes, len);
	filter->header = *header;
	return filter;
}

/* A filter of validated bytes from malloc, which it takes; NULL leaves them. */
static bfc_filter *
adopt(uint8_t *bytes, size_t len, const BfHeader *header, bfc_error *err)
{
	bfc_filter *filter = calloc(1, sizeof(bfc_filter));

	if (filter == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	filter->value = bytes;
	filter->len = len;
	filter->header = *header;
	return filter;
}

/* validate, with the error a caller reports. */
static bool
validated(uint8_t *copy, const void *bytes, size_t len, BfHeader *header, bfc_error *err)
{
	BfStatus	status = validate(copy, bytes, len, header);

	if (status != BF_OK)
	{
		bfc_fail(err, BFC_ERR_INVALID, "invalid bloom value: %s.", bf_status_message(status));
		return false;
	}
	return true;
}

bool
bfc_validate_bytes(const void *bytes, size_t len, bfc_error *err)
{
	BfHeader	header;

	return validated(NULL, bytes, len, &header, err);
}

bfc_filter *
bfc_from_bytes(const void *bytes, size_t len, bfc_error *err)
{
	BfHeader	header;

	bfc_filter *filter;

	/* bytes whose header fails are refused before room is made for them */
	if (len > BF_MAX_VALUE_BYTES || bf_read_header(bytes, len, &header) != BF_OK)
	{
		validated(NULL, bytes, len, &header, err);
		return NULL;
	}
	if ((filter = filter_of_length(len, err)) == NULL)
		return NULL;
	/* the copy is made in the pass that checks the body */
	if (!validated(filter->value, bytes, len, &header, err))
	{
		bfc_free(filter);
		return NULL;
	}
	filter->header = header;
	return filter;
}

bfc_filter *
bfc_adopt_bytes(void *bytes, size_t len, bfc_error *err)
{
	BfHeader	header;

	if (!validated(NULL, bytes, len, &header, err))
		return NULL;
	return adopt(bytes, len, &header, err);
}

/*
 * The text form, checked as bloom_in checks it; the decoded bytes in
 * *decoded (malloc'd) when valid.
 */
static bool
decode_text(const char *text, size_t len, uint8_t **decoded, size_t *decoded_len,
			BfHeader *header, bfc_error *err)
{
	const char *problem = NULL;
	char		detail[160];
	uint8_t    *bytes;
	int64_t		n;
	BfStatus	status;

	*decoded = NULL;
	if (len < TEXT_PREFIX_LEN || memcmp(text, TEXT_PREFIX, TEXT_PREFIX_LEN) != 0)
		problem = "A bloom value starts with \"bloom:\".";
	else if (len - TEXT_PREFIX_LEN > bfc_base64_encoded_length(BF_MAX_VALUE_BYTES))
		problem = "The value is longer than any bloom filter.";
	if (problem != NULL)
		goto invalid;

	bytes = malloc(bfc_base64_decoded_room(len - TEXT_PREFIX_LEN));
	if (bytes == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory decoding a text value of %zu bytes", len);
		return false;
	}
	n = bfc_base64_decode(text + TEXT_PREFIX_LEN, len - TEXT_PREFIX_LEN, bytes);
	if (n < 0)
	{
		free(bytes);
		problem = "The text after \"bloom:\" is not valid base64.";
		goto invalid;
	}
	status = validate(NULL, bytes, (size_t) n, header);
	if (status != BF_OK)
	{
		free(bytes);
		snprintf(detail, sizeof(detail), "%s.", bf_status_message(status));
		problem = detail;
		goto invalid;
	}
	*decoded = bytes;
	*decoded_len = (size_t) n;
	return true;

invalid:
	bfc_fail(err, BFC_ERR_INVALID, "invalid input syntax for type bloom: \"%.*s%s\": %s",
			 (int) (len > 40 ? 40 : len), text, len > 40 ? "..." : "", problem);
	return false;
}

bool
bfc_validate_text(const char *text, size_t len, bfc_error *err)
{
	uint8_t    *bytes;
	size_t		n;
	BfHeader	header;

	if (!decode_text(text, len, &bytes, &n, &header, err))
		return false;
	free(bytes);
	return true;
}

bfc_filter *
bfc_from_text(const char *text, size_t len, bfc_error *err)
{
	uint8_t    *bytes;
	size_t		n;
	BfHeader	header;
	bfc_filter *filter;

	if (!decode_text(text, len, &bytes, &n, &header, err))
		return NULL;
	filter = adopt(bytes, n, &header, err);
	if (filter == NULL)
		free(bytes);
	return filter;
}

/* psql's output of f::bytea: \x and hex digits. */
static bfc_filter *
from_hex(const char *text, size_t len, bfc_error *err)
{
	size_t		n = (len - 2) / 2;
	uint8_t    *bytes;
	bfc_filter *filter;

	if ((len - 2) % 2 != 0)
	{
		bfc_fail(err, BFC_ERR_INVALID, "invalid bloom value: odd number of hex digits after \\x");
		return NULL;
	}
	bytes = malloc(n > 0 ? n : 1);
	if (bytes == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
	{
		int			hi = bfc_hex_digit(text[2 + 2 * i]);
		int			lo = bfc_hex_digit(text[3 + 2 * i]);

		if (hi < 0 || lo < 0)
		{
			free(bytes);
			bfc_fail(err, BFC_ERR_INVALID, "invalid bloom value: not a hex digit after \\x");
			return NULL;
		}
		bytes[i] = (uint8_t) (hi << 4 | lo);
	}
	filter = bfc_adopt_bytes(bytes, n, err);
	if (filter == NULL)
		free(bytes);
	return filter;
}

bfc_filter *
bfc_load(const void *data, size_t len, bfc_error *err)
{
	const char *text = data;

	if (len >= TEXT_PREFIX_LEN && memcmp(text, TEXT_PREFIX, TEXT_PREFIX_LEN) == 0)
	{
		while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' ||
						   text[len - 1] == ' ' || text[len - 1] == '\t'))
			len--;
		return bfc_from_text(text, len, err);
	}
	if (len >= 2 && text[0] == '\\' && text[1] == 'x')
	{
		while (len > 2 && (text[len - 1] == '\n' || text[len - 1] == '\r' ||
						   text[len - 1] == ' ' || text[len - 1] == '\t'))
			len--;
		return from_hex(text, len, err);
	}
	return bfc_from_bytes(data, len, err);
}

/* ---------------------------------------------------------------------
 * Creating, copying, serialising
 * ---------------------------------------------------------------------
 */

/* The kind and capacity bfc_create and bfc_create_growing take. */
static bool
check_create(bfc_kind kind, uint64_t capacity, bfc_error *err)
{
	if ((unsigned) kind > BFC_KIND_TIMESTAMPTZ)
	{
		bfc_fail(err, BFC_ERR_PARAM, "the client cannot build filters of kind %s",
				 bfc_kind_name(kind));
		return false;
	}
	/* bloom_empty takes a bigint */
	if (capacity < 1 || capacity > (uint64_t) INT64_MAX)
	{
		bfc_fail(err, BFC_ERR_PARAM, "bloom filter capacity must be at least 1 (and a bigint)");
		return false;
	}
	return true;
}

/* Sizes a filter for (capacity, fpr), with SizeFilter's refusals. */
static bool
size_filter(uint64_t capacity, double fpr, BfSizing *sizing, bfc_error *err)
{
	BfStatus	status;

	status = bf_size_for(capacity, fpr, sizing, thread_sizing_memo());
	if (status == BF_ERR_FPR)
	{
		bfc_fail(err, BFC_ERR_PARAM,
				 "bloom filter false-positive rate must be greater than 0 and at most 0.5, not %g", fpr);
		return false;
	}
	if (status != BF_OK)
	{
		bfc_fail(err, status == BF_ERR_TOO_LARGE ? BFC_ERR_TOO_LARGE : BFC_ERR_PARAM,
				 "cannot size a bloom filter for %llu values at false-positive rate %g: %s; "
				 "at that rate at most %llu values fit",
				 (unsigned long long) capacity, fpr, bf_status_message(status),
				 (unsigned long long) sizing->max_capacity);
		return false;
	}
	return true;
}

bfc_filter *
bfc_create(bfc_kind kind, uint64_t capacity, double fpr, bfc_error *err)
{
	BfSizing	sizing;
	BfHeader	header;
	bfc_filter *filter;

	if (!check_create(kind, capacity, err) || !size_filter(capacity, fpr, &sizing, err))
		return NULL;

	bf_fixed_header(capacity, fpr, &sizing, &header);
	filter = calloc(1, sizeof(bfc_filter));
	if (filter == NULL || (filter->value = malloc(bf_value_bytes(header.nblocks))) == NULL)
	{
		free(filter);
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory for a filter of %zu bytes",
				 bf_value_bytes(header.nblocks));
		return NULL;
	}
	filter->len = bf_value_bytes(header.nblocks);
	bf_init(filter->value, &header, NULL);
	filter->header = header;
	filter->intended = kind;
	return filter;
}

/*
 * The core's memory for a value that grows (BfHooks.resize): realloc, the
 * failure told in context, a bfc_error.
 */
static uint8_t *
resize_value(void *context, uint8_t *value, size_t new_len)
{
	uint8_t    *resized = realloc(value, new_len);

	if (resized == NULL)
		bfc_fail(context, BFC_ERR_NOMEM, "out of memory growing a filter to %zu bytes",
				 new_len);
	return resized;
}

/* The error of a chain that could not grow; resize_value told of memory. */
static void
report_growth(BfStatus status, bfc_error *err)
{
	if (status != BF_ERR_NO_MEMORY)
		bfc_fail(err, status == BF_ERR_TOO_LARGE ? BFC_ERR_TOO_LARGE : BFC_ERR_PARAM,
				 "bloom filter chain cannot take another segment: %s", bf_status_message(status));
}

/* As BloomAllocChain: the parameters' checks, then the first segment. */
bfc_filter *
bfc_create_growing(bfc_kind kind, uint64_t capacity, double fpr, int growth, bfc_error *err)
{
	BfHooks		hooks = {resize_value, NULL, err};
	BfSizing	sizing;
	bfc_filter *filter;
	BfStatus	status;

	if (growth == 0)
		return bfc_create(kind, capacity, fpr, err);
	if (growth < BF_MIN_GROWTH || growth > BF_MAX_GROWTH)
	{
		bfc_fail(err, BFC_ERR_PARAM,
				 "bloom filter growth factor must be between %d and %d, not %d "
				 "(0 makes a filter of fixed size)", BF_MIN_GROWTH, BF_MAX_GROWTH, growth);
		return NULL;
	}
	if (!check_create(kind, capacity, err) ||
		!size_filter(capacity, fpr, &sizing, err) ||	/* the parameters' own errors */
		!size_filter(capacity, fpr * 0.5, &sizing, err))	/* the first segment's */
		return NULL;

	filter = calloc(1, sizeof(bfc_filter));
	if (filter == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	filter->intended = kind;
	status = bf_chain_create(capacity, fpr, (uint8_t) growth, &filter->value, &filter->len,
							 &filter->header, thread_sizing_memo(), &hooks);
	if (status != BF_OK)
	{
		report_growth(status, err);
		bfc_free(filter);
		return NULL;
	}
	return filter;
}

bfc_filter *
bfc_copy(const bfc_filter *filter, bfc_error *err)
{
	bfc_filter *copy = filter_of_bytes(filter->value, filter->len, &filter->header, err);

	if (copy != NULL)
	{
		copy->intended = filter->intended;
		copy->v1_utf8 = filter->v1_utf8;
	}
	return copy;
}

void
bfc_free(bfc_filter *filter)
{
	if (filter == NULL)
		return;
	free(filter->value);
	free(filter);
}

const uint8_t *
bfc_bytes(const bfc_filter *filter, size_t *len)
{
	*len = filter->len;
	return filter->value;
}

size_t
bfc_text_size(const bfc_filter *filter)
{
	return TEXT_PREFIX_LEN + bfc_base64_encoded_length(filter->len) + 1;
}

size_t
bfc_write_text(const bfc_filter *filter, char *out)
{
	size_t		n = TEXT_PREFIX_LEN + bfc_base64_encoded_length(filter->len);

	memcpy(out, TEXT_PREFIX, TEXT_PREFIX_LEN);
	bfc_base64_encode(filter->value, filter->len, out + TEXT_PREFIX_LEN);
	out[n] = '\0';
	return n;
}

void
bfc_set_v1_utf8(bfc_filter *filter, bool server_was_utf8)
{
	filter->v1_utf8 = server_was_utf8;
}

/* ---------------------------------------------------------------------
 * Inspection: bloom_info
 * ---------------------------------------------------------------------
 */

/* pg_encoding_to_char's names, by encoding id. */
static const char *const encoding_names[] = {
	"SQL_ASCII", "EUC_JP", "EUC_CN", "EUC_KR", "EUC_TW", "EUC_JIS_2004", "UTF8",
	"MULE_INTERNAL", "LATIN1", "LATIN2", "LATIN3", "LATIN4", "LATIN5", "LATIN6",
	"LATIN7", "LATIN8", "LATIN9", "LATIN10", "WIN1256", "WIN1258", "WIN866",
	"WIN874", "KOI8R", "WIN1251", "WIN1252", "ISO_8859_5", "ISO_8859_6",
	"ISO_8859_7", "ISO_8859_8", "WIN1250", "WIN1253", "WIN1254", "WIN1255",
	"WIN1257", "KOI8U", "SJIS", "BIG5", "GBK", "UHC", "GB18030", "JOHAB",
	"SHIFT_JIS_2004"
};

void
bfc_get_info(const bfc_filter *filter, bfc_info *info)
{
	const BfHeader *h = &filter->header;
	BfEstimate	e;

	bf_estimate(filter->value, h, &e, NULL);
	memset(info, 0, sizeof(*info));
	info->format_version = h->version;
	info->layout = bf_is_chain(h) ? "chained" : "blocked512";
	info->bits = bf_clamp_int64(e.bits);
	info->bytes = (int64_t) filter->len;
	info->hashes = e.k;
	info->capacity = bf_clamp_int64(e.capacity);
	info->target_fpr = h->fpr;
	info->inserted = bf_clamp_int64(h->inserted);
	info->bits_set = bf_clamp_int64(e.bits_set);
	info->fill_ratio = e.fill;
	info->estimated_distinct = e.distinct;
	info->estimated_fpr = e.fpr;
	info->key_kind = bfc_kind_name((bfc_kind) h->identity.kind);
	info->seed = (int64_t) h->seed;
	if (h->identity.env_encoding != 0)
	{
		unsigned	id = h->identity.env_encoding - 1u;

		snprintf(info->key_environment, sizeof(info->key_environment), "encoding %s",
				 id < sizeof(encoding_names) / sizeof(encoding_names[0])
				 ? encoding_names[id] : "");
	}
	if (h->identity.env_locale != 0)
	{
		size_t		used = strlen(info->key_environment);

		snprintf(info->key_environment + used, sizeof(info->key_environment) - used,
				 "%slocale fingerprint %08X", used > 0 ? ", " : "", h->identity.env_locale);
	}
	info->over_capacity = e.over_capacity;
}

int
bfc_segments(const bfc_filter *filter)
{
	return (int) filter->header.nsegments;
}

int
bfc_growth(const bfc_filter *filter)
{
	return bf_is_chain(&filter->header) ? filter->header.growth : 0;
}

bfc_kind
bfc_filter_kind(const bfc_filter *filter)
{
	if (filter->header.identity.kind != BF_KIND_NONE)
		return (bfc_kind) filter->header.identity.kind;
	return filter->intended;
}

/* ---------------------------------------------------------------------
 * Union
 * ---------------------------------------------------------------------
 */

/* A filter's parameters for an error message, as DescribeParameters. */
static void
describe(char *out, size_t room, const BfHeader *h)
{
	if (bf_is_chain(h))
		snprintf(out, room, "(version %d, capacity %llu, fpr %g, growth %d, segments %u, "
				 "seed %llu, key kind %s)",
				 h->version, (unsigned long long) h->capacity, h->fpr, h->growth,
				 h->nsegments, (unsigned long long) h->seed,
				 bfc_kind_name((bfc_kind) h->identity.kind));
	else
		snprintf(out, room, "(version %d, capacity %llu, fpr %g, bits %llu, k %d, seed %llu, "
				 "key kind %s)",
				 h->version, (unsigned long long) h->capacity, h->fpr,
				 (unsigned long long) h->nblocks * BF_BLOCK_BITS, h->k,
				 (unsigned long long) h->seed, bfc_kind_name((bfc_kind) h->identity.kind));
}

int
bfc_union(bfc_filter *dst, const bfc_filter *src, bfc_error *err)
{
	BfHooks		hooks = {resize_value, NULL, err};
	BfHeader   *d = &dst->header;
	const BfHeader *s = &src->header;
	BfStatus	status;

	if (!bf_compatible(d, s) ||
		(d->identity.kind == BF_KIND_NONE && dst->intended != BFC_KIND_NONE &&
		 s->identity.kind != BF_KIND_NONE && s->identity.kind != dst->intended))
	{
		char		first[160];
		char		second[160];

		describe(first, sizeof(first), d);
		describe(second, sizeof(second), s);
		bfc_fail(err, BFC_ERR_INCOMPATIBLE,
				 "cannot compute the union of bloom filters with different parameters or kinds: "
				 "first filter %s, second filter %s", first, second);
		return -1;
	}
	status = bf_union_into(&dst->value, &dst->len, d, src->value, src->len, s, &hooks);
	if (status != BF_OK)
	{
		if (status != BF_ERR_NO_MEMORY)
			bfc_fail(err, BFC_ERR_INCOMPATIBLE, "cannot compute the union of bloom filters: %s",
					 bf_status_message(status));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Deltas of an index
 * ---------------------------------------------------------------------
 */

/*
 * As bloom_apply_changes: the core judges the whole delta first, so that a
 * refused one leaves the filter as it was; only then is the value grown
 * (a chain taking the index's new segments) and the delta applied, which
 * cannot fail.  Both steps size a chain's new segments, from the thread's
 * memo.
 */
int
bfc_apply_changes(bfc_filter *filter, const void *delta, size_t len, bfc_error *err)
{
	BfSizingMemo *memo = bf_is_chain(&filter->header) ? thread_sizing_memo() : NULL;
	size_t		new_len = 0;
	BfStatus	status;

	status = bf_delta_check(filter->value, filter->len, &filter->header, delta, len, &new_len,
							memo);
	if (status == BF_ERR_DELTA_MISMATCH)
	{
		bfc_fail(err, BFC_ERR_MISMATCH,
				 "the delta is not for this filter: %s; load a new snapshot of the index",
				 bf_status_message(status));
		return -1;
	}
	if (status != BF_OK)
	{
		bfc_fail(err, status == BF_ERR_TOO_LARGE ? BFC_ERR_TOO_LARGE : BFC_ERR_INVALID,
				 "invalid delta: %s.", bf_status_message(status));
		return -1;
	}
	if (new_len > filter->len)
	{
		uint8_t    *grown = realloc(filter->value, new_len);

		if (grown == NULL)
		{
			bfc_fail(err, BFC_ERR_NOMEM, "out of memory growing a filter to %zu bytes", new_len);
			return -1;
		}
		filter->value = grown;
	}
	bf_delta_apply(filter->value, filter->len, new_len, &filter->header, delta, len, memo,
				   NULL);
	filter->len = new_len;
	return 0;
}

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

/*
 * Whether keys of this kind may go into or be looked up in the filter; the
 * error CheckKeyKind would raise if not.
 */
static bool
check_kind(const bfc_filter *filter, bfc_kind kind, bfc_error *err)
{
	bfc_kind	held = (bfc_kind) filter->header.identity.kind;

	if (held == BFC_KIND_OTHER)
	{
		bfc_fail(err, BFC_ERR_UNSUPPORTED,
				 "bloom filter holds values of kind other (hashed by their type's own hash function "
				 "in the server), which the client cannot hash");
		return false;
	}
	if (held == BFC_KIND_NONE)
		held = filter->intended;
	if (held != BFC_KIND_NONE && held != kind)
	{
		bfc_fail(err, BFC_ERR_KIND, "bloom filter holds values of kind %s, not %s",
				 bfc_kind_name(held), bfc_kind_name(kind));
		return false;
	}
	return true;
}

static bool
is_ascii(const char *bytes, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char) bytes[i] >= 0x80)
			return false;
	return true;
}

/* The hash of a text key, by the filter's version. */
static int
hash_text(const bfc_filter *filter, const char *key, size_t len, uint64_t *hash,
		  bfc_error *err)
{
	if (filter->header.version < 2 && !filter->v1_utf8 && !is_ascii(key, len))
	{
		bfc_fail(err, BFC_ERR_UNSUPPORTED,
				 "version 1 bloom filters hashed text in the server encoding, which the client "
				 "does not know: non-ASCII keys are refused unless the server encoding was "
				 "declared UTF8");
		return -1;
	}
	*hash = bf_hash_string(key, len, filter->header.seed);
	return 0;
}

/* The hash of a number given as text, by the filter's version. */
static int
hash_number_text(const bfc_filter *filter, const char *key, size_t len, uint64_t *hash,
				 bfc_error *err)
{
	BfcNumber	number;
	int			status = 0;

	if (bfc_parse_number(key, len, &number, err) != 0)
		return -1;
	if (filter->header.version >= 2)
		*hash = bf_hash_numeric(number.sign, number.weight, number.digits,
								number.ndigits, filter->header.seed);
	else
		status = bfc_hash_number_v1(&number, filter->header.seed, hash, err);
	bfc_number_release(&number);
	return status;
}

/* The hash of a key of the given kind spelled as text. */
static int
hash_key_text(const bfc_filter *filter, bfc_kind kind, const char *key, size_t len,
			  uint64_t *hash, bfc_error *err)
{
	uint64_t	seed = filter->header.seed;

	switch (kind)
	{
		case BFC_KIND_NUMBER:
			return hash_number_text(filter, key, len, hash, err);
		case BFC_KIND_FLOAT:
			{
				double		value;

				if (bfc_parse_double(key, len, &value, err) != 0)
					return -1;
				*hash = bf_hash_float8(value, seed);
				return 0;
			}
		case BFC_KIND_TEXT:
			return hash_text(filter, key, len, hash, err);
		case BFC_KIND_BYTEA:
			{
				uint8_t    *bytes;
				size_t		n;

				if (bfc_parse_bytea(key, len, &bytes, &n, err) != 0)
					return -1;
				*hash = bf_hash_bytes(bytes, n, seed);
				free(bytes);
				return 0;
			}
		case BFC_KIND_UUID:
			{
				uint8_t		uuid[16];

				if (bfc_parse_uuid(key, len, uuid, err) != 0)
					return -1;
				*hash = bf_hash_uuid(uuid, seed);
				return 0;
			}
		case BFC_KIND_BOOL:
			{
				bool		value;

				if (bfc_parse_bool(key, len, &value, err) != 0)
					return -1;
				*hash = bf_hash_bool(value, seed);
				return 0;
			}
		case BFC_KIND_DATE:
			{
				int32_t		days;

				if (bfc_parse_date(key, len, &days, err) != 0)
					return -1;
				*hash = bf_hash_date(days, seed);
				return 0;
			}
		case BFC_KIND_TIMESTAMP:
		case BFC_KIND_TIMESTAMPTZ:
			{
				int64_t		microseconds;

				if (bfc_parse_timestamp(key, len, kind == BFC_KIND_TIMESTAMPTZ,
										&microseconds, err) != 0)
					return -1;
				*hash = bf_hash_timestamp(microseconds, seed);
				return 0;
			}
		default:
			bfc_fail(err, BFC_ERR_UNSUPPORTED, "the client cannot hash keys of kind %s",
					 bfc_kind_name(kind));
			return -1;
	}
}

/* Probes one hash; a filter with nothing added holds nothing. */
static int
test_hash(const bfc_filter *filter, uint64_t hash)
{
	if (filter->header.identity.kind == BF_KIND_NONE)
		return 0;
	return bf_filter_test(filter->value, &filter->header, hash) ? 1 : 0;
}

/*
 * Adds hashes of keys of one kind: the key kind into the header, then the
 * core's add, which grows a chain when its last segment has taken its
 * capacity.  Fails only when a chain cannot get the memory to grow, the
 * keys before having been added.
 */
static int
add_hashes(bfc_filter *filter, bfc_kind kind, const uint64_t *hashes, size_t n,
		   bfc_error *err)
{
	BfHooks		hooks = {resize_value, NULL, err};
	BfHeader   *h = &filter->header;
	BfStatus	status;

	if (n == 0)
		return 0;
	h->identity = (BfKeyIdentity) {.kind = (uint8_t) kind};
	/* a chain's add asks, once full, whether it can grow: that sizes */
	status = bf_filter_add_growing(&filter->value, &filter->len, h, hashes, n,
								   bf_is_chain(h) ? thread_sizing_memo() : NULL, &hooks);
	if (status != BF_OK)
	{
		report_growth(status, err);
		return -1;
	}
	return 0;
}

/* The kind a text key is read as: the filter's own. */
static bfc_kind
kind_for_text_key(const bfc_filter *filter)
{
	return bfc_filter_kind(filter);
}

int
bfc_contains_str_as(const bfc_filter *filter, bfc_kind kind, const char *key, size_t len,
					bfc_error *err)
{
	uint64_t	hash;

	if (!check_kind(filter, kind, err) || hash_key_text(filter, kind, key, len, &hash, err) != 0)
		return -1;
	return test_hash(filter, hash);
}

int
bfc_add_str_as(bfc_filter *filter, bfc_kind kind, const char *key, size_t len,
			   bfc_error *err)
{
	uint64_t	hash;

	if (!check_kind(filter, kind, err) || hash_key_text(filter, kind, key, len, &hash, err) != 0)
		return -1;
	return add_hashes(filter, kind, &hash, 1, err);
}

int
bfc_contains_str(const bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	bfc_kind	kind = kind_for_text_key(filter);

	if (filter->header.identity.kind == BF_KIND_OTHER)
		return check_kind(filter, BFC_KIND_OTHER, err) ? 0 : -1;
	if (kind == BFC_KIND_NONE)
		return 0;				/* nothing added, nothing to read the key as */
	return bfc_contains_str_as(filter, kind, key, len, err);
}

int
bfc_add_str(bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	bfc_kind	kind = kind_for_text_key(filter);

	if (kind == BFC_KIND_NONE)
	{
		bfc_fail(err, BFC_ERR_PARAM,
				 "a key spelled as text needs a kind: the filter has none yet");
		return -1;
	}
	return bfc_add_str_as(filter, kind, key, len, err);
}

/* The typed functions: check the kind, hash, probe or add. */
#define TYPED_PAIR(name, ctype, kind, hash_expr) \
int \
bfc_contains_##name(const bfc_filter *filter, ctype key, bfc_error *err) \
{ \
	uint64_t	seed = filter->header.seed; \
	if (!check_kind(filter, kind, err)) \
		return -1; \
	return test_hash(filter, hash_expr); \
} \
int \
bfc_add_##name(bfc_filter *filter, ctype key, bfc_error *err) \
{ \
	uint64_t	seed = filter->header.seed; \
	uint64_t	hash; \
	if (!check_kind(filter, kind, err)) \
		return -1; \
	hash = hash_expr; \
	return add_hashes(filter, kind, &hash, 1, err); \
}

TYPED_PAIR(int64, int64_t, BFC_KIND_NUMBER, bf_hash_int64(key, seed))
TYPED_PAIR(double, double, BFC_KIND_FLOAT, bf_hash_float8(key, seed))
TYPED_PAIR(uuid, const uint8_t *, BFC_KIND_UUID, bf_hash_uuid(key, seed))
TYPED_PAIR(bool, bool, BFC_KIND_BOOL, bf_hash_bool(key, seed))
TYPED_PAIR(date, int32_t, BFC_KIND_DATE, bf_hash_date(key, seed))

int
bfc_contains_text(const bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	uint64_t	hash;

	if (!check_kind(filter, BFC_KIND_TEXT, err) || hash_text(filter, key, len, &hash, err) != 0)
		return -1;
	return test_hash(filter, hash);
}

int
bfc_add_text(bfc_filter *filter, const char *key, size_t len, bfc_error *err)
{
	uint64_t	hash;

	if (!check_kind(filter, BFC_KIND_TEXT, err) || hash_text(filter, key, len, &hash, err) != 0)
		return -1;
	return add_hashes(filter, BFC_KIND_TEXT, &hash, 1, err);
}

int
bfc_contains_bytea(const bfc_filter *filter, const void *key, size_t len, bfc_error *err)
{
	if (!check_kind(filter, BFC_KIND_BYTEA, err))
		return -1;
	return test_hash(filter, bf_hash_bytes(key, len, filter->header.seed));
}

int
bfc_add_bytea(bfc_filter *filter, const void *key, size_t len, bfc_error *err)
{
	uint64_t	hash;

	if (!check_kind(filter, BFC_KIND_BYTEA, err))
		return -1;
	hash = bf_hash_bytes(key, len, filter->header.seed);
	return add_hashes(filter, BFC_KIND_BYTEA, &hash, 1, err);
}

static bool
check_timestamp_kind(bfc_kind kind, bfc_error *err)
{
	if (kind != BFC_KIND_TIMESTAMP && kind != BFC_KIND_TIMESTAMPTZ)
	{
		bfc_fail(err, BFC_ERR_PARAM, "a timestamp key is of kind timestamp or timestamptz, not %s",
				 bfc_kind_name(kind));
		return false;
	}
	return true;
}

int
bfc_contains_timestamp(const bfc_filter *filter, bfc_kind kind, int64_t microseconds,
					   bfc_error *err)
{
	if (!check_timestamp_kind(kind, err) || !check_kind(filter, kind, err))
		return -1;
	return test_hash(filter, bf_hash_timestamp(microseconds, filter->header.seed));
}

int
bfc_add_timestamp(bfc_filter *filter, bfc_kind kind, int64_t microseconds, bfc_error *err)
{
	uint64_t	hash;

	if (!check_timestamp_kind(kind, err) || !check_kind(filter, kind, err))
		return -1;
	hash = bf_hash_timestamp(microseconds, filter->header.seed);
	return add_hashes(filter, kind, &hash, 1, err);
}

/* ---------------------------------------------------------------------
 * Batches
 * ---------------------------------------------------------------------
 */

/* Hashes per step of a batch: their blocks are prefetched before probing. */
#define BATCH 64

/* Prefetches the block a hash maps to in every segment. */
static void
prefetch(const bfc_filter *filter, uint64_t hash)
{
#if defined(__GNUC__) || defined(__clang__)
	BfSegment	segment;

	bf_segment_first(filter->value, &filter->header, &segment);
	do
	{
		const uint8_t *block = filter->value + segment.bits +
			(size_t) bf_block_of(hash, segment.nblocks) * BF_BLOCK_BYTES;

		__builtin_prefetch(block);
		__builtin_prefetch(block + BF_BLOCK_BYTES - 1);
	} while (bf_segment_next(filter->value, &filter->header, &segment));
#else
	(void) filter;
	(void) hash;
#endif
}

/* Probes a batch of hashes, prefetching the blocks of a large filter first. */
static void
test_hashes(const bfc_filter *filter, const uint64_t *hashes, size_t n, uint8_t *out)
{
	if (filter->header.identity.kind == BF_KIND_NONE)
	{
		memset(out, 0, n);
		return;
	}
	if (filter->len > 256 * 1024)
		for (size_t i = 0; i < n; i++)
			prefetch(filter, hashes[i]);
	for (size_t i = 0; i < n; i++)
		out[i] = bf_filter_test(filter->value, &filter->header, hashes[i]) ? 1 : 0;
}

/* Hashes key i of an array of keys of one kind. */
typedef uint64_t (*key_hash_at) (const void *keys, size_t i, uint64_t seed);

static uint64_t
hash_int64_at(const void *keys, size_t i, uint64_t seed)
{
	return bf_hash_int64(((const int64_t *) keys)[i], seed);
}

static uint64_t
hash_double_at(const void *keys, size_t i, uint64_t seed)
{
	return bf_hash_float8(((const double *) keys)[i], seed);
}

static uint64_t
hash_uuid_at(const void *keys, size_t i, uint64_t seed)
{
	return bf_hash_uuid((const uint8_t *) keys + i * BF_UUID_BYTES, seed);
}

/*
 * The batch forms: hashes the n keys BATCH at a time, then probes them into
 * out, or adds them when out is NULL (only then is the filter changed).
 */
static int
keys_in_batches(bfc_filter *filter, bfc_kind kind, const void *keys, size_t n,
				key_hash_at hash, uint8_t *out, bfc_error *err)
{
	uint64_t	hashes[BATCH];
	uint64_t	seed = filter->header.seed;

	if (!check_kind(filter, kind, err))
		return -1;
	for (size_t done = 0; done < n; done += BATCH)
	{
		size_t		m = n - done < BATCH ? n - done : BATCH;

		for (size_t i = 0; i < m; i++)
			hashes[i] = hash(keys, done + i, seed);
		if (out != NULL)
			test_hashes(filter, hashes, m, out + done);
		else if (add_hashes(filter, kind, hashes, m, err) != 0)
			return -1;
	}
	return 0;
}

int
bfc_contains_int64_many(const bfc_filter *filter, const int64_t *keys, size_t n,
						uint8_t *out, bfc_error *err)
{
	return keys_in_batches((bfc_filter *) filter, BFC_KIND_NUMBER, keys, n,
						   hash_int64_at, out, err);
}

int
bfc_add_int64_many(bfc_filter *filter, const int64_t *keys, size_t n, bfc_error *err)
{
	return keys_in_batches(filter, BFC_KIND_NUMBER, keys, n, hash_int64_at, NULL, err);
}

int
bfc_contains_double_many(const bfc_filter *filter, const double *keys, size_t n,
						 uint8_t *out, bfc_error *err)
{
	return keys_in_batches((bfc_filter *) filter, BFC_KIND_FLOAT, keys, n,
						   hash_double_at, out, err);
}

int
bfc_contains_uuid_many(const bfc_filter *filter, const uint8_t *keys, size_t n,
					   uint8_t *out, bfc_error *err)
{
	return keys_in_batches((bfc_filter *) filter, BFC_KIND_UUID, keys, n,
						   hash_uuid_at, out, err);
}

/* The hash of packed key i: raw bytes for text and bytea, else text to parse. */
static int
hash_packed(const bfc_filter *filter, bfc_kind kind, const char *key, size_t len,
			uint64_t *hash, bfc_error *err)
{
	if (kind == BFC_KIND_BYTEA)
	{
		*hash = bf_hash_bytes(key, len, filter->header.seed);
		return 0;
	}
	return hash_key_text(filter, kind, key, len, hash, err);
}

/*
 * The packed batch forms: key i is data[offsets[i], offsets[i + 1]).
 * Probes into out, or adds when out is NULL; a key that cannot be hashed
 * stops the batch, the keys before it having been added, as with single
 * adds.
 */
static int
packed_in_batches(bfc_filter *filter, bfc_kind kind, const char *data,
				  const size_t *offsets, size_t n, uint8_t *out, bfc_error *err)
{
	uint64_t	hashes[BATCH];

	if (!check_kind(filter, kind, err))
		return -1;
	for (size_t done = 0; done < n; done += BATCH)
	{
		size_t		m = n - done < BATCH ? n - done : BATCH;

		for (size_t i = 0; i < m; i++)
		{
			size_t		at = offsets[done + i];

			if (hash_packed(filter, kind, data + at, offsets[done + i + 1] - at,
							&hashes[i], err) != 0)
			{
				if (out == NULL)
					add_hashes(filter, kind, hashes, i, NULL);	/* err tells of the key */
				return -1;
			}
		}
		if (out != NULL)
			test_hashes(filter, hashes, m, out + done);
		else if (add_hashes(filter, kind, hashes, m, err) != 0)
			return -1;
	}
	return 0;
}

int
bfc_contains_packed(const bfc_filter *filter, bfc_kind kind, const char *data,
					const size_t *offsets, size_t n, uint8_t *out, bfc_error *err)
{
	return packed_in_batches((bfc_filter *) filter, kind, data, offsets, n, out, err);
}

int
bfc_add_packed(bfc_filter *filter, bfc_kind kind, const char *data, const size_t *offsets,
			   size_t n, bfc_error *err)
{
	return packed_in_batches(filter, kind, data, offsets, n, NULL, err);
}
