/*
 * api_test.c
 *	  Test program of test/client/run.sh: the C API of the client library
 *	  (client/bloomfilter.h) without a server: typed and text keys agree,
 *	  keys of the wrong kind and filters of kind "other" are errors,
 *	  version 1 rules, the forms round-trip, bloom_empty's sizing, the key
 *	  syntaxes at their edges, growing filters (chains of segments),
 *	  deltas of an index applied (bfc_apply_changes, the deltas written
 *	  here from the format in src/core/delta.h), and probing, sizing and
 *	  growing from several threads.  Built twice, against the static and
 *	  the shared library, and from the sources with ASan and UBSan and
 *	  with ThreadSanitizer.
 *
 * With --chain CAPACITY FPR GROWTH it builds a chain of the int64 keys on
 * stdin (one per line) instead, and prints its bytes in hex twice: added
 * one by one, and in one batch; run.sh compares them with the server's.
 *
 * Prints "ok - ..." / "not ok - ..." lines; exits non-zero on a failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomfilter.h"

/* The deltas' checksum, written here from the format, not by the core. */
#define XXH_INLINE_ALL
#include <xxhash.h>

static int	failures = 0;

static void
check(const char *description, int condition)
{
	printf("%s - %s\n", condition ? "ok" : "not ok", description);
	if (!condition)
		failures++;
}

static int
str_in(bfc_filter *f, const char *key)
{
	return bfc_contains_str(f, key, strlen(key), NULL);
}

static void
test_numbers(void)
{
	bfc_error	err;
	bfc_filter *f = bfc_create(BFC_KIND_NUMBER, 1000, 0.01, &err);
	const char *same_as_1000[] = {"1000", "1e3", "1000.000", " +1000 ", "10000e-1", "1.000E+3"};
	int			all = 1;

	bfc_add_int64(f, 1000, &err);
	for (size_t i = 0; i < sizeof(same_as_1000) / sizeof(same_as_1000[0]); i++)
		all &= str_in(f, same_as_1000[i]) == 1;
	check("number: 1000 added as an int64 is found as 1e3, 1000.000, +1000, ...", all);

	bfc_add_str(f, "0.50", 4, &err);
	check("number: 0.50 added is found as 0.5, 5e-1, .5",
		  str_in(f, "0.5") == 1 && str_in(f, "5e-1") == 1 && str_in(f, ".5") == 1);
	bfc_add_str(f, "-9223372036854775808", 20, &err);
	check("number: INT64_MIN as text is the int64", bfc_contains_int64(f, INT64_MIN, &err) == 1);
	bfc_add_str(f, "-0", 2, &err);
	check("number: -0 is 0", bfc_contains_int64(f, 0, &err) == 1);
	check("number: 1_000 (PostgreSQL 16 syntax) is refused",
		  bfc_contains_str(f, "1_000", 5, &err) == -1 && err.code == BFC_ERR_KEY);
	check("number: 1e131072 overflows as in numeric_in",
		  bfc_contains_str(f, "1e131072", 8, &err) == -1 && err.code == BFC_ERR_KEY);
	check("number: 0e-16384 overflows the display scale as in numeric_in",
		  bfc_contains_str(f, "0e-16384", 8, &err) == -1 && err.code == BFC_ERR_KEY);
	check("number: a text key is a kind error",
		  bfc_contains_text(f, "abc", 3, &err) == -1 && err.code == BFC_ERR_KIND &&
		  strstr(err.message, "kind number, not text") != NULL);
	bfc_free(f);
}

static void
test_kinds(void)
{
	bfc_error	err;
	bfc_filter *f;
	uint8_t		uuid[16] = {0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
	0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11};

	f = bfc_create(BFC_KIND_UUID, 10, 0.01, &err);
	bfc_add_uuid(f, uuid, &err);
	check("uuid: found in upper case, in braces, without hyphens",
		  str_in(f, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11") == 1 &&
		  str_in(f, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}") == 1 &&
		  str_in(f, "a0eebc999c0b4ef8bb6d6bb9bd380a11") == 1 &&
		  str_in(f, "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11") == 1);
	check("uuid: a hyphen uuid_in refuses is refused",
		  bfc_contains_str(f, "a0eebc99-9c0b4ef8-bb6d-6bb9bd380a1-1", 37, &err) == -1 &&
		  err.code == BFC_ERR_KEY);
	bfc_free(f);

	f = bfc_create(BFC_KIND_FLOAT, 10, 0.01, &err);
	bfc_add_double(f, -0.0, &err);
	bfc_add_str(f, "NaN", 3, &err);
	check("float: -0 = 0, every NaN is one", bfc_contains_double(f, 0.0, &err) == 1 &&
		  bfc_contains_double(f, -(0.0 / 0.0), &err) == 1 && str_in(f, " -0.0 ") == 1);
	check("float: 1e999 is out of range as in float8in",
		  bfc_contains_str(f, "1e999", 5, &err) == -1 && err.code == BFC_ERR_KEY);
	bfc_free(f);

	f = bfc_create(BFC_KIND_TEXT, 10, 0.01, &err);
	bfc_add_text(f, "abc", 3, &err);
	check("text: trailing blanks do not count, leading ones do",
		  str_in(f, "abc   ") == 1 && str_in(f, " abc") == 0);
	bfc_free(f);

	f = bfc_create(BFC_KIND_BOOL, 10, 0.01, &err);
	bfc_add_bool(f, true, &err);
	check("boolean: t, TRUE, yes, on, 1, ' y ' are true; 'o' is refused",
		  str_in(f, "t") == 1 && str_in(f, "TRUE") == 1 && str_in(f, "yes") == 1 &&
		  str_in(f, "on") == 1 && str_in(f, "1") == 1 && str_in(f, " y ") == 1 &&
		  str_in(f, "o") == -1);
	bfc_free(f);

	f = bfc_create(BFC_KIND_BYTEA, 10, 0.01, &err);
	bfc_add_bytea(f, "\x01\\a", 3, &err);
	check("bytea: \\x hex and the escape format read the same bytes",
		  str_in(f, "\\x015C61") == 1 && str_in(f, "\\001\\\\a") == 1 && str_in(f, "\\x01 5c 61") == 1);
	bfc_free(f);

	f = bfc_create(BFC_KIND_DATE, 10, 0.01, &err);
	bfc_add_date(f, 0, &err);
	bfc_add_date(f, INT32_MAX, &err);
	check("date: 2000-01-01 is day 0, infinity is INT32_MAX",
		  str_in(f, "2000-01-01") == 1 && str_in(f, "infinity") == 1 && str_in(f, "2000-01-02") == 0);
	check("date: what the client cannot read exactly is refused (2023-02-29, a US spelling)",
		  str_in(f, "2023-02-29") == -1 && str_in(f, "01/02/2000") == -1);
	bfc_free(f);

	f = bfc_create(BFC_KIND_TIMESTAMPTZ, 10, 0.01, &err);
	bfc_add_timestamp(f, BFC_KIND_TIMESTAMPTZ, 0, &err);
	check("timestamptz: 2000-01-01 05:30+05:30 is 2000-01-01 00:00 UTC",
		  str_in(f, "2000-01-01 05:30+05:30") == 1 && str_in(f, "1999-12-31T23:00:00.000000-01") == 1);
	check("timestamptz: without an offset is refused (it would follow TimeZone)",
		  bfc_contains_str(f, "2000-01-01 00:00", 16, &err) == -1 && err.code == BFC_ERR_KEY &&
		  strstr(err.message, "UTC offset") != NULL);
	check("timestamptz: more than 6 fractional digits are refused (the server rounds)",
		  str_in(f, "2000-01-01 00:00:00.0000001Z") == -1);
	bfc_free(f);
}

static void
test_forms_and_sizing(void)
{
	bfc_error	err;
	bfc_filter *f = bfc_create(BFC_KIND_NONE, 1000, 0.01, &err);
	bfc_filter *g;
	bfc_info	info;
	size_t		len;
	const uint8_t *bytes;
	char	   *text;

	bfc_get_info(f, &info);
	check("bfc_create(1000, 0.01) is sized as bloom_empty: 20 blocks, k 6, 1336 bytes",
		  info.bits == 10240 && info.hashes == 6 && info.bytes == 1336 &&
		  strcmp(info.key_kind, "none") == 0);
	check("a filter of no kind answers absent without reading the key",
		  bfc_contains_str(f, "anything", 8, &err) == 0);
	check("a key spelled as text cannot be added to a filter of no kind",
		  bfc_add_str(f, "1", 1, &err) == -1 && err.code == BFC_ERR_PARAM);
	bfc_add_int64(f, 7, &err);
	check("the first key gives the filter its kind", bfc_filter_kind(f) == BFC_KIND_NUMBER);

	text = malloc(bfc_text_size(f));
	bfc_write_text(f, text);
	g = bfc_load(text, strlen(text), &err);
	bytes = bfc_bytes(f, &len);
	check("text form round trip", g != NULL && memcmp(bfc_bytes(g, &len), bytes, len) == 0);
	bfc_free(g);
	check("text form with a newline inside is refused, as by bloom_in",
		  bfc_from_text("bloom:QkYC\nAQYB", 15, &err) == NULL && err.code == BFC_ERR_INVALID);
	free(text);

	{
		uint8_t    *owned = malloc(len);

		memcpy(owned, bytes, len);
		g = bfc_adopt_bytes(owned, len, &err);
		check("bfc_adopt_bytes takes malloc'd bytes as they are",
			  g != NULL && bfc_bytes(g, &len) == owned && bfc_contains_int64(g, 7, &err) == 1);
		bfc_free(g);			/* frees owned */
		owned = malloc(len);
		memcpy(owned, bytes, len);
		owned[9] ^= 1;
		check("bfc_adopt_bytes refuses damaged bytes, which stay the caller's",
			  bfc_adopt_bytes(owned, len, &err) == NULL && err.code == BFC_ERR_INVALID);
		free(owned);
	}

	check("capacity 0 is refused", bfc_create(BFC_KIND_NUMBER, 0, 0.01, &err) == NULL &&
		  err.code == BFC_ERR_PARAM);
	check("fpr 0.6 is refused", bfc_create(BFC_KIND_NUMBER, 10, 0.6, &err) == NULL &&
		  err.code == BFC_ERR_PARAM);
	check("a filter beyond the size limit is refused and says how many fit",
		  bfc_create(BFC_KIND_NUMBER, UINT64_C(1) << 40, 0.01, &err) == NULL &&
		  err.code == BFC_ERR_TOO_LARGE && strstr(err.message, "at most") != NULL);
	check("kind other cannot be created", bfc_create(BFC_KIND_OTHER, 10, 0.01, &err) == NULL);

	g = bfc_create(BFC_KIND_NUMBER, 1000, 0.001, &err);
	check("union of filters of different rates is refused",
		  bfc_union(f, g, &err) == -1 && err.code == BFC_ERR_INCOMPATIBLE);
	bfc_free(g);
	g = bfc_create(BFC_KIND_TEXT, 1000, 0.01, &err);
	bfc_add_text(g, "x", 1, &err);
	check("union of filters of different kinds is refused",
		  bfc_union(f, g, &err) == -1 && err.code == BFC_ERR_INCOMPATIBLE);
	bfc_free(g);
	bfc_free(f);
}

/* A filter of kind "other", as the server builds it from jsonb values. */
static void
test_other(void)
{
	static const char jsonb_filter[] =
		"bloom:QkYCAQYKBwBFldlWAQAAAAAAAAAAAAAABQAAAAAAAAB7FK5H4XqEPwUAAAAAAAAA1j8rswAAAAAC"
		"AAAIBIACQAAACAAAAABCgAAAAABAAAAgAAEAAJgCAAAAgAACACAAAAAAQIAAACAAAAAAAAQCAGCAAACAAAAA";
	bfc_error	err;
	bfc_filter *other = bfc_load(jsonb_filter, strlen(jsonb_filter), &err);
	bfc_info	info;

	if (other == NULL)
	{
		check("a server-built filter of kind other loads", 0);
		printf("#   %s\n", err.message);
		return;
	}
	bfc_get_info(other, &info);
	check("a server-built filter of kind other loads, with its environment",
		  strcmp(info.key_kind, "other") == 0 &&
		  strcmp(info.key_environment, "encoding UTF8") == 0);
	check("probing it is an error, not an answer",
		  bfc_contains_str(other, "{}", 2, &err) == -1 && err.code == BFC_ERR_UNSUPPORTED &&
		  bfc_contains_text(other, "{}", 2, &err) == -1);
	bfc_free(other);
}

/* Whether two filters have the same bytes. */
static int
same_bytes(const bfc_filter *a, const bfc_filter *b)
{
	size_t		alen;
	size_t		blen;
	const uint8_t *abytes = bfc_bytes(a, &alen);
	const uint8_t *bbytes = bfc_bytes(b, &blen);

	return alen == blen && memcmp(abytes, bbytes, alen) == 0;
}

/* A chain of capacity 100, growth 2, holding first..last. */
static bfc_filter *
chain_of(int64_t first, int64_t last, int growth)
{
	bfc_filter *f = bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, growth, NULL);

	for (int64_t i = first; i <= last; i++)
		bfc_add_int64(f, i, NULL);
	return f;
}

static void
test_chains(void)
{
	bfc_error	err;
	bfc_filter *f = bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, 2, &err);
	bfc_filter *g;
	bfc_filter *h;
	bfc_info	info;
	int64_t		keys[1000];
	int			all = 1;
	int			absent_found = 0;
	size_t		len;
	char	   *text;

	bfc_get_info(f, &info);
	check("bfc_create_growing(100, 0.01, 2): a chain of one empty segment, growth 2",
		  f != NULL && strcmp(info.layout, "chained") == 0 && bfc_segments(f) == 1 &&
		  bfc_growth(f) == 2 && info.capacity == 100 && info.bits_set == 0 &&
		  info.bytes == 56 + 16 + info.bits / 8);
	g = bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, 0, &err);
	h = bfc_create(BFC_KIND_NUMBER, 100, 0.01, &err);
	check("growth 0 is bfc_create's filter of fixed size, segments 1 and growth 0",
		  same_bytes(g, h) && bfc_segments(g) == 1 && bfc_growth(g) == 0);
	bfc_free(g);
	bfc_free(h);
	check("growth 1 and 17 are refused",
		  bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, 1, &err) == NULL &&
		  err.code == BFC_ERR_PARAM &&
		  bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, 17, &err) == NULL &&
		  err.code == BFC_ERR_PARAM && strstr(err.message, "growth") != NULL);
	check("a chain's bad capacity and rate are refused as bfc_create refuses them",
		  bfc_create_growing(BFC_KIND_NUMBER, 0, 0.01, 2, &err) == NULL &&
		  err.code == BFC_ERR_PARAM &&
		  bfc_create_growing(BFC_KIND_NUMBER, 100, 0.6, 2, &err) == NULL &&
		  err.code == BFC_ERR_PARAM);
	check("a chain with nothing added answers absent", bfc_contains_int64(f, 1, &err) == 0);

	for (int i = 0; i < 1000; i++)
		keys[i] = i;
	for (int i = 0; i < 1000; i++)
		bfc_add_int64(f, keys[i], &err);
	for (int i = 0; i < 1000; i++)
		all &= bfc_contains_int64(f, i, &err) == 1;
	for (int i = 1000; i < 101000; i++)
		absent_found += bfc_contains_int64(f, i, &err) == 1;
	bfc_get_info(f, &info);
	check("1000 keys grow it to 4 segments (100 + 200 + 400 + 800), every key found",
		  all && bfc_segments(f) == 4 && info.capacity == 1500 && info.inserted == 1000);
	check("... and absent keys are found at most at its rate (< 1% of 100,000)",
		  absent_found < 1000);

	g = bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, 2, &err);
	bfc_add_int64_many(g, keys, 1000, &err);
	check("a batch add grows it to the same bytes as one add per key", same_bytes(f, g));
	bfc_free(g);

	bfc_get_info(f, &info);
	len = (size_t) info.bytes;
	for (int i = 0; i < 1000; i++)
		bfc_add_int64(f, keys[i], &err);
	bfc_get_info(f, &info);
	check("the same keys again take no room: no new segment, only inserted counts them",
		  (size_t) info.bytes == len && bfc_segments(f) == 4 && info.inserted == 2000);

	text = malloc(bfc_text_size(f));
	bfc_write_text(f, text);
	g = bfc_load(text, strlen(text), &err);
	check("a chain's text form round-trips", g != NULL && same_bytes(f, g));
	free(text);
	{
		const uint8_t *bytes = bfc_bytes(f, &len);

		h = bfc_from_bytes(bytes, len, &err);
		check("a chain's binary form round-trips", h != NULL && same_bytes(f, h));
		bfc_free(h);
	}
	bfc_free(g);
	bfc_free(f);

	/* unions: segment by segment, the longer chain's further segments as they are */
	f = chain_of(0, 999, 2);
	g = chain_of(5000, 5099, 2);
	h = bfc_copy(g, &err);
	check("union of a chain into a shorter one takes its further segments",
		  bfc_union(h, f, &err) == 0 && bfc_segments(h) == 4);
	all = 1;
	for (int i = 0; i < 1000; i++)
		all &= bfc_contains_int64(h, i, &err) == 1;
	for (int i = 5000; i < 5100; i++)
		all &= bfc_contains_int64(h, i, &err) == 1;
	bfc_get_info(h, &info);
	check("... finds the keys of both, and sums their inserted counts",
		  all && info.inserted == 1100);
	check("union of chains is symmetric: f | g has the bytes of g | f",
		  bfc_union(f, g, &err) == 0 && same_bytes(f, h));
	bfc_free(g);
	bfc_free(h);
	g = bfc_create(BFC_KIND_NUMBER, 100, 0.01, &err);
	check("union of a chain and a filter of fixed size is refused, both ways",
		  bfc_union(f, g, &err) == -1 && err.code == BFC_ERR_INCOMPATIBLE &&
		  bfc_union(g, f, &err) == -1 && err.code == BFC_ERR_INCOMPATIBLE);
	bfc_free(g);
	g = chain_of(0, 10, 4);
	check("union of chains of different growth factors is refused, naming them",
		  bfc_union(f, g, &err) == -1 && err.code == BFC_ERR_INCOMPATIBLE &&
		  strstr(err.message, "growth 2") != NULL && strstr(err.message, "growth 4") != NULL);
	bfc_free(g);
	bfc_free(f);
}

/*
 * Many threads probe one filter and size new ones at alternating rates;
 * now and then each also builds a chain, and loads one (validating a
 * chain sizes its segments), at those rates too.
 */
static bfc_filter *shared;
static bfc_filter *reference_chains[2];	/* at 0.01, at 0.001 */
static int	thread_failures;

static void *
worker(void *arg)
{
	long		id = (long) arg;

	for (int i = 0; i < 2000; i++)
	{
		double		fpr = (i + id) % 2 ? 0.001 : 0.01;
		bfc_filter *f = bfc_create(BFC_KIND_NUMBER, 1000 + i, fpr, NULL);
		bfc_info	info;

		bfc_get_info(f, &info);
		if (info.hashes != (fpr == 0.01 ? 6 : 9))
			__atomic_add_fetch(&thread_failures, 1, __ATOMIC_RELAXED);
		bfc_free(f);
		if (bfc_contains_int64(shared, i, NULL) != 1)
			__atomic_add_fetch(&thread_failures, 1, __ATOMIC_RELAXED);
		if (i % 400 == 0)
		{
			bfc_filter *reference = reference_chains[fpr == 0.01 ? 0 : 1];
			const uint8_t *bytes;
			size_t		len;
			bfc_filter *loaded;

			f = bfc_create_growing(BFC_KIND_NUMBER, 10, fpr, 2, NULL);
			for (int64_t key = 0; key < 200; key++)
				bfc_add_int64(f, key, NULL);
			bytes = bfc_bytes(reference, &len);
			loaded = bfc_from_bytes(bytes, len, NULL);
			if (!same_bytes(f, reference) || loaded == NULL)
				__atomic_add_fetch(&thread_failures, 1, __ATOMIC_RELAXED);
			bfc_free(loaded);
			bfc_free(f);
		}
	}
	return NULL;
}

/* ---- deltas ---- */

/* A delta being written by hand, as delta.h lays it out. */
typedef struct HandDelta
{
	uint8_t		bytes[1 << 16];
	size_t		len;
	size_t		run;			/* offset of the open run, 0: none */
	uint32_t	nruns;
} HandDelta;

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, int n)
{
	uint64_t	v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t) p[i] << (8 * i);
	return v;
}

/* The header from the filter's own bytes (bloom.h's layout). */
static void
hand_start(HandDelta *d, const bfc_filter *filter)
{
	size_t		len;
	const uint8_t *v = bfc_bytes(filter, &len);
	int			chain = v[3] == 2;

	memset(d->bytes, 0, 48);
	d->bytes[0] = 'B';
	d->bytes[1] = 'D';
	d->bytes[2] = 1;
	put_le(d->bytes + 4, chain ? get_le(v + 12, 4) : 1, 4);
	memcpy(d->bytes + 8, v + 16, 8);	/* seed */
	memcpy(d->bytes + 16, v + 24, 8);	/* capacity */
	memcpy(d->bytes + 24, v + 32, 8);	/* fpr */
	d->bytes[32] = v[5];		/* kind */
	d->bytes[33] = chain ? v[7] : 0;	/* growth */
	d->bytes[34] = v[2];		/* format version */
	d->bytes[35] = v[3];		/* layout */
	memcpy(d->bytes + 36, v + 8, 4);	/* key tag */
	d->len = 48;
	d->run = 0;
	d->nruns = 0;
}

static void
hand_add(HandDelta *d, uint32_t segment, uint64_t hash)
{
	if (d->run == 0 || get_le(d->bytes + d->run, 4) != segment)
	{
		d->run = d->len;
		put_le(d->bytes + d->run, segment, 4);
		put_le(d->bytes + d->run + 4, 0, 4);
		d->len += 8;
		d->nruns++;
	}
	put_le(d->bytes + d->len, hash, 8);
	d->len += 8;
	put_le(d->bytes + d->run + 4, get_le(d->bytes + d->run + 4, 4) + 1, 4);
}

static void
hand_finish(HandDelta *d)
{
	static uint8_t covered[sizeof(d->bytes)];

	put_le(d->bytes + 40, d->nruns, 4);
	memcpy(covered, d->bytes, 44);
	memcpy(covered + 44, d->bytes + 48, d->len - 48);
	put_le(d->bytes + 44, (uint32_t) XXH3_64bits(covered, d->len - 4), 4);
}

/* A number key's hash as the server hashes int8: its 8 bytes, little-endian. */
static uint64_t
int_hash(int64_t key, uint64_t seed)
{
	uint8_t		bytes[8];

	put_le(bytes, (uint64_t) key, 8);
	return XXH3_64bits_withSeed(bytes, 8, seed);
}

/*
 * Adds keys first..last to index as a bloomfilter index adds them, and
 * writes into d each key it logs: a chain's key already held takes no room
 * and is not logged; a new one goes to the last segment.  d's header is
 * the index's at the end, so it is written after the adds.
 */
static void
index_keys(bfc_filter *index, int64_t first, int64_t last, HandDelta *d)
{
	static uint32_t segments[1 << 12];
	static uint64_t hashes[1 << 12];
	int			n = 0;
	bfc_info	info;

	bfc_get_info(index, &info);
	for (int64_t key = first; key <= last; key++)
	{
		if (bfc_growth(index) != 0 && bfc_contains_int64(index, key, NULL) == 1)
			continue;
		bfc_add_int64(index, key, NULL);
		segments[n] = (uint32_t) bfc_segments(index) - 1;
		hashes[n++] = int_hash(key, (uint64_t) info.seed);
	}
	hand_start(d, index);
	for (int i = 0; i < n; i++)
		hand_add(d, segments[i], hashes[i]);
	hand_finish(d);
}

static void
test_changes(void)
{
	static HandDelta d;
	static HandDelta bad;
	bfc_error	err;
	bfc_filter *index = bfc_create_growing(BFC_KIND_NUMBER, 100, 0.01, 2, &err);
	bfc_filter *copy;
	bfc_filter *before;
	bfc_filter *fixed;
	bfc_filter *fixed_copy;
	int			all = 1;

	/* an index has its kind from the start: one key before the snapshot */
	bfc_add_int64(index, -1, &err);
	copy = bfc_copy(index, &err);

	index_keys(index, 0, 49, &d);
	check("changes: a delta of 50 keys brings the copy of a chain to the index's bytes",
		  bfc_apply_changes(copy, d.bytes, d.len, &err) == 0 && same_bytes(copy, index) &&
		  bfc_segments(copy) == 1);
	index_keys(index, 50, 999, &d);
	check("changes: one of 950 more grows it with the index to 4 segments, the same bytes",
		  bfc_apply_changes(copy, d.bytes, d.len, &err) == 0 && same_bytes(copy, index) &&
		  bfc_segments(copy) == 4);
	for (int64_t key = -1; key <= 999; key++)
		all &= bfc_contains_int64(copy, key, &err) == 1;
	check("changes: the copy finds every key", all);
	index_keys(index, 0, 999, &d);
	check("changes: a delta of nothing (every key held) is accepted and changes nothing",
		  d.nruns == 0 && d.len == 48 &&
		  bfc_apply_changes(copy, d.bytes, d.len, &err) == 0 && same_bytes(copy, index));

	/* refusals leave the copy as it was */
	before = bfc_copy(copy, &err);
	index_keys(index, 1000, 1100, &d);
	bad = d;
	bad.bytes[60] ^= 1;
	check("changes: a damaged delta is refused as invalid, the copy unchanged",
		  bfc_apply_changes(copy, bad.bytes, bad.len, &err) == -1 &&
		  err.code == BFC_ERR_INVALID && strstr(err.message, "checksum") != NULL &&
		  same_bytes(copy, before));
	check("changes: a truncated one too",
		  bfc_apply_changes(copy, d.bytes, d.len - 1, &err) == -1 &&
		  err.code == BFC_ERR_INVALID && same_bytes(copy, before));
	check("changes: no delta at all too",
		  bfc_apply_changes(copy, NULL, 0, &err) == -1 && err.code == BFC_ERR_INVALID &&
		  same_bytes(copy, before));
	bad = d;
	put_le(bad.bytes + 8, get_le(bad.bytes + 8, 8) + 1, 8);
	hand_finish(&bad);
	check("changes: a sound delta of another seed is a mismatch, the copy unchanged",
		  bfc_apply_changes(copy, bad.bytes, bad.len, &err) == -1 &&
		  err.code == BFC_ERR_MISMATCH && strstr(err.message, "snapshot") != NULL &&
		  same_bytes(copy, before));
	bad = d;
	put_le(bad.bytes + 4, 3, 4);
	put_le(bad.bytes + 48, 0, 4);	/* its one run, to segment 0 */
	hand_finish(&bad);
	check("changes: a delta of fewer segments than the copy's is a mismatch",
		  bfc_apply_changes(copy, bad.bytes, bad.len, &err) == -1 &&
		  err.code == BFC_ERR_MISMATCH && same_bytes(copy, before));
	check("changes: the sound one is then taken",
		  bfc_apply_changes(copy, d.bytes, d.len, &err) == 0 && same_bytes(copy, index));
	bfc_free(before);

	/* a filter of fixed size takes every key, held or not */
	fixed = bfc_create(BFC_KIND_NUMBER, 1000, 0.01, &err);
	bfc_add_int64(fixed, 0, &err);
	fixed_copy = bfc_copy(fixed, &err);
	index_keys(fixed, 0, 1999, &d);
	check("changes: a filter of fixed size follows its index past capacity, to the same bytes",
		  bfc_apply_changes(fixed_copy, d.bytes, d.len, &err) == 0 &&
		  same_bytes(fixed_copy, fixed));
	check("changes: a fixed filter's delta on a chain is a mismatch",
		  bfc_apply_changes(copy, d.bytes, d.len, &err) == -1 && err.code == BFC_ERR_MISMATCH);

	bfc_free(fixed);
	bfc_free(fixed_copy);
	bfc_free(copy);
	bfc_free(index);
}

static void
test_threads(void)
{
	pthread_t	threads[4];

	shared = bfc_create(BFC_KIND_NUMBER, 5000, 0.01, NULL);
	for (int i = 0; i < 2000; i++)
		bfc_add_int64(shared, i, NULL);
	for (int r = 0; r < 2; r++)
	{
		reference_chains[r] = bfc_create_growing(BFC_KIND_NUMBER, 10, r == 0 ? 0.01 : 0.001,
												 2, NULL);
		for (int64_t key = 0; key < 200; key++)
			bfc_add_int64(reference_chains[r], key, NULL);
	}
	for (long i = 0; i < 4; i++)
		pthread_create(&threads[i], NULL, worker, (void *) i);
	for (int i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	check("4 threads probing one filter, sizing new ones and building and loading chains "
		  "at alternating rates agree", thread_failures == 0);
	bfc_free(shared);
	bfc_free(reference_chains[0]);
	bfc_free(reference_chains[1]);
}

/*
 * Threads sizing at once: each builds growing chains at rates nobody sized
 * before, as many as fill its memo past its slots, and loads each (the
 * validator sizes every segment again).  The library keeps one memo per
 * thread, with no lock; whatever a thread's sizing wrote where another
 * reads would show here as a different chain, and under ThreadSanitizer
 * (run.sh builds this with it too) as a report.
 */
#define SIZING_THREADS 2
#define SIZING_CHAINS 8

static bfc_filter *sized[SIZING_THREADS][SIZING_CHAINS];

/* Chain c of thread t: 300 keys into 10 doubling, five segments. */
static bfc_filter *
sizing_chain(long t, int c)
{
	double		fpr = 0.02 + t * 0.001 + c * 0.0001;
	bfc_filter *chain = bfc_create_growing(BFC_KIND_NUMBER, 10, fpr, 2, NULL);

	for (int64_t key = 0; key < 300 && chain != NULL; key++)
		bfc_add_int64(chain, key, NULL);
	return chain;
}

static void *
sizing_worker(void *arg)
{
	long		t = (long) arg;

	for (int c = 0; c < SIZING_CHAINS; c++)
	{
		const uint8_t *bytes;
		size_t		len;
		bfc_filter *loaded;

		sized[t][c] = sizing_chain(t, c);
		if (sized[t][c] == NULL)
			continue;
		bytes = bfc_bytes(sized[t][c], &len);
		loaded = bfc_from_bytes(bytes, len, NULL);
		if (loaded == NULL || !same_bytes(loaded, sized[t][c]))
			__atomic_add_fetch(&thread_failures, 1, __ATOMIC_RELAXED);
		bfc_free(loaded);
	}
	return NULL;
}

static void
test_threads_sizing(void)
{
	pthread_t	threads[SIZING_THREADS];
	int			same = 1;

	thread_failures = 0;
	for (long t = 0; t < SIZING_THREADS; t++)
		pthread_create(&threads[t], NULL, sizing_worker, (void *) t);
	for (int t = 0; t < SIZING_THREADS; t++)
		pthread_join(threads[t], NULL);
	for (long t = 0; t < SIZING_THREADS; t++)
		for (int c = 0; c < SIZING_CHAINS; c++)
		{
			bfc_filter *alone = sizing_chain(t, c);

			same &= sized[t][c] != NULL && alone != NULL && same_bytes(sized[t][c], alone) &&
				bfc_segments(alone) == 5;
			bfc_free(alone);
			bfc_free(sized[t][c]);
		}
	check("2 threads sizing chains at once, each at rates new to it, past a memo's slots, "
		  "build and load the chains one thread alone does", same && thread_failures == 0);
}

static void
print_hex(const bfc_filter *filter)
{
	size_t		len;
	const uint8_t *bytes = bfc_bytes(filter, &len);

	for (size_t i = 0; i < len; i++)
		printf("%02x", bytes[i]);
	putchar('\n');
}

/* --chain CAPACITY FPR GROWTH: see the header. */
static int
build_chain(char **argv)
{
	uint64_t	capacity = strtoull(argv[0], NULL, 10);
	double		fpr = strtod(argv[1], NULL);
	int			growth = atoi(argv[2]);
	bfc_error	err;
	bfc_filter *one_by_one = bfc_create_growing(BFC_KIND_NUMBER, capacity, fpr, growth, &err);
	bfc_filter *batch = bfc_create_growing(BFC_KIND_NUMBER, capacity, fpr, growth, &err);
	int64_t    *keys = NULL;
	size_t		n = 0;
	size_t		room = 0;
	long long	key;

	if (one_by_one == NULL || batch == NULL)
	{
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	while (scanf("%lld", &key) == 1)
	{
		if (n == room)
		{
			room = room ? 2 * room : 1024;
			keys = realloc(keys, room * sizeof(int64_t));
		}
		keys[n++] = key;
		if (bfc_add_int64(one_by_one, key, &err) != 0)
		{
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
	}
	if (bfc_add_int64_many(batch, keys, n, &err) != 0)
	{
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	print_hex(one_by_one);
	print_hex(batch);
	free(keys);
	bfc_free(one_by_one);
	bfc_free(batch);
	return 0;
}

/*
 * --junk: every line of stdin as a key of every kind and as a text form,
 * for a run under AddressSanitizer and UBSan; the answers do not matter.
 */
static int
junk(void)
{
	static const bfc_kind kinds[] = {BFC_KIND_NUMBER, BFC_KIND_FLOAT, BFC_KIND_TEXT,
		BFC_KIND_BYTEA, BFC_KIND_UUID, BFC_KIND_BOOL, BFC_KIND_DATE, BFC_KIND_TIMESTAMP,
	BFC_KIND_TIMESTAMPTZ};
	bfc_filter *filters[9];
	char	   *line = NULL;
	size_t		room = 0;
	ssize_t		len;
	long		lines = 0;
	long		accepted = 0;

	for (int i = 0; i < 9; i++)
	{
		filters[i] = bfc_create(kinds[i], 100, 0.01, NULL);
		bfc_set_v1_utf8(filters[i], i % 2 == 0);
	}
	while ((len = getline(&line, &room, stdin)) >= 0)
	{
		bfc_filter *loaded;

		if (len > 0 && line[len - 1] == '\n')
			len--;
		lines++;
		for (int i = 0; i < 9; i++)
		{
			if (bfc_add_str(filters[i], line, len, NULL) == 0)
				accepted++;
			bfc_contains_str(filters[i], line, len, NULL);
		}
		loaded = bfc_load(line, len, NULL);
		bfc_free(loaded);
		bfc_validate_text(line, len, NULL);
	}
	free(line);
	for (int i = 0; i < 9; i++)
		bfc_free(filters[i]);
	printf("%ld lines, %ld keys accepted\n", lines, accepted);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--junk") == 0)
		return junk();
	if (argc == 5 && strcmp(argv[1], "--chain") == 0)
		return build_chain(argv + 2);
	test_numbers();
	test_kinds();
	test_forms_and_sizing();
	test_other();
	test_chains();
	test_changes();
	test_threads();
	test_threads_sizing();
	return failures != 0;
}
