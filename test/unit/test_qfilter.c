/*-------------------------------------------------------------------------
 *
 * test_qfilter.c
 *	  Unit and property tests of qfilter's pure core (qfilter.c): sizing and
 *	  space, the validator, canonical slots, growth and its limit, and random
 *	  add/remove/union sequences checked against an exact multiset after
 *	  every step: no false negatives, no undercount, a false-positive rate
 *	  at the target, and a value the validator accepts.
 *
 * Built with plain cc, no PostgreSQL.  Prints one line per check and a final
 * "N passed, N failed" line; exits non-zero when a check fails.
 *
 *-------------------------------------------------------------------------
 */
#include "qfilter.h"
#include "bloom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_check.h"


/* A growable filter, as the SQL glue keeps one. */
typedef struct Filter
{
	uint8_t    *value;
	QfHeader	header;
} Filter;

static uint64_t
key_hash(uint64_t key)
{
	uint8_t		bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t) (key >> (8 * i));
	return bf_hash(bytes, sizeof(bytes), 0);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void
filter_new(Filter *f, uint64_t capacity, double fpr)
{
	memset(&f->header, 0, sizeof(f->header));
	f->header.version = QF_FORMAT_VERSION;
	f->header.identity.kind = BF_KIND_NUMBER;
	f->header.capacity = capacity;
	f->header.fpr = fpr;
	if (qf_size_for(capacity, fpr, &f->header) != QF_OK)
		abort();
	f->value = malloc(qf_value_bytes(&f->header));
	qf_init(f->value, &f->header, NULL);
}

/* Rebuilds f into the next size up, as the glue does on QF_ERR_FULL. */
static QfStatus
filter_grow(Filter *f)
{
	QfHeader	grown;
	uint8_t    *value;
	QfStatus	status = qf_grown_header(&f->header, &grown);

	if (status != QF_OK)
		return status;
	grown.count = 0;
	value = malloc(qf_value_bytes(&grown));
	qf_init(value, &grown, NULL);
	status = qf_merge(value, &grown, f->value, &f->header, NULL, NULL);
	if (status != QF_OK)
	{
		free(value);
		return status;
	}
	free(f->value);
	f->value = value;
	f->header = grown;
	return QF_OK;
}

static QfStatus
filter_add(Filter *f, uint64_t key)
{
	uint64_t	fingerprint = qf_fingerprint(&f->header, key_hash(key));
	QfStatus	status;

	while ((status = qf_insert(f->value, &f->header, fingerprint)) == QF_ERR_FULL)
		if ((status = filter_grow(f)) != QF_OK)
			return status;
	qf_encode_header(f->value, &f->header);	/* its body check: filter_finish */
	return status;
}

/* The value as a producer leaves it: its body check computed (one pass). */
static void
filter_finish(Filter *f)
{
	qf_write_header(f->value, &f->header);
	f->header.version = QF_FORMAT_VERSION;
}

static bool
filter_remove(Filter *f, uint64_t key)
{
	bool		removed = qf_remove(f->value, &f->header, qf_fingerprint(&f->header, key_hash(key)));

	qf_encode_header(f->value, &f->header);
	return removed;
}

static uint64_t
filter_count(const Filter *f, uint64_t key)
{
	return qf_count(f->value, &f->header, qf_fingerprint(&f->header, key_hash(key)));
}

static bool
filter_valid(Filter *f)
{
	QfHeader	header;

	filter_finish(f);
	return qf_validate(f->value, qf_value_bytes(&f->header), &header) == QF_OK;
}

static void
filter_union(Filter *out, const Filter *a, const Filter *b)
{
	*out = *a;
	if (qf_header_for_count(&a->header, a->header.count + b->header.count, &out->header) != QF_OK)
		abort();
	for (;;)
	{
		out->value = malloc(qf_value_bytes(&out->header));
		qf_init(out->value, &out->header, NULL);
		if (qf_merge(out->value, &out->header, a->value, &a->header, b->value, &b->header) == QF_OK)
			break;
		free(out->value);
		{
			QfHeader	grown;

			out->header.count = 0;
			if (qf_grown_header(&out->header, &grown) != QF_OK)
				abort();
			out->header = grown;
			out->header.count = 0;
		}
	}
	qf_write_header(out->value, &out->header);
}

static void
test_sizing(void)
{
	static const uint64_t capacities[] = {1000, 10000, 100000, 1000000, 3000000, 12345678};
	bool		all_small = true;
	QfHeader	h;
	char		what[160];

	for (size_t i = 0; i < sizeof(capacities) / sizeof(capacities[0]); i++)
	{
		double		bits;

		memset(&h, 0, sizeof(h));
		if (qf_size_for(capacities[i], 0.01, &h) != QF_OK)
			abort();
		bits = 8.0 * (double) qf_value_bytes(&h) / (double) capacities[i];
		printf("# capacity %llu, fpr 0.01: r %d, %u+%u blocks, %.2f bits per key\n",
			   (unsigned long long) capacities[i], h.r, h.home_blocks,
			   h.total_blocks - h.home_blocks, bits);
		if (bits > 11.0 && capacities[i] >= 100000)
			all_small = false;
		h.capacity = capacities[i];
		h.fpr = 0.01;
		if ((double) capacities[i] / (double) qf_universe(&h) > 0.01)
			all_small = false;
	}
	check(all_small, "sizing: at most 11 bits per key at fpr 0.01 from 100k keys, rate at capacity <= target");

	memset(&h, 0, sizeof(h));
	check(qf_size_for(0, 0.01, &h) == QF_ERR_CAPACITY, "sizing: capacity 0 refused");
	check(qf_size_for(10, 0.0, &h) == QF_ERR_FPR && qf_size_for(10, 0.6, &h) == QF_ERR_FPR &&
		  qf_size_for(10, NAN, &h) == QF_ERR_FPR, "sizing: fpr outside (0, 0.5] refused");
	check(qf_size_for(1000000, 1e-18, &h) == QF_ERR_FPR_UNREACHABLE,
		  "sizing: a rate 63-bit fingerprints cannot reach is refused");
	check(qf_size_for(UINT64_C(1) << 40, 0.01, &h) == QF_ERR_TOO_LARGE,
		  "sizing: past the value size cap refused");
	snprintf(what, sizeof(what), "sizing: %s", qf_status_message(QF_ERR_LIMIT));
	check(strlen(what) > 20, "status messages exist");
}

/* Random adds and removes of keys 0..domain-1 against exact counts. */
static void
test_random_sequences(void)
{
	const uint64_t domain = 4000;
	uint64_t   *truth = calloc(domain, sizeof(uint64_t));
	Filter		f;
	bool		no_false_negative = true,
				no_undercount = true,
				always_valid = true,
				remove_reported = true;
	uint64_t	total = 0;

	filter_new(&f, 1000, 0.01);
	for (int step = 0; step < 200000; step++)
	{
		uint64_t	key = rng() % domain;
		int			op = (int) (rng() % 10);

		if (op < 6 && total < 1900)
		{
			if (filter_add(&f, key) != QF_OK)
				abort();
			truth[key]++;
			total++;
		}
		else if (truth[key] > 0)
		{
			remove_reported &= filter_remove(&f, key);
			truth[key]--;
			total--;
		}
		if (step % 997 == 0)
		{
			always_valid &= filter_valid(&f);
			for (uint64_t k = 0; k < domain; k++)
			{
				uint64_t	c = filter_count(&f, k);

				if (truth[k] > 0 && !qf_contains(f.value, &f.header, qf_fingerprint(&f.header, key_hash(k))))
					no_false_negative = false;
				if (c < truth[k])
					no_undercount = false;
			}
		}
	}
	check(no_false_negative, "random add/remove: every key with count > 0 is contained");
	check(no_undercount, "random add/remove: no count below the truth");
	check(always_valid, "random add/remove: the validator accepts every state");
	check(remove_reported, "random add/remove: removing a present key reports it removed");
	check(f.header.count == total, "random add/remove: count equals adds minus removes");
	printf("# after random sequences: %llu keys in %u home blocks, r %d\n",
		   (unsigned long long) total, f.header.home_blocks, f.header.r);
	free(f.value);
	free(truth);
}

/* Unions: equal to adding both sides' keys into one filter, byte for byte. */
static void
test_union(void)
{
	Filter		a,
				b,
				u,
				direct;
	bool		valid;

	filter_new(&a, 5000, 0.01);
	filter_new(&b, 5000, 0.01);
	filter_new(&direct, 5000, 0.01);
	for (uint64_t k = 0; k < 3000; k++)
	{
		filter_add(&a, k);
		filter_add(&direct, k);
	}
	for (uint64_t k = 2000; k < 6000; k++)
	{
		filter_add(&b, k);
		filter_add(&direct, k);
	}
	filter_union(&u, &a, &b);
	valid = filter_valid(&u);
	check(valid, "union: valid");
	check(u.header.count == 7000, "union: counts add up (multiset sum)");
	check(filter_count(&u, 2500) >= 2 && filter_count(&u, 10) >= 1 && filter_count(&u, 5999) >= 1,
		  "union: keys of both sides, shared ones counted twice");
	filter_finish(&direct);
	check(u.header.home_blocks == direct.header.home_blocks &&
		  memcmp(u.value, direct.value, qf_value_bytes(&u.header)) == 0,
		  "union: same bytes as adding every key to one filter (grown alike)");
	free(a.value);
	free(b.value);
	free(u.value);
	free(direct.value);
}

/*
 * A merge in small steps, into a buffer of garbage that it clears itself,
 * gives the bytes of a merge in one go: the union's cancellable path.
 */
static void
test_union_in_steps(void)
{
	Filter		a,
				b,
				whole;
	QfHeader	header;
	QfMerge		m;
	uint8_t    *value;
	bool		done = false;
	int			steps = 0;
	QfStatus	status = QF_OK;

	filter_new(&a, 5000, 0.01);
	filter_new(&b, 5000, 0.01);
	for (uint64_t k = 0; k < 4000; k++)
		filter_add(&a, k * 7);
	for (uint64_t k = 0; k < 4000; k++)
		filter_add(&b, k * 11);
	filter_union(&whole, &a, &b);
	header = whole.header;
	header.count = 0;
	value = malloc(qf_value_bytes(&header));
	memset(value, 0xAB, qf_value_bytes(&header));
	qf_merge_start(&m, a.value, &a.header, b.value, &b.header, true);
	while (!done && status == QF_OK)
	{
		status = qf_merge_step(&m, value, &header, a.value, &a.header, b.value, &b.header,
							   37, &done);
		steps++;
	}
	qf_write_header(value, &header);
	check(status == QF_OK && steps > 100 && header.count == whole.header.count &&
		  memcmp(value, whole.value, qf_value_bytes(&header)) == 0,
		  "union in steps of 37 units: the bytes of the union in one go");
	free(value);
	free(a.value);
	free(b.value);
	free(whole.value);
}

/* The slots depend on the multiset only, not on the order of operations. */
static void
test_canonical(void)
{
	Filter		forward,
				backward,
				churned;

	filter_new(&forward, 2000, 0.01);
	filter_new(&backward, 2000, 0.01);
	filter_new(&churned, 2000, 0.01);
	for (uint64_t k = 0; k < 1500; k++)
		filter_add(&forward, k);
	for (uint64_t k = 1500; k-- > 0;)
		filter_add(&backward, k);
	for (uint64_t k = 0; k < 1800; k++)
		filter_add(&churned, k);
	for (uint64_t k = 1500; k < 1800; k++)
		filter_remove(&churned, k);
	filter_finish(&forward);
	filter_finish(&backward);
	filter_finish(&churned);
	check(memcmp(forward.value, backward.value, qf_value_bytes(&forward.header)) == 0,
		  "canonical: adding in another order gives the same bytes");
	check(memcmp(forward.value, churned.value, qf_value_bytes(&forward.header)) == 0,
		  "canonical: adding extra keys and removing them gives the same bytes");
	free(forward.value);
	free(backward.value);
	free(churned.value);
}

/*
 * Past capacity the filter doubles, exactly, for as long as its
 * fingerprints have remainder bits left; then it stops (QF_ERR_LIMIT).
 */
static void
test_growth(void)
{
	Filter		f;
	uint32_t	home_before;
	QfStatus	status = QF_OK;
	uint64_t	k;
	bool		all_found = true;

	filter_new(&f, 1000, 0.01);
	home_before = f.header.home_blocks;
	for (k = 0; k < 2000; k++)
		if ((status = filter_add(&f, k)) != QF_OK)
			break;
	check(status == QF_OK && f.header.home_blocks == 2 * home_before,
		  "growth: 2x capacity fits after one doubling");
	for (uint64_t j = 0; j < 2000; j++)
		all_found &= filter_count(&f, j) >= 1;
	check(all_found && filter_valid(&f), "growth: every key found after growing, value valid");
	for (k = 2000; k < 10000; k++)
		if ((status = filter_add(&f, k)) != QF_OK)
			break;
	all_found = true;
	for (uint64_t j = 0; j < 10000; j++)
		all_found &= filter_count(&f, j) >= 1;
	check(status == QF_OK && all_found && filter_valid(&f) && f.header.count == 10000,
		  "growth: 10x capacity still grows, exactly: every key found, value valid");
	free(f.value);

	filter_new(&f, 1000, 0.5);
	for (k = 0; k < 1000000; k++)
		if ((status = filter_add(&f, k)) != QF_OK)
			break;
	check(status == QF_ERR_LIMIT && f.header.r == 0 && filter_valid(&f),
		  "growth: stops with QF_ERR_LIMIT once no remainder bit is left");
	free(f.value);
}

/* Removing every key of a 1M-key filter leaves an empty one. */
static void
test_remove_all(void)
{
	const uint64_t n = 1000000;
	Filter		f,
				empty;
	bool		all_removed = true,
				counts_zero = true;

	filter_new(&f, n, 0.01);
	filter_new(&empty, n, 0.01);
	for (uint64_t k = 0; k < n; k++)
		filter_add(&f, k * 7919);
	for (uint64_t k = 0; k < n; k++)
		all_removed &= filter_remove(&f, k * 7919);
	for (uint64_t k = 0; k < n; k += 97)
		counts_zero &= filter_count(&f, k * 7919) == 0;
	check(all_removed, "remove all 1M: each remove found its key");
	check(counts_zero && f.header.count == 0, "remove all 1M: every count is 0");
	filter_finish(&f);
	check(memcmp(f.value, empty.value, qf_value_bytes(&f.header)) == 0,
		  "remove all 1M: the filter equals an empty one");
	free(f.value);
	free(empty.value);
}

/* Measured rate of absent keys in a filter filled to capacity. */
static void
test_false_positive_rate(void)
{
	const uint64_t n = 200000;
	const double fpr = 0.01;
	Filter		f;
	uint64_t	positives = 0;
	const uint64_t probes = 2000000;
	char		what[160];

	filter_new(&f, n, fpr);
	for (uint64_t k = 0; k < n; k++)
		filter_add(&f, k);
	for (uint64_t k = 0; k < probes; k++)
		positives += filter_count(&f, n + 1 + k) > 0;
	snprintf(what, sizeof(what),
			 "rate: %.5f measured at capacity, target %.2f, estimate %.5f",
			 (double) positives / (double) probes, fpr,
			 qf_estimated_fpr(&f.header, qf_distinct(f.value, &f.header)));
	check((double) positives / (double) probes <= fpr, what);
	free(f.value);
}

/* The validator: damaged values are refused where it matters. */
static void
test_validator(void)
{
	Filter		f;
	size_t		len;
	uint8_t    *copy;
	QfHeader	h;
	int			refused = 0;
	int			tries = 0;

	filter_new(&f, 500, 0.01);
	for (uint64_t k = 0; k < 400; k++)
		filter_add(&f, k);
	filter_finish(&f);
	len = qf_value_bytes(&f.header);
	copy = malloc(len);
	check(qf_validate(f.value, len, &h) == QF_OK && h.count == 400, "validator: a good value passes");
	check(qf_validate(f.value, len - 1, &h) != QF_OK, "validator: a short value is refused");
	check(qf_validate(f.value, 10, &h) == QF_ERR_TRUNCATED, "validator: a truncated header is refused");

	memcpy(copy, f.value, len);
	copy[24] ^= 1;				/* capacity */
	check(qf_validate(copy, len, &h) == QF_ERR_CHECKSUM, "validator: a header bit flip fails the checksum");

	/* every bit of the metadata words and offsets, one at a time */
	for (uint32_t b = 0; b < f.header.total_blocks; b++)
		for (int bit = 0; bit < QF_BLOCK_FIXED * 8; bit++)
		{
			size_t		byte = QF_HEADER_SIZE + b * (QF_BLOCK_FIXED + 8 * (size_t) f.header.r) + bit / 8;

			memcpy(copy, f.value, len);
			copy[byte] ^= (uint8_t) (1 << (bit % 8));
			tries++;
			refused += qf_validate(copy, len, &h) != QF_OK;
		}
	check(refused == tries, "validator: every metadata bit flip is refused");

	memcpy(copy, f.value, len);
	copy[len - 1] = 1;
	check(qf_validate(copy, len, &h) == QF_ERR_RESERVED, "validator: nonzero tail padding is refused");

	/* remainders: structure allows any; the body check refuses every flip */
	refused = tries = 0;
	for (uint32_t b = 0; b < f.header.total_blocks; b++)
		for (size_t at = QF_BLOCK_FIXED; at < QF_BLOCK_FIXED + 8 * (size_t) f.header.r; at += 3)
		{
			size_t		byte = QF_HEADER_SIZE + b * (QF_BLOCK_FIXED + 8 * (size_t) f.header.r) + at;

			memcpy(copy, f.value, len);
			copy[byte] ^= 0x10;
			tries++;
			refused += qf_validate(copy, len, &h) == QF_ERR_BODY_CHECKSUM;
		}
	check(refused == tries, "validator: every remainder flip fails the body check (version 2)");

	/* version 1 (1.0): no body check, read as before; written as version 2 */
	{
		QfHeader	v1 = f.header;

		memcpy(copy, f.value, len);
		v1.version = 1;
		v1.body_check = 0;
		qf_encode_header(copy, &v1);
		check(qf_validate(copy, len, &h) == QF_OK && h.version == 1,
			  "validator: a version 1 value still passes");
		copy[QF_HEADER_SIZE + QF_BLOCK_FIXED] ^= 0x10;
		check(qf_validate(copy, len, &h) != QF_ERR_BODY_CHECKSUM,
			  "validator: version 1 has no body check: a remainder flip meets the slot invariants only");
		copy[QF_HEADER_SIZE + QF_BLOCK_FIXED] ^= 0x10;
		qf_write_header(copy, &h);
		check(qf_validate(copy, len, &h) == QF_OK && h.version == 2,
			  "validator: a version 1 value written again is version 2, with its check");
	}
	free(copy);
	free(f.value);
}

int
main(void)
{
	test_sizing();
	test_validator();
	test_canonical();
	test_growth();
	test_union();
	test_union_in_steps();
	test_random_sequences();
	test_false_positive_rate();
	test_remove_all();
	return unit_result();
}
