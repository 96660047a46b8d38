/*-------------------------------------------------------------------------
 *
 * fuzz_qfilter.c
 *	  libFuzzer target for qfilter's pure core (qfilter.c): arbitrary bytes
 *	  into qf_validate and every operation on a value it accepts, and
 *	  sequences of operations on small filters checked against an exact
 *	  multiset of keys.
 *
 * The first input byte picks the mode: even, the validator; odd, operation
 * sequences.  The rest of the input is that mode's.
 *
 * Validator mode
 * --------------
 * The rest of the input is a qfilter value.  qf_validate must never crash
 * or read past it, and must say the same thing twice; a refusal must be
 * qf_read_header's, or, past a good header, nonzero tail padding, bad slots
 * or a bad count.  As in fuzz_validate.c each input is tried as it is and
 * again with its header checksum recomputed here (low half of the XXH3-64
 * of bytes 0..55, from the spec in qfilter.h), since the checksum comes
 * before the field checks and would otherwise stop nearly every mutation.
 *
 * On an accepted value: the header re-encodes to the same bytes; the
 * cursor gives header.count fingerprints, each below the universe, in
 * non-decreasing order; qf_count of each equals its copies and qf_contains
 * agrees, and fingerprints next to them and derived from the input are
 * counted exactly (a filter of fingerprints is exact on fingerprints);
 * qf_distinct is the number of distinct ones; qf_sort_u64 sorts them as
 * qsort does.  On private copies: removing a fingerprint leaves a valid
 * value with one copy fewer and re-inserting it gives back the very same
 * bytes (the slots are canonical); inserting a new one and removing it
 * does too, or the insert refuses (full) without writing; the
 * value merged with itself validates and holds every fingerprint twice,
 * unless that is refused (QF_ERR_LIMIT: no size holds it); shrunk to the smallest size that
 * holds it, and grown, it holds the same fingerprints.
 *
 * Operation-sequence mode (missing bytes read as zero)
 * ----------------------------------------------------
 *	bytes 0..1	capacity: 1 + (little-endian value % 2000)
 *	byte  2		fpr: {0.5, 0.1, 0.01, 0.001}[byte % 4]
 *	bytes 3..4	key domain: 1 + (little-endian value % 512) keys
 *	then		operations, one byte each (value % 8) and its operands;
 *				K is two bytes, a key index modulo the domain:
 *					0, 1	add key K
 *					2		add keys K, K+1, ... (1 + next byte of them)
 *					3, 4	remove key K (or the next key that is present)
 *					5		remove 1 + (next byte % 64) present keys from K on
 *					6		union with a filter of n = next byte % 32 keys,
 *							grown (next byte % 4) times first: n Ks follow
 *					7		full check (below)
 *
 * Key i is hashed as 8 little-endian bytes with bf_hash(bytes, 8, 0), as
 * bloom_add does an int8, and stored as qf_fingerprint of that hash.  Adds
 * grow the filter on QF_ERR_FULL, as the SQL glue does; the one refusal
 * accepted is QF_ERR_LIMIT, which leaves the filter as it was (when no
 * size it can grow to holds the fingerprints).  A key
 * not in the multiset is never removed: that is the documented misuse.
 * After every operation (at most MAX_OPS): header.count is the multiset's
 * size, the value validates, and every key in the multiset, and the key
 * the operation named, has qf_count equal to the copies of its fingerprint
 * (so no false negative and no undercount).  The full check (at most
 * MAX_FULL_CHECKS, and once at the end) adds: every key of the domain is
 * counted exactly, the cursor gives exactly the sorted multiset of
 * fingerprints (and qf_sort_u64 sorts them, and the keys' hashes, as qsort
 * does), qf_distinct its distinct ones, and building it afresh, at the
 * same size and at the smallest size it fits, gives the same bytes as the
 * filter and as a merge-copy of it.
 *
 * A violated invariant aborts with "invariant violated" (fuzz_check.h),
 * which libFuzzer reports with the input saved.
 *
 *-------------------------------------------------------------------------
 */
#include "qfilter.h"
#include "bloom.h"
#include "fuzz_check.h"
#include "../compare_u64.h"

#include <string.h>

#define MAX_DOMAIN		512
#define MAX_OPS			200
/* Full checks an input may ask for (each rebuilds the filter twice). */
#define MAX_FULL_CHECKS	4
#define MAX_CAPACITY	2000
#define MAX_UNION_KEYS	32

/* Fingerprints of an accepted value that are removed and put back. */
#define REMOVE_PICKS	8
/* Fingerprints derived from the input and probed in an accepted value. */
#define PROBES			64

/* A filter and its decoded header, as the SQL glue keeps one. */
typedef struct Filter
{
	uint8_t    *value;
	QfHeader	header;
} Filter;

/* ---------------------------------------------------------------------
 * Shared helpers
 * ---------------------------------------------------------------------
 */
static uint8_t *
xmalloc(size_t n)
{
	uint8_t    *p = malloc(n == 0 ? 1 : n);

	FUZZ_CHECK(p != NULL);
	return p;
}

/* Field by field: QfHeader has padding, and fpr is compared by its bits. */
static int
headers_equal(const QfHeader *a, const QfHeader *b)
{
	return a->version == b->version && a->r == b->r &&
		a->identity.kind == b->identity.kind && a->identity.tag == b->identity.tag &&
		a->identity.env_encoding == b->identity.env_encoding &&
		a->identity.env_locale == b->identity.env_locale &&
		a->seed == b->seed && a->capacity == b->capacity &&
		memcmp(&a->fpr, &b->fpr, sizeof(a->fpr)) == 0 &&
		a->count == b->count && a->home_blocks == b->home_blocks &&
		a->total_blocks == b->total_blocks;
}

/* The value validates, with the header its holder keeps. */
static void
check_valid(const uint8_t *value, const QfHeader *header)
{
	QfHeader	decoded;

	FUZZ_CHECK(qf_validate(value, qf_value_bytes(header), &decoded) == QF_OK);
	FUZZ_CHECK(headers_equal(header, &decoded));
}

/* The cursor's fingerprints, at most room of them (more is a finding). */
static size_t
enumerate(const uint8_t *value, const QfHeader *h, uint64_t *out, size_t room)
{
	QfCursor	cursor;
	uint64_t	fingerprint;
	uint64_t	universe = qf_universe(h);
	size_t		n = 0;

	qf_cursor_start(&cursor);
	while (qf_cursor_next(value, h, &cursor, &fingerprint))
	{
		FUZZ_CHECK(n < room);
		FUZZ_CHECK(fingerprint < universe);
		FUZZ_CHECK(n == 0 || out[n - 1] <= fingerprint);
		out[n++] = fingerprint;
	}
	return n;
}

/* Copies of x in the sorted array a[0..n). */
static uint64_t
copies_in(const uint64_t *a, size_t n, uint64_t x)
{
	size_t		lo = 0,
				hi = n;
	size_t		first;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = n;
	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - first;
}

/*
 * qf_sort_u64, which the aggregates sort hashes with, gives what qsort
 * gives; values are left sorted.
 */
static void
check_sort(uint64_t *values, size_t n)
{
	uint64_t   *mine = (uint64_t *) (void *) xmalloc(n * sizeof(uint64_t));
	uint64_t   *tmp = (uint64_t *) (void *) xmalloc(n * sizeof(uint64_t));

	if (n > 0)
		memcpy(mine, values, n * sizeof(uint64_t));
	qf_sort_u64(mine, tmp, n);
	qsort(values, n, sizeof(uint64_t), compare_u64);
	FUZZ_CHECK(n == 0 || memcmp(mine, values, n * sizeof(uint64_t)) == 0);
	free(mine);
	free(tmp);
}

static size_t
distinct_in(const uint64_t *a, size_t n)
{
	size_t		distinct = 0;

	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || a[i] != a[i - 1];
	return distinct;
}

/*
 * The multiset sum of a and b (b may be NULL: a copy of a) in a new filter
 * that starts at start's size and doubles while the merge says QF_ERR_FULL,
 * as the glue's union and growth do.  QF_OK with out set (header written),
 * or the status that stopped it, out untouched.
 */
static QfStatus
build_merge(Filter *out, const QfHeader *start, const Filter *a, const Filter *b)
{
	QfHeader	h = *start;

	for (;;)
	{
		uint8_t    *value;
		QfHeader	grown;
		QfStatus	status;

		h.count = 0;
		value = xmalloc(qf_value_bytes(&h));
		qf_init(value, &h, NULL);
		status = qf_merge(value, &h, a->value, &a->header,
						  b ? b->value : NULL, b ? &b->header : NULL);
		if (status == QF_OK)
		{
			qf_write_header(value, &h);
			out->value = value;
			out->header = h;
			return QF_OK;
		}
		free(value);
		if (status != QF_ERR_FULL)
			return status;
		h.count = 0;
		status = qf_grown_header(&h, &grown);
		if (status != QF_OK)
			return status;
		h = grown;
	}
}

/* One copy of fingerprint in f, growing f as needed; header written. */
static QfStatus
filter_add(Filter *f, uint64_t fingerprint)
{
	QfStatus	status;

	while ((status = qf_insert(f->value, &f->header, fingerprint)) == QF_ERR_FULL)
	{
		QfHeader	next;
		Filter		grown;

		status = qf_grown_header(&f->header, &next);
		if (status != QF_OK)
			return status;
		status = build_merge(&grown, &next, f, NULL);
		if (status != QF_OK)
			return status;
		FUZZ_CHECK(grown.header.count == f->header.count);
		FUZZ_CHECK(grown.header.home_blocks >= next.home_blocks);
		FUZZ_CHECK(qf_compatible(&grown.header, &f->header));
		free(f->value);
		*f = grown;
	}
	if (status == QF_OK)
		qf_write_header(f->value, &f->header);
	return status;
}

/* ---------------------------------------------------------------------
 * Validator mode
 * ---------------------------------------------------------------------
 */
/* bloom.h's body sum, apart from the core (fuzz_check.h). */
#define slow_body_sum(value, len) reference_body_sum((value), (len), QF_HEADER_SIZE)

/*
 * Both checks made right (version 2: the body check too), so that damage
 * reaches the slot invariants.
 */
static void
store_checksum(uint8_t *value, size_t len)
{
	uint8_t		covered[60];
	uint32_t	sum;

	if (value[2] >= 2)
	{
		uint32_t	body = slow_body_sum(value, len);

		for (int i = 0; i < 4; i++)
			value[60 + i] = (uint8_t) (body >> (8 * i));
	}
	memcpy(covered, value, 56);
	memcpy(covered + 56, value + 60, 4);
	sum = (uint32_t) (value[2] == 1 ? XXH3_64bits(value, 56)
					  : XXH3_64bits(covered, sizeof(covered)));
	for (int i = 0; i < 4; i++)
		value[56 + i] = (uint8_t) (sum >> (8 * i));
}

/* Facts about a refusal, whatever the bytes were. */
static void
check_rejection(const uint8_t *value, size_t len, QfStatus status)
{
	QfHeader	header;
	QfStatus	header_status = qf_read_header(value, len, &header);

	FUZZ_CHECK((status >= QF_ERR_TRUNCATED && status <= QF_ERR_COUNT) ||
			   status == QF_ERR_BODY_CHECKSUM);
	/* Compared as pointers: a strcmp would teach libFuzzer a useless word. */
	FUZZ_CHECK(qf_status_message(status) != qf_status_message((QfStatus) -1));
	if (len < QF_HEADER_SIZE)
		FUZZ_CHECK(status == QF_ERR_TRUNCATED);

	/* qf_validate is qf_read_header plus the padding and the slots. */
	if (header_status != QF_OK)
		FUZZ_CHECK(status == header_status);
	else
	{
		bool		padding_set = false;

		FUZZ_CHECK(len == qf_value_bytes(&header));
		for (size_t i = len - QF_TAIL_PADDING; i < len; i++)
			padding_set |= value[i] != 0;
		FUZZ_CHECK(status == QF_ERR_RESERVED || status == QF_ERR_SLOTS ||
				   status == QF_ERR_COUNT || status == QF_ERR_BODY_CHECKSUM);
		if (status == QF_ERR_BODY_CHECKSUM)
			FUZZ_CHECK(header.version >= 2 && slow_body_sum(value, len) != header.body_check);
		FUZZ_CHECK((status == QF_ERR_RESERVED) == padding_set);
	}
}

/* The decoded header of an accepted value keeps the format's promises. */
static void
check_header(const uint8_t *value, size_t len, const QfHeader *h)
{
	uint8_t		rewritten[QF_HEADER_SIZE];
	QfHeader	again;
	QfHeader	base;

	FUZZ_CHECK(h->version >= QF_FORMAT_VERSION_MIN && h->version <= QF_FORMAT_VERSION);
	FUZZ_CHECK(h->version < 2 || h->body_check == slow_body_sum(value, len));
	FUZZ_CHECK(h->r <= QF_MAX_R);
	FUZZ_CHECK(h->identity.kind <= BF_KIND_LAST);
	FUZZ_CHECK(h->identity.kind == BF_KIND_OTHER || h->identity.tag == 0);
	FUZZ_CHECK(h->identity.kind == BF_KIND_OTHER ||
			   (h->identity.env_encoding == 0 && h->identity.env_locale == 0));
	FUZZ_CHECK(h->identity.kind != BF_KIND_NONE || h->count == 0);
	FUZZ_CHECK(h->capacity >= 1 && h->fpr > 0.0 && h->fpr <= 0.5);
	FUZZ_CHECK(h->home_blocks >= 1 && h->total_blocks > h->home_blocks);
	FUZZ_CHECK(h->count <= (uint64_t) h->home_blocks * QF_BLOCK_SLOTS);
	FUZZ_CHECK(len == qf_value_bytes(h));

	/* The size is the sizing's, doubled some times: the universe is its. */
	FUZZ_CHECK(qf_size_for(h->capacity, h->fpr, &base) == QF_OK);
	base.capacity = h->capacity;
	FUZZ_CHECK(qf_universe(&base) == qf_universe(h));
	FUZZ_CHECK(h->home_blocks >= base.home_blocks && h->r <= base.r);

	FUZZ_CHECK(qf_read_header(value, len, &again) == QF_OK);
	FUZZ_CHECK(headers_equal(h, &again));
	qf_encode_header(rewritten, h);
	FUZZ_CHECK(memcmp(rewritten, value, QF_HEADER_SIZE) == 0);
}

/* Counts and membership of fingerprints against the enumeration. */
static void
check_lookups(const uint8_t *value, const QfHeader *h, const uint64_t *fps,
			  size_t n, uint64_t digest)
{
	uint64_t	universe = qf_universe(h);

	for (size_t i = 0; i < n;)
	{
		size_t		j = i;

		while (j < n && fps[j] == fps[i])
			j++;
		FUZZ_CHECK(qf_count(value, h, fps[i]) == j - i);
		FUZZ_CHECK(qf_contains(value, h, fps[i]));
		/* the neighbours, present or not, are counted exactly too */
		if (fps[i] + 1 < universe)
		{
			uint64_t	c = copies_in(fps, n, fps[i] + 1);

			FUZZ_CHECK(qf_count(value, h, fps[i] + 1) == c);
			FUZZ_CHECK(qf_contains(value, h, fps[i] + 1) == (c > 0));
		}
		if (fps[i] > 0)
		{
			uint64_t	c = copies_in(fps, n, fps[i] - 1);

			FUZZ_CHECK(qf_count(value, h, fps[i] - 1) == c);
			FUZZ_CHECK(qf_contains(value, h, fps[i] - 1) == (c > 0));
		}
		i = j;
	}

	/* fingerprints of hashes derived from the input, and the ends */
	for (uint64_t i = 0; i < PROBES + 2; i++)
	{
		uint64_t	key = digest + i;
		uint64_t	fp = i == PROBES ? 0 : i == PROBES + 1 ? universe - 1 :
			qf_fingerprint(h, bf_hash(&key, sizeof(key), h->seed));
		uint64_t	c = copies_in(fps, n, fp);

		FUZZ_CHECK(fp < universe);
		FUZZ_CHECK(qf_count(value, h, fp) == c);
		FUZZ_CHECK(qf_contains(value, h, fp) == (c > 0));
	}
}

/* Each copy of fps[] twice, as a merge of the value with itself holds. */
static void
check_doubled(const Filter *merged, const uint64_t *fps, size_t n)
{
	uint64_t   *got = (uint64_t *) (void *) xmalloc((2 * n + 1) * sizeof(uint64_t));
	size_t		m;

	check_valid(merged->value, &merged->header);
	FUZZ_CHECK(merged->header.count == 2 * (uint64_t) n);
	m = enumerate(merged->value, &merged->header, got, 2 * n);
	FUZZ_CHECK(m == 2 * n);
	for (size_t i = 0; i < m; i++)
		FUZZ_CHECK(got[i] == fps[i / 2]);
	free(got);
}

/* The same fingerprints, in a filter of another size. */
static void
check_same_fingerprints(const Filter *f, const uint64_t *fps, size_t n)
{
	uint64_t   *got = (uint64_t *) (void *) xmalloc((n + 1) * sizeof(uint64_t));

	check_valid(f->value, &f->header);
	FUZZ_CHECK(f->header.count == n);
	FUZZ_CHECK(enumerate(f->value, &f->header, got, n) == n);
	FUZZ_CHECK(n == 0 || memcmp(got, fps, n * sizeof(uint64_t)) == 0);
	free(got);
}

/* Remove one copy of fp on a copy, check, put it back: the same bytes. */
static void
check_remove_reinsert(const uint8_t *value, size_t len, const QfHeader *h,
					  uint8_t *copy, uint64_t fp, uint64_t copies)
{
	QfHeader	mine = *h;

	memcpy(copy, value, len);
	FUZZ_CHECK(qf_remove(copy, &mine, fp));
	FUZZ_CHECK(mine.count == h->count - 1);
	FUZZ_CHECK(qf_count(copy, &mine, fp) == copies - 1);
	FUZZ_CHECK(qf_contains(copy, &mine, fp) == (copies > 1));
	qf_write_header(copy, &mine);
	check_valid(copy, &mine);

	FUZZ_CHECK(qf_insert(copy, &mine, fp) == QF_OK);
	FUZZ_CHECK(mine.count == h->count);
	FUZZ_CHECK(qf_count(copy, &mine, fp) == copies);
	qf_write_header(copy, &mine);
	FUZZ_CHECK(memcmp(copy, value, len) == 0);
}

/* Insert a fingerprint on a copy and remove it again. */
static void
check_insert_remove(const uint8_t *value, size_t len, const QfHeader *h,
					uint8_t *copy, uint64_t fp, uint64_t copies)
{
	QfHeader	mine = *h;
	QfStatus	status;

	memcpy(copy, value, len);
	status = qf_insert(copy, &mine, fp);
	if (status != QF_OK)
	{
		/* a refused insert writes nothing; only the buffer's room refuses */
		FUZZ_CHECK(status == QF_ERR_FULL);
		FUZZ_CHECK(mine.count == h->count);
		FUZZ_CHECK(memcmp(copy, value, len) == 0);
		return;
	}
	FUZZ_CHECK(mine.count == h->count + 1);
	FUZZ_CHECK(qf_count(copy, &mine, fp) == copies + 1);
	if (mine.identity.kind == BF_KIND_NONE)
		mine.identity.kind = BF_KIND_NUMBER; /* as the glue does on a first add */
	qf_write_header(copy, &mine);
	check_valid(copy, &mine);

	FUZZ_CHECK(qf_remove(copy, &mine, fp));
	FUZZ_CHECK(qf_count(copy, &mine, fp) == copies);
	mine.identity.kind = h->identity.kind;
	qf_write_header(copy, &mine);
	FUZZ_CHECK(memcmp(copy, value, len) == 0);
}

/* Everything the glue may do with a value that qf_validate accepted. */
static void
exercise_valid(const uint8_t *value, size_t len, const QfHeader *h)
{
	Filter		self = {(uint8_t *) value, *h};
	uint64_t	digest = XXH3_64bits(value, len);
	uint64_t   *fps;
	uint8_t    *copy;
	size_t		n;
	size_t		distinct;
	double		estimate;
	QfHeader	start;
	QfStatus	status;
	Filter		out;

	check_header(value, len, h);
	FUZZ_CHECK(qf_compatible(h, h));

	fps = (uint64_t *) (void *) xmalloc((h->count + 1) * sizeof(uint64_t));
	n = enumerate(value, h, fps, h->count);
	FUZZ_CHECK(n == h->count);
	distinct = distinct_in(fps, n);
	FUZZ_CHECK(qf_distinct(value, h) == distinct);
	FUZZ_CHECK(distinct <= h->count);
	estimate = qf_estimated_fpr(h, distinct);
	FUZZ_CHECK(estimate >= 0.0 && estimate <= 1.0);
	if (distinct == 0)
		FUZZ_CHECK(estimate == 0.0);
	check_lookups(value, h, fps, n, digest);

	/* the fingerprints reversed, and each xor the digest, sort back */
	{
		uint64_t   *shuffled = (uint64_t *) (void *) xmalloc((n + 1) * sizeof(uint64_t));
		uint64_t   *mixed = (uint64_t *) (void *) xmalloc((n + 1) * sizeof(uint64_t));

		for (size_t i = 0; i < n; i++)
		{
			shuffled[i] = fps[n - 1 - i];
			mixed[i] = fps[i] ^ digest;
		}
		check_sort(shuffled, n);
		FUZZ_CHECK(n == 0 || memcmp(shuffled, fps, n * sizeof(uint64_t)) == 0);
		check_sort(mixed, n);
		free(shuffled);
		free(mixed);
	}

	/* remove and put back: the first, the last, and some from the input */
	copy = xmalloc(len);
	for (int pick = 0; pick < REMOVE_PICKS && n > 0; pick++)
	{
		size_t		i = pick == 0 ? 0 : pick == 1 ? n - 1 :
			(size_t) ((digest >> (pick * 7)) % n);

		check_remove_reinsert(value, len, h, copy, fps[i], copies_in(fps, n, fps[i]));
	}

	/* a fingerprint from the input, and one next to a stored one */
	{
		uint64_t	key = ~digest;
		uint64_t	fp = qf_fingerprint(h, bf_hash(&key, sizeof(key), h->seed));

		check_insert_remove(value, len, h, copy, fp, copies_in(fps, n, fp));
		if (n > 0)
		{
			fp = fps[digest % n];
			check_insert_remove(value, len, h, copy, fp, copies_in(fps, n, fp));
			if (fp + 1 < qf_universe(h))
				check_insert_remove(value, len, h, copy, fp + 1,
									copies_in(fps, n, fp + 1));
		}
	}
	free(copy);

	/* merged with itself: every fingerprint twice, or past the limit */
	status = qf_header_for_count(h, 2 * h->count, &start);
	FUZZ_CHECK(status == QF_OK || status == QF_ERR_LIMIT);
	if (status == QF_OK)
	{
		FUZZ_CHECK(qf_compatible(h, &start));
		status = build_merge(&out, &start, &self, &self);
		FUZZ_CHECK(status == QF_OK || status == QF_ERR_LIMIT);
		if (status == QF_OK)
		{
			check_doubled(&out, fps, n);
			free(out.value);
		}
	}

	/* the smallest size the value fits, and the next size up */
	FUZZ_CHECK(qf_header_for_count(h, h->count, &start) == QF_OK);
	FUZZ_CHECK(start.home_blocks <= h->home_blocks);
	FUZZ_CHECK(build_merge(&out, &start, &self, NULL) == QF_OK);
	check_same_fingerprints(&out, fps, n);
	if (out.header.home_blocks == h->home_blocks)
		FUZZ_CHECK(memcmp(out.value, value, len) == 0);
	free(out.value);

	status = qf_grown_header(h, &start);
	FUZZ_CHECK(status == QF_OK || status == QF_ERR_LIMIT);
	if (status == QF_OK)
	{
		FUZZ_CHECK(start.home_blocks == 2 * h->home_blocks && start.r == h->r - 1);
		FUZZ_CHECK(qf_universe(&start) == qf_universe(h));
		/* LIMIT: copies bunched at the end outgrow the spare slots */
		status = build_merge(&out, &start, &self, NULL);
		FUZZ_CHECK(status == QF_OK || status == QF_ERR_LIMIT);
		if (status == QF_OK)
		{
			check_same_fingerprints(&out, fps, n);
			free(out.value);
		}
	}
	else
		FUZZ_CHECK(h->r == 0);
	free(fps);
}

/* One validation of one byte string, with everything that follows from it. */
static void
fuzz_value(const uint8_t *data, size_t len)
{
	uint8_t    *value = xmalloc(len);
	QfHeader	header;
	QfHeader	again;
	QfStatus	status;

	/* an exact-size heap copy, so that ASan sees any read past its end */
	memcpy(value, data, len);
	status = qf_validate(value, len, &header);
	FUZZ_CHECK(qf_validate(value, len, &again) == status);
	if (status == QF_OK)
	{
		FUZZ_CHECK(headers_equal(&header, &again));
		exercise_valid(value, len, &header);
	}
	else
		check_rejection(value, len, status);
	FUZZ_CHECK(memcmp(value, data, len) == 0);	/* nothing wrote to it */
	free(value);
}

static void
validator_mode(const uint8_t *data, size_t len)
{
	uint8_t    *repaired;
	QfHeader	header;

	fuzz_value(data, len);
	if (len < QF_HEADER_SIZE)
		return;
	repaired = xmalloc(len);
	memcpy(repaired, data, len);
	store_checksum(repaired, len);
	if (qf_validate(data, len, &header) == QF_OK)
		FUZZ_CHECK(memcmp(repaired, data, len) == 0);
	else
		fuzz_value(repaired, len);
	free(repaired);
}

/* ---------------------------------------------------------------------
 * Operation-sequence mode
 * ---------------------------------------------------------------------
 */
typedef struct Input
{
	const uint8_t *data;
	size_t		size;
	size_t		pos;
} Input;

static uint8_t
next_byte(Input *in)
{
	return in->pos < in->size ? in->data[in->pos++] : (in->pos++, 0);
}

static uint32_t
next_u16(Input *in)
{
	uint32_t	lo = next_byte(in);

	return lo | (uint32_t) next_byte(in) << 8;
}

/* The exact multiset, by key and by fingerprint. */
typedef struct Model
{
	uint32_t	domain;
	uint64_t	universe;
	uint64_t	total;
	uint64_t	fp[MAX_DOMAIN];
	uint32_t	group[MAX_DOMAIN];	/* first key with the same fingerprint */
	uint64_t	truth[MAX_DOMAIN];
	uint64_t	group_truth[MAX_DOMAIN];	/* copies of group[k]'s fingerprint */
} Model;

static uint64_t
key_hash(uint64_t key)
{
	uint8_t		bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t) (key >> (8 * i));
	return bf_hash(bytes, sizeof(bytes), 0);
}

/* Keys by fingerprint, to find the keys that share one. */
typedef struct KeyFp
{
	uint64_t	fp;
	uint32_t	key;
} KeyFp;

static int
compare_key_fp(const void *a, const void *b)
{
	const KeyFp *x = a;
	const KeyFp *y = b;

	if (x->fp != y->fp)
		return (x->fp > y->fp) - (x->fp < y->fp);
	return (x->key > y->key) - (x->key < y->key);
}

static void
model_init(Model *m, uint32_t domain, const QfHeader *h)
{
	KeyFp		sorted[MAX_DOMAIN];

	memset(m, 0, sizeof(*m));
	m->domain = domain;
	m->universe = qf_universe(h);
	for (uint32_t k = 0; k < domain; k++)
	{
		m->fp[k] = qf_fingerprint(h, key_hash(k));
		FUZZ_CHECK(m->fp[k] < m->universe);
		sorted[k].fp = m->fp[k];
		sorted[k].key = k;
	}
	qsort(sorted, domain, sizeof(KeyFp), compare_key_fp);
	for (uint32_t i = 0; i < domain; i++)
		m->group[sorted[i].key] = i > 0 && sorted[i].fp == sorted[i - 1].fp ?
			m->group[sorted[i - 1].key] : sorted[i].key;
}

static void
model_add(Model *m, uint32_t k, uint64_t copies)
{
	m->truth[k] += copies;
	m->group_truth[m->group[k]] += copies;
	m->total += copies;
}

/* One key's count is exact: the copies of its fingerprint, so >= its own. */
static void
check_key(const Model *m, const Filter *f, uint32_t k)
{
	uint64_t	c = qf_count(f->value, &f->header, m->fp[k]);

	FUZZ_CHECK(c == m->group_truth[m->group[k]]);
	FUZZ_CHECK(c >= m->truth[k]);
	FUZZ_CHECK(qf_contains(f->value, &f->header, m->fp[k]) == (c > 0));
}

/*
 * The invariants that hold after every operation: the count, a valid
 * value, and every present key counted exactly (no false negative, no
 * undercount), as is the key the operation named, present or not.
 */
static void
check_state(const Model *m, const Filter *f, uint32_t touched)
{
	FUZZ_CHECK(f->header.count == m->total);
	FUZZ_CHECK(qf_universe(&f->header) == m->universe);
	check_valid(f->value, &f->header);
	for (uint32_t k = 0; k < m->domain; k++)
		if (m->truth[k] > 0)
			check_key(m, f, k);
	check_key(m, f, touched);
}

/* The cursor, qf_distinct and a fresh build agree with the multiset. */
static void
check_full(const Model *m, const Filter *f)
{
	uint64_t   *expected = (uint64_t *) (void *) xmalloc((m->total + 1) * sizeof(uint64_t));
	uint64_t   *got = (uint64_t *) (void *) xmalloc((m->total + 1) * sizeof(uint64_t));
	size_t		n = 0;
	size_t		distinct;
	size_t		len = qf_value_bytes(&f->header);
	double		estimate;
	QfHeader	h;
	Filter		fresh;
	Filter		copy;

	for (uint32_t k = 0; k < m->domain; k++)
		for (uint64_t c = 0; c < m->truth[k]; c++)
		{
			got[n] = key_hash(k);
			expected[n++] = m->fp[k];
		}
	FUZZ_CHECK(n == m->total);
	check_sort(got, n);			/* the hashes, as qfilter_agg sorts them */
	for (uint32_t k = 0; k < m->domain; k++)
	{
		check_key(m, f, k);
		FUZZ_CHECK(qf_fingerprint(&f->header, key_hash(k)) == m->fp[k]);
	}
	check_sort(expected, n);
	FUZZ_CHECK(enumerate(f->value, &f->header, got, n) == n);
	FUZZ_CHECK(n == 0 || memcmp(got, expected, n * sizeof(uint64_t)) == 0);
	distinct = distinct_in(expected, n);
	FUZZ_CHECK(qf_distinct(f->value, &f->header) == distinct);
	estimate = qf_estimated_fpr(&f->header, distinct);
	FUZZ_CHECK(estimate >= 0.0 && estimate <= 1.0);
	FUZZ_CHECK(n == 0 || estimate > 0.0);

	/* the same multiset built afresh at the same size: the same bytes */
	h = f->header;
	h.count = 0;
	fresh.value = xmalloc(len);
	qf_init(fresh.value, &h, NULL);
	FUZZ_CHECK(qf_build_sorted(fresh.value, &h, expected, n) == QF_OK);
	FUZZ_CHECK(h.count == n);
	qf_write_header(fresh.value, &h);
	FUZZ_CHECK(memcmp(fresh.value, f->value, len) == 0);
	free(fresh.value);

	/* at the smallest size it fits: a merge-copy and a fresh build agree */
	FUZZ_CHECK(qf_header_for_count(&f->header, n, &h) == QF_OK);
	FUZZ_CHECK(h.home_blocks <= f->header.home_blocks);
	FUZZ_CHECK(build_merge(&copy, &h, f, NULL) == QF_OK);
	check_valid(copy.value, &copy.header);
	FUZZ_CHECK(copy.header.count == n);
	h = copy.header;
	h.count = 0;
	len = qf_value_bytes(&h);
	fresh.value = xmalloc(len);
	qf_init(fresh.value, &h, NULL);
	FUZZ_CHECK(qf_build_sorted(fresh.value, &h, expected, n) == QF_OK);
	qf_write_header(fresh.value, &h);
	FUZZ_CHECK(memcmp(fresh.value, copy.value, len) == 0);
	free(fresh.value);
	free(copy.value);
	free(expected);
	free(got);
}

/*
 * An add the filter refused: QF_ERR_LIMIT and nothing else, the filter
 * left as it was (check_state sees to that).  That is when no larger size
 * holds the fingerprints (qfilter.h: "cannot grow"): no remainder bit is
 * left, or many copies of a fingerprint whose home slot is near the
 * end can need more spare slots than growth gives, before the limit.
 */
static void
check_refused_add(const Filter *f, QfStatus status)
{
	FUZZ_CHECK(status == QF_ERR_LIMIT);
	FUZZ_CHECK(f->header.count > 0);
}

static void
op_add(Model *m, Filter *f, uint32_t k)
{
	QfStatus	status = filter_add(f, m->fp[k]);

	if (status == QF_OK)
		model_add(m, k, 1);
	else
		check_refused_add(f, status);
}

/* Removes a copy of key k, or of the next present key; false if none. */
static bool
op_remove(Model *m, Filter *f, uint32_t k)
{
	for (uint32_t i = 0; i < m->domain; i++)
	{
		uint32_t	key = (k + i) % m->domain;

		if (m->truth[key] == 0)
			continue;
		FUZZ_CHECK(qf_remove(f->value, &f->header, m->fp[key]));
		qf_write_header(f->value, &f->header);
		m->truth[key]--;
		m->group_truth[m->group[key]]--;
		m->total--;
		return true;
	}
	return false;
}

/* A second filter of the same parameters, maybe grown, unioned into f. */
static void
op_union(Model *m, Filter *f, const QfHeader *params, Input *in)
{
	uint32_t	n = next_byte(in) % MAX_UNION_KEYS;
	uint32_t	grow = next_byte(in) % 4;
	uint64_t	b_truth[MAX_DOMAIN];
	QfHeader	start;
	Filter		b;
	Filter		out;
	QfStatus	status;

	memset(b_truth, 0, sizeof(b_truth));
	b.header = *params;
	for (uint32_t g = 0; g < grow; g++)
	{
		QfHeader	grown;

		if (qf_grown_header(&b.header, &grown) != QF_OK)
			break;
		b.header = grown;
	}
	b.value = xmalloc(qf_value_bytes(&b.header));
	qf_init(b.value, &b.header, NULL);
	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	k = next_u16(in) % m->domain;

		status = filter_add(&b, m->fp[k]);
		if (status == QF_OK)
			b_truth[k]++;
		else
			check_refused_add(&b, status);
	}
	check_valid(b.value, &b.header);
	FUZZ_CHECK(qf_compatible(&f->header, &b.header) && qf_compatible(&b.header, &f->header));

	status = qf_header_for_count(&f->header, f->header.count + b.header.count, &start);
	if (status == QF_OK)
		status = build_merge(&out, &start, f, &b);
	if (status == QF_OK)
	{
		FUZZ_CHECK(out.header.count == f->header.count + b.header.count);
		free(f->value);
		*f = out;
		for (uint32_t k = 0; k < m->domain; k++)
			model_add(m, k, b_truth[k]);
	}
	else
		FUZZ_CHECK(status == QF_ERR_LIMIT);	/* f is unchanged: check_state */
	free(b.value);
}

static void
ops_mode(const uint8_t *data, size_t size)
{
	static const double fprs[] = {0.5, 0.1, 0.01, 0.001};
	Input		in = {data, size, 0};
	uint64_t	capacity = 1 + next_u16(&in) % MAX_CAPACITY;
	double		fpr = fprs[next_byte(&in) % 4];
	uint32_t	domain = 1 + next_u16(&in) % MAX_DOMAIN;
	QfHeader	params;
	Filter		f;
	Model	   *m = (Model *) (void *) xmalloc(sizeof(Model));
	int			full_checks = 0;

	memset(&params, 0, sizeof(params));
	params.version = QF_FORMAT_VERSION;
	params.identity.kind = BF_KIND_NUMBER;
	params.capacity = capacity;
	params.fpr = fpr;
	FUZZ_CHECK(qf_size_for(capacity, fpr, &params) == QF_OK);
	f.header = params;
	f.value = xmalloc(qf_value_bytes(&f.header));
	qf_init(f.value, &f.header, NULL);
	model_init(m, domain, &f.header);
	check_state(m, &f, 0);

	for (int ops = 0; ops < MAX_OPS && in.pos < in.size; ops++)
	{
		uint8_t		op = next_byte(&in) % 8;
		uint32_t	k = 0;

		switch (op)
		{
			case 0:
			case 1:
				k = next_u16(&in) % domain;
				op_add(m, &f, k);
				break;
			case 2:
				{
					uint32_t	n;

					k = next_u16(&in) % domain;
					n = 1 + next_byte(&in);
					for (uint32_t i = 0; i < n; i++)
						op_add(m, &f, (k + i) % domain);
					break;
				}
			case 3:
			case 4:
				k = next_u16(&in) % domain;
				op_remove(m, &f, k);
				break;
			case 5:
				{
					uint32_t	n;

					k = next_u16(&in) % domain;
					n = 1 + next_byte(&in) % 64;
					for (uint32_t i = 0; i < n && op_remove(m, &f, k); i++)
						;
					break;
				}
			case 6:
				op_union(m, &f, &params, &in);
				break;
			default:
				if (full_checks++ < MAX_FULL_CHECKS)
					check_full(m, &f);
				break;
		}
		check_state(m, &f, k);
	}
	check_full(m, &f);
	free(f.value);
	free(m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		ops_mode(data + 1, size - 1);
	else
		validator_mode(data + 1, size - 1);
	return 0;
}
