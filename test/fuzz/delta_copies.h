/*-------------------------------------------------------------------------
 *
 * delta_copies.h
 *	  The copies of an index's filter that fuzz_delta.c applies deltas to,
 *	  and gen_corpus.c writes delta seeds for: one recipe each, built with
 *	  the core's own API (a chain grows through bf_filter_add,
 *	  bf_chain_next and bf_chain_append, as the index grows).
 *
 * An input of fuzz_delta is a mode byte and a delta.  The mode's low bits
 * pick the copy (mode % DELTA_NCOPIES); DELTA_MODE_RECHECKSUM asks the
 * target to rewrite the delta's checksum first, so that mutations of the
 * header and runs reach the checks after the checksum.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_FUZZ_DELTA_COPIES_H
#define BF_FUZZ_DELTA_COPIES_H

#include "bloom.h"
#include "sizing.h"
#include "fuzz_check.h"

#include <stdlib.h>
#include <string.h>

/*
 * The memo of rates sized (sizing.h) of the program that includes this,
 * for the copies' growth and its own calls.
 */
static BfSizingMemo sizing_memo;

#define DELTA_NCOPIES		4
#define DELTA_MODE_RECHECKSUM 0x80

typedef struct DeltaCopyRecipe
{
	const char *name;
	uint8_t		growth;			/* 0: a filter of fixed size */
	uint64_t	capacity;
	double		fpr;
	uint64_t	seed;
	BfKeyKind	kind;
	uint64_t	keys;			/* integer keys 0..keys-1 added */
} DeltaCopyRecipe;

static const DeltaCopyRecipe delta_copies[DELTA_NCOPIES] = {
	{"fixed", 0, 100, 0.01, 7, BF_KIND_NUMBER, 50},
	{"chain1", 2, 4, 0.01, 7, BF_KIND_NUMBER, 2},	/* one segment */
	{"chain3", 2, 4, 0.01, 7, BF_KIND_NUMBER, 20},	/* three segments */
	{"chain16", 16, 1, 0.1, 9, BF_KIND_DATE, 1},	/* growth 16, full */
};

/* A copy in malloc'd memory exactly as long as its value. */
typedef struct DeltaCopy
{
	uint8_t    *value;
	size_t		len;
	BfHeader	header;
} DeltaCopy;

/* Hash of an integer key as the glue hashes int8: 8 little-endian bytes. */
static inline uint64_t
delta_key_hash(uint64_t key, uint64_t seed)
{
	uint8_t		bytes[8];

	for (int i = 0; i < 8; i++)
		bytes[i] = (uint8_t) (key >> (8 * i));
	return bf_hash(bytes, sizeof(bytes), seed);
}

static inline void
delta_copy_grow(DeltaCopy *copy)
{
	BfSegment	next;
	size_t		new_len;

	FUZZ_CHECK(bf_chain_next(&copy->header, copy->len, &next, &new_len, &sizing_memo) == BF_OK);
	copy->value = realloc(copy->value, new_len);
	FUZZ_CHECK(copy->value != NULL);
	bf_chain_append(copy->value, &copy->header, copy->len, &next, NULL);
	copy->len = new_len;
}

/* Builds recipe number which. */
static inline DeltaCopy
delta_copy_build(int which)
{
	const DeltaCopyRecipe *r = &delta_copies[which];
	DeltaCopy	copy;

	memset(&copy, 0, sizeof(copy));
	if (r->growth == 0)
	{
		BfSizing	sizing;

		FUZZ_CHECK(bf_size_for(r->capacity, r->fpr, &sizing, &sizing_memo) == BF_OK);
		copy.header.version = BF_FORMAT_VERSION;
		copy.header.layout = BF_LAYOUT_BLOCKED512;
		copy.header.k = sizing.k;
		copy.header.nblocks = sizing.nblocks;
		copy.header.capacity = r->capacity;
		copy.header.fpr = r->fpr;
		copy.header.nsegments = 1;
		copy.len = bf_value_bytes(sizing.nblocks);
		copy.value = malloc(copy.len);
		FUZZ_CHECK(copy.value != NULL);
		bf_init(copy.value, &copy.header, NULL);
	}
	else
	{
		FUZZ_CHECK(bf_chain_header(r->capacity, r->fpr, r->growth, &copy.header) == BF_OK);
		copy.len = BF_HEADER_SIZE;
		copy.value = malloc(copy.len);
		FUZZ_CHECK(copy.value != NULL);
		delta_copy_grow(&copy);
	}
	copy.header.seed = r->seed;
	copy.header.identity.kind = r->kind;
	bf_write_header(copy.value, &copy.header);
	for (uint64_t key = 0; key < r->keys; key++)
	{
		uint64_t	hash = delta_key_hash(key, r->seed);

		while (bf_filter_add(copy.value, copy.len, &copy.header, &hash, 1, &sizing_memo) == 0)
			delta_copy_grow(&copy);
	}
	return copy;
}

#endif							/* BF_FUZZ_DELTA_COPIES_H */
