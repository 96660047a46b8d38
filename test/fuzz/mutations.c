/*-------------------------------------------------------------------------
 *
 * mutations.c
 *	  The damaged-byte check (issue 45): every single-byte mutation of
 *	  1,000 random positions of a bloom (blocked layout), of a growing
 *	  chain (several segments) and of a qfilter is refused by the one
 *	  validator of its type.  Each position gets all 255 other byte values,
 *	  so 255,000 mutations per value; the header's positions are caught by
 *	  its checksum (a 2^-32 chance each to slip through), the body's by the
 *	  body check, exactly (bloom.h, "The body check").
 *
 *		mutations			prints "ok - ..." / "not ok - ..." lines
 *
 * The values are made through the core's producers (bf_filter_add,
 * bf_filter_add_growing, qf_insert and qf_write_header), so the check also
 * says that what a producer writes passes its own input.  Fixed seeds:
 * the same positions every run.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"
#include "qfilter.h"
#include "sizing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The target's one memo of rates sized (sizing.h), as the server has one. */
static BfSizingMemo sizing_memo;

#define POSITIONS 1000

static int	failures;

static uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint8_t *
resize(void *context, uint8_t *value, size_t new_len)
{
	(void) context;
	return realloc(value, new_len);
}

typedef int (*Validator) (const uint8_t *value, size_t len);

static int
bloom_accepts(const uint8_t *value, size_t len)
{
	BfHeader	header;

	return bf_validate(value, len, &header, &sizing_memo) == BF_OK;
}

static int
qfilter_accepts(const uint8_t *value, size_t len)
{
	QfHeader	header;

	return qf_validate(value, len, &header) == QF_OK;
}

/* Mutates POSITIONS random bytes of value in every other way; counts the accepted. */
static void
check_mutations(const char *what, uint8_t *value, size_t len, Validator accepts,
				uint64_t seed)
{
	uint64_t	random = seed;
	uint64_t	accepted = 0;
	uint64_t	tried = 0;

	if (!accepts(value, len))
	{
		printf("not ok - %s: the value as produced is refused by its own input\n", what);
		failures++;
		return;
	}
	for (int p = 0; p < POSITIONS; p++)
	{
		size_t		at = (size_t) (next_random(&random) % len);
		uint8_t		saved = value[at];

		for (int x = 1; x < 256; x++)
		{
			value[at] = saved ^ (uint8_t) x;
			accepted += accepts(value, len);
			tried++;
		}
		value[at] = saved;
	}
	printf("%s - %s: %llu single-byte mutations of %d random positions of %zu bytes, "
		   "%llu accepted\n", accepted == 0 ? "ok" : "not ok", what,
		   (unsigned long long) tried, POSITIONS, len, (unsigned long long) accepted);
	failures += accepted != 0;
}

static void
bloom_blocked(void)
{
	BfSizing	sizing;
	BfHeader	header;
	uint8_t    *value;
	size_t		len;
	uint64_t	random = 1;

	if (bf_size_for(2000, 0.01, &sizing, &sizing_memo) != BF_OK)
		abort();
	bf_fixed_header(2000, 0.01, &sizing, &header);
	header.identity.kind = BF_KIND_NUMBER;
	len = bf_value_bytes(header.nblocks);
	value = malloc(len);
	bf_init(value, &header, NULL);
	for (int i = 0; i < 1000; i++)
	{
		uint64_t	hash = next_random(&random);

		bf_filter_add(value, len, &header, &hash, 1, &sizing_memo);
	}
	check_mutations("bloom, blocked layout", value, len, bloom_accepts, 11);
	free(value);
}

static void
bloom_chain(void)
{
	BfHooks		hooks = {.resize = resize};
	BfHeader	header;
	uint8_t    *value;
	size_t		len;
	uint64_t	random = 2;
	uint64_t	hashes[64];

	if (bf_chain_create(100, 0.01, 2, &value, &len, &header, &sizing_memo, &hooks) != BF_OK)
		abort();
	header.identity.kind = BF_KIND_TEXT;
	for (int round = 0; round < 20; round++)
	{
		for (int i = 0; i < 64; i++)
			hashes[i] = next_random(&random);
		if (bf_filter_add_growing(&value, &len, &header, hashes, 64, &sizing_memo, &hooks) != BF_OK)
			abort();
	}
	if (header.nsegments < 3)
	{
		printf("not ok - bloom chain: grew to %u segments, wanted 3 or more\n",
			   header.nsegments);
		failures++;
	}
	check_mutations("bloom, growing chain", value, len, bloom_accepts, 12);
	free(value);
}

static void
qfilter_value(void)
{
	QfHeader	header;
	uint8_t    *value;
	size_t		len;
	uint64_t	random = 3;

	memset(&header, 0, sizeof(header));
	if (qf_size_for(1000, 0.01, &header) != QF_OK)
		abort();
	header.version = QF_FORMAT_VERSION;
	header.capacity = 1000;
	header.fpr = 0.01;
	header.identity.kind = BF_KIND_NUMBER;
	len = qf_value_bytes(&header);
	value = malloc(len);
	qf_init(value, &header, NULL);
	for (int i = 0; i < 700; i++)
		if (qf_insert(value, &header, qf_fingerprint(&header, next_random(&random))) != QF_OK)
			abort();
	qf_write_header(value, &header);
	check_mutations("qfilter", value, len, qfilter_accepts, 13);
	free(value);
}

int
main(void)
{
	bloom_blocked();
	bloom_chain();
	qfilter_value();
	printf("%d failed\n", failures);
	return failures != 0;
}
