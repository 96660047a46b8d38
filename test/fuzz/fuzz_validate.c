/*-------------------------------------------------------------------------
 *
 * fuzz_validate.c
 *	  libFuzzer target: arbitrary bytes into bf_validate, the one validator
 *	  every external value goes through, and then everything the SQL glue
 *	  does with a value that passed it.
 *
 * Why each input is tried twice
 * -----------------------------
 * The header checksum is checked last, after every field check, so random
 * mutation of a valid seed nearly always stops at BF_ERR_CHECKSUM and never
 * shows what the core does with a well-formed header whose fields were
 * changed (another k, another block count, a kind byte turned to "none").
 * So each input is validated as it is, and again with its checksum
 * recomputed here from the spec in bloom.h (low half of the XXH3-64 of bytes
 * 0..47).  Recomputing it independently also checks that spec: a value that
 * validated as it was must be unchanged by the repair.
 *
 * What "everything the glue does" means
 * -------------------------------------
 * On a private copy (the glue never writes into a value it was given):
 * probe and add hashes, no false negative afterwards, popcount, both
 * estimates, union and intersection with itself and with the original,
 * rewrite the header the way bloom_add does and validate the result, sort
 * and de-duplicate a hash buffer the way the aggregates do.  Every result is
 * checked against an invariant or an independent slow computation; a
 * violation aborts, which libFuzzer reports with the input.
 *
 * Chains (layout 2)
 * -----------------
 * A chain's descriptors are read again here from the spec in bloom.h, and
 * each segment's size computed apart from bf_segment_plan (capacity *
 * growth^i values at fpr / 2^(i+1), through bf_size_for), so that a
 * rejected chain's status and an accepted chain's walk are both checked
 * against the format.  On an accepted chain the hashes are added as
 * BloomAddHashes adds them: bf_filter_add, and when it takes fewer than
 * asked, bf_chain_next, realloc and bf_chain_append, and again with the
 * rest.  Then: every hash is found, the grown value validates, the
 * segments it had keep their bits (only the last gains some), every new
 * segment but the last is full, and adding the same hashes again changes
 * no byte but the header's count and checksum.  A chain built afresh to as
 * many segments has the same length and descriptors.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"
#include "hashbuf.h"
#include "sizing.h"
#include "fuzz_check.h"
#include "../compare_u64.h"

#include <math.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The target's one memo of rates sized (sizing.h), as the server has one. */
static BfSizingMemo sizing_memo;

/* Most hashes one input adds; above 48 the core's radix sort is used. */
#define MAX_PROBES 300

/* Field by field: BfHeader has padding, and fpr is compared by its bits. */
static int
headers_equal(const BfHeader *a, const BfHeader *b)
{
	return a->version == b->version && a->layout == b->layout &&
		a->k == b->k && a->nblocks == b->nblocks &&
		a->identity.kind == b->identity.kind && a->identity.tag == b->identity.tag &&
		a->identity.env_encoding == b->identity.env_encoding &&
		a->identity.env_locale == b->identity.env_locale &&
		a->seed == b->seed && a->capacity == b->capacity &&
		memcmp(&a->fpr, &b->fpr, sizeof(a->fpr)) == 0 &&
		a->inserted == b->inserted && a->growth == b->growth &&
		a->nsegments == b->nsegments && a->body_check == b->body_check;
}

/* A segment descriptor as bloom.h lays it out, read apart from the core. */
typedef struct SlowSegment
{
	uint32_t	nblocks;
	uint8_t		k;
	uint64_t	inserted;
	size_t		bits;			/* offset of its bit array */
} SlowSegment;

static uint64_t
slow_load(const uint8_t *p, int bytes)
{
	uint64_t	v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t) p[i] << (8 * i);
	return v;
}

/*
 * Whether nsegments descriptors, each with k in 1..32, a block count in
 * 1..BF_MAX_BLOCKS and zero reserved bytes, and their bit arrays fill the
 * len bytes after the header exactly; reads them into segments.
 */
static bool
slow_chain_layout(const uint8_t *value, size_t len, uint32_t nsegments,
				  SlowSegment *segments)
{
	size_t		offset = BF_HEADER_SIZE;

	for (uint32_t i = 0; i < nsegments; i++)
	{
		SlowSegment *segment = &segments[i];

		if (offset + BF_SEGMENT_HEADER_SIZE > len)
			return false;
		segment->nblocks = (uint32_t) slow_load(value + offset, 4);
		segment->k = value[offset + 4];
		segment->inserted = slow_load(value + offset + 8, 8);
		segment->bits = offset + BF_SEGMENT_HEADER_SIZE;
		if (segment->k < 1 || segment->k > BF_MAX_K ||
			segment->nblocks < 1 || segment->nblocks > BF_MAX_BLOCKS ||
			slow_load(value + offset + 5, 3) != 0 ||
			(uint64_t) segment->nblocks * BF_BLOCK_BYTES > len - segment->bits)
			return false;
		offset = segment->bits + (size_t) segment->nblocks * BF_BLOCK_BYTES;
	}
	return offset == len;
}

/*
 * Capacity and rate of segment index of a chain, from the spec: capacity *
 * growth^index values at fpr / 2^(index + 1).  False when the capacity
 * overflows.
 */
static bool
slow_segment_target(const BfHeader *header, uint32_t index, uint64_t *capacity,
					double *fpr)
{
	*capacity = header->capacity;
	for (uint32_t i = 0; i < index; i++)
	{
		if (*capacity > UINT64_MAX / header->growth)
			return false;
		*capacity *= header->growth;
	}
	*fpr = ldexp(header->fpr, -(int) (index + 1));
	return true;
}

/* Whether a segment has the size bf_size_for gives its capacity and rate. */
static bool
slow_segment_planned(const BfHeader *header, uint32_t index, const SlowSegment *segment)
{
	uint64_t	capacity;
	double		fpr;
	BfSizing	sizing;

	return slow_segment_target(header, index, &capacity, &fpr) &&
		bf_size_for(capacity, fpr, &sizing, &sizing_memo) == BF_OK &&
		sizing.nblocks == segment->nblocks && sizing.k == segment->k;
}

/* Bit count one bit at a time: deliberately unlike the core's word loop. */
static uint64_t
slow_popcount(const uint8_t *bytes, size_t n)
{
	uint64_t	count = 0;

	for (size_t i = 0; i < n; i++)
		for (int bit = 0; bit < 8; bit++)
			count += (bytes[i] >> bit) & 1;
	return count;
}

/* The estimate of bf_estimate_fpr, written from its definition with pow(). */
static double
slow_estimate_fpr(const uint8_t *bits, uint32_t nblocks, int k)
{
	double		sum = 0.0;

	for (uint32_t b = 0; b < nblocks; b++)
		sum += pow((double) slow_popcount(bits + (size_t) b * BF_BLOCK_BYTES,
										  BF_BLOCK_BYTES) / BF_BLOCK_BITS, k);
	return sum / nblocks;
}

static int
nearly_equal(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* bloom.h's body sum, apart from the core (fuzz_check.h). */
#define slow_body_sum(value, len) reference_body_sum((value), (len), BF_HEADER_SIZE)

static void
store_checksum(uint8_t *value, size_t len)
{
	uint8_t		covered[52];
	uint32_t	sum;

	/* version 1: bytes 0..47; later: bytes 0..47, then 52..55; 3: plus the body */
	memcpy(covered, value, 48);
	memcpy(covered + 48, value + 52, 4);
	sum = (uint32_t) (value[2] == 1 ? XXH3_64bits(value, 48)
					  : XXH3_64bits(covered, sizeof(covered)));
	if (value[2] >= 3)
		sum += slow_body_sum(value, len);

	for (int i = 0; i < 4; i++)
		value[48 + i] = (uint8_t) (sum >> (8 * i));
}

/*
 * Hashes to probe and add, derived from the input so that the fuzzer steers
 * them, and as many as the input's digest says (1..MAX_PROBES).
 */
static size_t
derive_hashes(const uint8_t *data, size_t len, uint64_t seed, uint64_t *hashes)
{
	uint64_t	digest = XXH3_64bits(data, len);
	size_t		n = 1 + (size_t) (digest % MAX_PROBES);

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	key = digest + i;

		hashes[i] = bf_hash(&key, sizeof(key), seed);
	}
	return n;
}

/* Facts about a failed validation, whatever the bytes were. */
static void
check_rejection(const uint8_t *value, size_t len, BfStatus status)
{
	BfHeader	header;
	BfStatus	header_status = bf_read_header(value, len, &header);

	FUZZ_CHECK((status > BF_OK && status <= BF_ERR_SEGMENT_SIZE) ||
			   status == BF_ERR_BODY_CHECKSUM);

	/*
	 * Every status has its own message.  Compared as pointers: a strcmp
	 * would teach libFuzzer a useless dictionary word.
	 */
	FUZZ_CHECK(bf_status_message(status) != bf_status_message((BfStatus) -1));
	FUZZ_CHECK(status != BF_ERR_TOO_LARGE);
	if (len < BF_HEADER_SIZE)
		FUZZ_CHECK(status == BF_ERR_TRUNCATED);

	/*
	 * bf_validate is bf_read_header, then bf_check_segments, then each
	 * segment's planned size (chains) and the empty-filter check.
	 */
	if (header_status != BF_OK)
		FUZZ_CHECK(status == header_status);
	else if (status == BF_ERR_BODY_CHECKSUM)
	{
		/* the last check: the structure is sound, the sum is not */
		FUZZ_CHECK(header.version >= 3);
		FUZZ_CHECK(bf_check_segments(value, len, &header) == BF_OK);
		FUZZ_CHECK(slow_body_sum(value, len) != header.body_check);
	}
	else if (!bf_is_chain(&header))
	{
		FUZZ_CHECK(status == BF_ERR_LENGTH || status == BF_ERR_EMPTY_HAS_BITS);
		if (status == BF_ERR_LENGTH)
			FUZZ_CHECK(len != bf_value_bytes(header.nblocks));
		else
			FUZZ_CHECK(header.identity.kind == BF_KIND_NONE);
	}
	else
	{
		SlowSegment segments[BF_MAX_SEGMENTS];
		bool		laid_out = slow_chain_layout(value, len, header.nsegments, segments);
		BfStatus	layout_status = bf_check_segments(value, len, &header);

		FUZZ_CHECK(laid_out == (layout_status == BF_OK));
		if (!laid_out)
		{
			FUZZ_CHECK(status == layout_status);
			FUZZ_CHECK(status == BF_ERR_LENGTH || status == BF_ERR_K ||
					   status == BF_ERR_NBLOCKS || status == BF_ERR_RESERVED);
		}
		else
		{
			bool		as_planned = true;

			for (uint32_t i = 0; i < header.nsegments; i++)
				as_planned &= slow_segment_planned(&header, i, &segments[i]);
			FUZZ_CHECK(status == BF_ERR_SEGMENT_SIZE || status == BF_ERR_EMPTY_HAS_BITS);
			if (status == BF_ERR_SEGMENT_SIZE)
				FUZZ_CHECK(!as_planned);
			else
				FUZZ_CHECK(header.identity.kind == BF_KIND_NONE);
		}
	}
}

/* The decoded header of a valid value keeps every promise of the format. */
static void
check_header(const uint8_t *value, size_t len, const BfHeader *header)
{
	uint8_t		rewritten[BF_HEADER_SIZE];
	BfHeader	again;

	FUZZ_CHECK(header->version >= BF_FORMAT_VERSION_MIN &&
			   header->version <= BF_FORMAT_VERSION);
	FUZZ_CHECK(header->identity.kind == BF_KIND_OTHER ||
			   (header->identity.env_encoding == 0 && header->identity.env_locale == 0));
	if (bf_is_chain(header))
	{
		FUZZ_CHECK(header->layout == BF_LAYOUT_CHAINED);
		FUZZ_CHECK(header->version >= 2);
		FUZZ_CHECK(header->k == 0 && header->nblocks == 0);
		FUZZ_CHECK(header->growth >= BF_MIN_GROWTH && header->growth <= BF_MAX_GROWTH);
		FUZZ_CHECK(header->nsegments >= 1 && header->nsegments <= BF_MAX_SEGMENTS);
		FUZZ_CHECK(bf_check_segments(value, len, header) == BF_OK);
	}
	else
	{
		FUZZ_CHECK(header->layout == BF_LAYOUT_BLOCKED512);
		FUZZ_CHECK(header->k >= 1 && header->k <= BF_MAX_K);
		FUZZ_CHECK(header->nblocks >= 1 && header->nblocks <= BF_MAX_BLOCKS);
		FUZZ_CHECK(header->growth == 0 && header->nsegments == 1);
		FUZZ_CHECK(len == bf_value_bytes(header->nblocks));
	}
	FUZZ_CHECK(header->identity.kind <= BF_KIND_LAST);
	FUZZ_CHECK(header->identity.kind == BF_KIND_OTHER || header->identity.tag == 0);
	FUZZ_CHECK(header->capacity >= 1);
	FUZZ_CHECK(header->fpr > 0.0 && header->fpr <= 0.5);
	FUZZ_CHECK(len <= BF_MAX_VALUE_BYTES);

	/* The probe path reads the header alone and must agree. */
	FUZZ_CHECK(bf_read_header(value, len, &again) == BF_OK);
	FUZZ_CHECK(headers_equal(header, &again));

	/* Encoding the decoded header gives back the very same bytes. */
	bf_write_header(rewritten, header);
	FUZZ_CHECK(memcmp(rewritten, value, BF_HEADER_SIZE) == 0);
}

/* Fill and estimates of a bit array, against slow recomputations. */
static void
check_estimates(const uint8_t *bits, const BfHeader *header,
				uint64_t *popcount_out, double *fpr_out, double *cardinality_out)
{
	size_t		nbytes = (size_t) header->nblocks * BF_BLOCK_BYTES;
	uint64_t	total = (uint64_t) nbytes * 8;
	uint64_t	set = bf_popcount(bits, nbytes);
	double		fpr = bf_estimate_fpr(bits, header->nblocks, header->k);
	double		cardinality = bf_estimate_cardinality(header->nblocks,
													  header->k, set);

	FUZZ_CHECK(set == slow_popcount(bits, nbytes));
	/* An odd length and start reach the core's byte-by-byte tail. */
	FUZZ_CHECK(bf_popcount(bits + 1, nbytes - 2) ==
			   slow_popcount(bits + 1, nbytes - 2));

	FUZZ_CHECK(fpr >= 0.0 && fpr <= 1.0);
	FUZZ_CHECK(nearly_equal(fpr, slow_estimate_fpr(bits, header->nblocks,
												   header->k)));
	if (set == 0)
		FUZZ_CHECK(fpr == 0.0);
	if (set == total)
		FUZZ_CHECK(fpr == 1.0);

	FUZZ_CHECK(isfinite(cardinality) && cardinality >= 0.0);
	if (set == 0)
		FUZZ_CHECK(cardinality == 0.0);
	if (set > 0)
		FUZZ_CHECK(bf_estimate_cardinality(header->nblocks, header->k, set - 1)
				   < cardinality);

	*popcount_out = set;
	*fpr_out = fpr;
	*cardinality_out = cardinality;
}

/*
 * The aggregates de-duplicate their hash buffers with the core.  Each hash
 * also appears as copies that share long runs of top bits, so that buffers
 * of more than a table's worth of distinct hashes, and the partitioning that
 * follows, are exercised too.
 */
#define DISTINCT_COPIES 16

static void
check_distinct(const uint64_t *hashes, size_t n)
{
	size_t		total = n * DISTINCT_COPIES;
	uint64_t   *mine = malloc(total * sizeof(uint64_t));
	uint64_t   *with_scratch = malloc(total * sizeof(uint64_t));
	uint64_t   *scratch = malloc(total * sizeof(uint64_t));
	uint64_t   *reference = malloc(total * sizeof(uint64_t));
	size_t		expected = 0;
	size_t		kept;

	FUZZ_CHECK(mine && with_scratch && scratch && reference);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < DISTINCT_COPIES; j++)
		{
			uint64_t	h = hashes[i];

			switch (j % 4)
			{
				case 0:			/* a duplicate */
					break;
				case 1:			/* shares its top 40 bits with hashes[0]'s copies */
					h = (hashes[0] & ~UINT64_C(0xFFFFFF)) | ((h + j) & 0xFFFFFF);
					break;
				case 2:			/* 8 to 56 leading zeros, and 0 itself */
					h = (j == 14 && i % 7 == 0) ? 0 : h >> (4 * j);
					break;
				default:		/* low bits cleared: duplicates among themselves */
					h &= ~UINT64_C(0xFFFF);
					break;
			}
			mine[i * DISTINCT_COPIES + j] = h;
		}
	memcpy(with_scratch, mine, total * sizeof(uint64_t));
	memcpy(reference, mine, total * sizeof(uint64_t));
	qsort(reference, total, sizeof(uint64_t), compare_u64);
	for (size_t i = 0; i < total; i++)
		if (i == 0 || reference[i] != reference[i - 1])
			reference[expected++] = reference[i];

	/* Two halves de-duplicated apart, grouped, and counted together. */
	{
		size_t		half = total / 2;
		uint64_t   *runs[2] = {mine, mine + half};
		size_t		lengths[2];
		int			bits = BF_MAX_GROUP_BITS;

		lengths[0] = bf_distinct_hashes(runs[0], half, scratch);
		lengths[1] = bf_distinct_hashes(runs[1], total - half, scratch);
		for (int r = 0; r < 2; r++)
		{
			if (bf_grouped_bits(runs[r], lengths[r]) < BF_MAX_GROUP_BITS)
				bf_group_hashes(runs[r], lengths[r]);
			if (bf_grouped_bits(runs[r], lengths[r]) < bits)
				bits = bf_grouped_bits(runs[r], lengths[r]);
		}
		FUZZ_CHECK(bits == BF_MAX_GROUP_BITS);
		FUZZ_CHECK(bf_count_distinct_grouped((const uint64_t *const *) runs, lengths, 2,
											 bits, scratch, total) == expected);
		memcpy(mine, with_scratch, total * sizeof(uint64_t));
	}

	kept = bf_distinct_hashes(mine, total, NULL);
	FUZZ_CHECK(kept == expected);
	FUZZ_CHECK(bf_distinct_hashes(with_scratch, total, scratch) == expected);
	qsort(mine, kept, sizeof(uint64_t), compare_u64);
	qsort(with_scratch, kept, sizeof(uint64_t), compare_u64);
	FUZZ_CHECK(memcmp(mine, reference, kept * sizeof(uint64_t)) == 0);
	FUZZ_CHECK(memcmp(with_scratch, reference, kept * sizeof(uint64_t)) == 0);
	free(mine);
	free(with_scratch);
	free(scratch);
	free(reference);
}

/* Union and intersection: with itself, and of a superset with its subset. */
static void
check_set_algebra(const uint8_t *original, const uint8_t *superset,
				  size_t nbytes)
{
	uint8_t    *scratch = malloc(nbytes);

	FUZZ_CHECK(scratch != NULL);
	memcpy(scratch, superset, nbytes);
	bf_union_bits(scratch, scratch, nbytes);
	FUZZ_CHECK(memcmp(scratch, superset, nbytes) == 0);
	bf_intersect_bits(scratch, scratch, nbytes);
	FUZZ_CHECK(memcmp(scratch, superset, nbytes) == 0);

	bf_union_bits(scratch, original, nbytes);
	FUZZ_CHECK(memcmp(scratch, superset, nbytes) == 0);
	bf_intersect_bits(scratch, original, nbytes);
	FUZZ_CHECK(memcmp(scratch, original, nbytes) == 0);
	free(scratch);
}

/*
 * What the glue does with a blocked value that validated: probe, add (as
 * bloom_add and bloom_add_all do, header rewritten), estimate, combine.
 */
static void
exercise_blocked(const uint8_t *value, size_t len, const BfHeader *header)
{
	size_t		nbytes = (size_t) header->nblocks * BF_BLOCK_BYTES;
	const uint8_t *bits = bf_bits_const(value);
	uint64_t	hashes[MAX_PROBES];
	size_t		n = derive_hashes(value, len, header->seed, hashes);
	uint8_t    *batch = malloc(len);
	uint8_t    *single = malloc(len);
	BfHeader	added = *header;
	BfHeader	decoded;
	uint64_t	set_before,
				set_after;
	double		fpr_before,
				fpr_after,
				cardinality_before,
				cardinality_after;

	FUZZ_CHECK(batch != NULL && single != NULL);
	check_header(value, len, header);
	check_estimates(bits, header, &set_before, &fpr_before, &cardinality_before);
	if (header->identity.kind == BF_KIND_NONE)
		FUZZ_CHECK(set_before == 0 && header->inserted == 0);

	/* Probes read the one block the hash picks, and nothing else. */
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	block = bf_block_of(hashes[i], header->nblocks);
		bool		present = bf_test_hash(bits, header->nblocks, header->k,
										   hashes[i]);

		FUZZ_CHECK(block < header->nblocks);
		FUZZ_CHECK(present == bf_block_test(bits + (size_t) block * BF_BLOCK_BYTES,
											hashes[i], header->k));
		if (set_before == 0)
			FUZZ_CHECK(!present);
	}

	/* Batch insert (with its prefetch) and one at a time agree. */
	memcpy(batch, value, len);
	memcpy(single, value, len);
	bf_add_hashes(bf_bits(batch), header->nblocks, header->k, hashes, n);
	for (size_t i = 0; i < n; i++)
		bf_add_hashes(bf_bits(single), header->nblocks, header->k, &hashes[i], 1);
	FUZZ_CHECK(memcmp(batch, single, len) == 0);

	/* No false negatives: every added hash is found. */
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(bf_test_hash(bf_bits(batch), header->nblocks, header->k,
								hashes[i]));

	/* The header the glue writes after an add validates and round-trips. */
	if (added.identity.kind == BF_KIND_NONE)
		added.identity.kind = BF_KIND_NUMBER;
	added.inserted = added.inserted > UINT64_MAX - n ? UINT64_MAX
		: added.inserted + n;
	bf_seal(batch, len, &added);	/* its bits were set raw */
	FUZZ_CHECK(bf_validate(batch, len, &decoded, &sizing_memo) == BF_OK);
	FUZZ_CHECK(headers_equal(&added, &decoded));
	FUZZ_CHECK(bf_compatible(header, &added) && bf_compatible(&added, header));
	FUZZ_CHECK(bf_compatible(header, header));

	/* bf_filter_add, the glue's one add for either layout, does the same. */
	{
		BfHeader	through_filter_add = *header;

		through_filter_add.identity.kind = added.identity.kind;
		memcpy(single, value, len);
		FUZZ_CHECK(bf_filter_add(single, len, &through_filter_add, hashes, n, &sizing_memo) == n);
		FUZZ_CHECK(headers_equal(&through_filter_add, &added));
		FUZZ_CHECK(memcmp(single, batch, len) == 0);
		for (size_t i = 0; i < n; i++)
			FUZZ_CHECK(bf_filter_test(single, &through_filter_add, hashes[i]));
	}

	check_estimates(bf_bits(batch), &added, &set_after, &fpr_after,
					&cardinality_after);
	FUZZ_CHECK(set_after >= set_before);
	FUZZ_CHECK(set_after - set_before <= (uint64_t) n * header->k);
	FUZZ_CHECK(fpr_after >= fpr_before);
	FUZZ_CHECK(cardinality_after >= cardinality_before);

	check_set_algebra(bits, bf_bits(batch), nbytes);
	check_distinct(hashes, n);

	/* An empty filter with this header, as bloom_empty makes one, is valid. */
	{
		BfHeader	empty = *header;

		bf_init(single, &empty, NULL);
		FUZZ_CHECK(bf_validate(single, len, &decoded, &sizing_memo) == BF_OK);
		FUZZ_CHECK(headers_equal(&empty, &decoded));
	}
	FUZZ_CHECK(bf_popcount(bf_bits(single), nbytes) == 0);
	free(batch);
	free(single);
}

/*
 * The planned sizes of one chain's segments, each computed once per input
 * from the spec and compared with bf_segment_plan's: sizing a new rate
 * takes milliseconds under the sanitizers, and a chain has a rate per
 * segment.
 */
typedef struct ChainPlan
{
	uint32_t	known;			/* segments 0..known-1 are filled in */
	SlowSegment segments[BF_MAX_SEGMENTS];
} ChainPlan;

static const SlowSegment *
planned_segment(const BfHeader *header, ChainPlan *plan, uint32_t index)
{
	FUZZ_CHECK(index < BF_MAX_SEGMENTS);
	while (plan->known <= index)
	{
		SlowSegment *segment = &plan->segments[plan->known];
		BfSegment	planned;
		uint64_t	capacity;
		double		fpr;
		BfSizing	sizing;

		FUZZ_CHECK(slow_segment_target(header, plan->known, &capacity, &fpr));
		FUZZ_CHECK(bf_size_for(capacity, fpr, &sizing, &sizing_memo) == BF_OK);
		FUZZ_CHECK(bf_segment_plan(header, plan->known, &planned, &sizing_memo) == BF_OK);
		FUZZ_CHECK(planned.index == plan->known && planned.capacity == capacity &&
				   planned.fpr == fpr && planned.nblocks == sizing.nblocks &&
				   planned.k == sizing.k && planned.inserted == 0);
		segment->nblocks = sizing.nblocks;
		segment->k = sizing.k;
		plan->known++;
	}
	return &plan->segments[index];
}

/*
 * A chain's segments as the core walks them agree with the descriptors
 * read from the spec, and each has its planned capacity, rate and size.
 */
static void
check_chain_walk(const uint8_t *value, size_t len, const BfHeader *header,
				 ChainPlan *plan, SlowSegment *segments)
{
	BfSegment	segment;
	BfSegment	last;
	uint32_t	count = 0;

	FUZZ_CHECK(slow_chain_layout(value, len, header->nsegments, segments));
	bf_segment_first(value, header, &segment);
	do
	{
		const SlowSegment *slow = &segments[count];
		const SlowSegment *planned;
		uint64_t	capacity;
		double		fpr;

		FUZZ_CHECK(count < header->nsegments && segment.index == count);
		FUZZ_CHECK(segment.nblocks == slow->nblocks && segment.k == slow->k &&
				   segment.inserted == slow->inserted && segment.bits == slow->bits);
		FUZZ_CHECK(slow_segment_target(header, count, &capacity, &fpr));
		FUZZ_CHECK(segment.capacity == capacity && segment.fpr == fpr);
		planned = planned_segment(header, plan, count);
		FUZZ_CHECK(planned->nblocks == slow->nblocks && planned->k == slow->k);
		if (header->identity.kind == BF_KIND_NONE)
			FUZZ_CHECK(slow->inserted == 0 &&
					   slow_popcount(value + slow->bits,
									 (size_t) slow->nblocks * BF_BLOCK_BYTES) == 0);
		count++;
	} while (bf_segment_next(value, header, &segment));
	FUZZ_CHECK(count == header->nsegments);

	bf_segment_last(value, header, &last);
	FUZZ_CHECK(last.index == count - 1 && last.bits == segments[count - 1].bits &&
			   last.nblocks == segments[count - 1].nblocks &&
			   last.inserted == segments[count - 1].inserted);
}

/* Whether any segment has every bit of hash set: bf_filter_test, slowly. */
static bool
slow_chain_test(const uint8_t *value, const BfHeader *header,
				const SlowSegment *segments, uint64_t hash)
{
	bool		found = false;

	for (uint32_t i = 0; i < header->nsegments; i++)
		found |= bf_test_hash(value + segments[i].bits, segments[i].nblocks,
							  segments[i].k, hash);
	return found;
}

/*
 * Appends the next segment to a chain of *len bytes at *value, as
 * BloomGrowChain does; the core said it could grow, so it must.
 */
static void
grow_chain(uint8_t **value, size_t *len, BfHeader *header)
{
	BfSegment	next;
	size_t		new_len;

	FUZZ_CHECK(bf_chain_next(header, *len, &next, &new_len, &sizing_memo) == BF_OK);
	FUZZ_CHECK(new_len > *len && new_len <= BF_MAX_VALUE_BYTES);
	FUZZ_CHECK(next.index == header->nsegments && next.inserted == 0 &&
			   next.bits == *len + BF_SEGMENT_HEADER_SIZE &&
			   new_len == next.bits + (size_t) next.nblocks * BF_BLOCK_BYTES);
	*value = realloc(*value, new_len);
	FUZZ_CHECK(*value != NULL);
	bf_chain_append(*value, header, *len, &next, NULL);
	*len = new_len;
}

/*
 * Adds hashes as BloomAddHashes does, growing the chain when
 * bf_filter_add takes fewer than asked.  Returns how many segments it
 * appended.
 */
static uint32_t
add_to_chain(uint8_t **value, size_t *len, BfHeader *header,
			 const uint64_t *hashes, size_t n)
{
	uint32_t	appended = 0;

	for (;;)
	{
		size_t		taken = bf_filter_add(*value, *len, header, hashes, n, &sizing_memo);
		BfSegment	last;

		FUZZ_CHECK(taken <= n);
		if (taken == n)
			return appended;

		/* A chain grows only for a value it lacks, when its last segment is full. */
		bf_segment_last(*value, header, &last);
		FUZZ_CHECK(last.inserted >= last.capacity);
		FUZZ_CHECK(!bf_filter_test(*value, header, hashes[taken]));
		grow_chain(value, len, header);
		appended++;
		hashes += taken;
		n -= taken;
	}
}

/*
 * What the glue does with a chain that validated: walk its segments,
 * probe, add with growth, add the same again, estimate each segment,
 * union segment by segment, and make a fresh chain of the same length.
 */
static void
exercise_chain(const uint8_t *value, size_t len, const BfHeader *header)
{
	SlowSegment segments[BF_MAX_SEGMENTS];
	SlowSegment grown_segments[BF_MAX_SEGMENTS];
	ChainPlan	plan = {0};
	uint64_t	hashes[MAX_PROBES];
	size_t		n = derive_hashes(value, len, header->seed, hashes);
	uint8_t    *grown = malloc(len);
	uint8_t    *again;
	size_t		grown_len = len;
	BfHeader	added = *header;
	BfHeader	decoded;
	bool		any_bit_set = false;
	uint32_t	appended;

	FUZZ_CHECK(grown != NULL);
	check_header(value, len, header);
	check_chain_walk(value, len, header, &plan, segments);

	/* Each segment's fill and estimates, as bloom_stats reports them. */
	for (uint32_t i = 0; i < header->nsegments; i++)
	{
		BfHeader	as_filter = *header;
		uint64_t	set;
		double		fpr;
		double		cardinality;

		as_filter.nblocks = segments[i].nblocks;
		as_filter.k = segments[i].k;
		check_estimates(value + segments[i].bits, &as_filter, &set, &fpr, &cardinality);
		any_bit_set |= set != 0;
	}

	/* A probe is "present" when any segment has all its bits. */
	for (size_t i = 0; i < n; i++)
	{
		bool		present = bf_filter_test(value, header, hashes[i]);

		FUZZ_CHECK(present == slow_chain_test(value, header, segments, hashes[i]));
		if (!any_bit_set)
			FUZZ_CHECK(!present);
	}

	/* Add with growth, the key kind set first as the glue sets it. */
	memcpy(grown, value, len);
	if (added.identity.kind == BF_KIND_NONE)
		added.identity.kind = BF_KIND_NUMBER;
	appended = add_to_chain(&grown, &grown_len, &added, hashes, n);
	FUZZ_CHECK(added.nsegments == header->nsegments + appended);
	FUZZ_CHECK(added.inserted == bf_count_add(header->inserted, n));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(bf_filter_test(grown, &added, hashes[i]));
	FUZZ_CHECK(bf_validate(grown, grown_len, &decoded, &sizing_memo) == BF_OK);
	FUZZ_CHECK(headers_equal(&added, &decoded));
	FUZZ_CHECK(bf_compatible(header, &added) && bf_compatible(&added, header));
	check_chain_walk(grown, grown_len, &added, &plan, grown_segments);

	/*
	 * The segments it had keep their bits and counts, but the last, which
	 * only gains bits; every segment appended but the last took its
	 * capacity, and the new ones hold no more than the values added.
	 */
	{
		uint32_t	last = header->nsegments - 1;
		const SlowSegment *before = &segments[last];
		const SlowSegment *after = &grown_segments[last];
		uint64_t	took = after->inserted - before->inserted;

		FUZZ_CHECK(memcmp(grown + BF_HEADER_SIZE, value + BF_HEADER_SIZE,
						  before->bits - BF_SEGMENT_HEADER_SIZE - BF_HEADER_SIZE) == 0);
		FUZZ_CHECK(after->bits == before->bits && after->nblocks == before->nblocks &&
				   after->inserted >= before->inserted);
		for (size_t b = 0; b < (size_t) before->nblocks * BF_BLOCK_BYTES; b++)
			FUZZ_CHECK((value[before->bits + b] & ~grown[after->bits + b]) == 0);
		for (uint32_t i = header->nsegments; i < added.nsegments; i++)
		{
			uint64_t	capacity;
			double		fpr;

			FUZZ_CHECK(slow_segment_target(&added, i, &capacity, &fpr));
			if (i + 1 < added.nsegments)
				FUZZ_CHECK(grown_segments[i].inserted == capacity);
			took += grown_segments[i].inserted;
		}
		FUZZ_CHECK(took <= n);
		check_set_algebra(value + before->bits, grown + after->bits,
						  (size_t) before->nblocks * BF_BLOCK_BYTES);
	}

	/* Values already present take no room: only the header's count moves. */
	again = malloc(grown_len);
	FUZZ_CHECK(again != NULL);
	memcpy(again, grown, grown_len);
	{
		BfHeader	twice = added;
		size_t		again_len = grown_len;

		FUZZ_CHECK(add_to_chain(&again, &again_len, &twice, hashes, n) == 0);
		FUZZ_CHECK(again_len == grown_len && twice.nsegments == added.nsegments);
		FUZZ_CHECK(twice.inserted == bf_count_add(added.inserted, n));
		FUZZ_CHECK(memcmp(again, grown, 40) == 0);
		FUZZ_CHECK(memcmp(again + 52, grown + 52, grown_len - 52) == 0);
		FUZZ_CHECK(bf_read_header(again, again_len, &decoded) == BF_OK);
		FUZZ_CHECK(headers_equal(&twice, &decoded));
	}
	free(again);

	/*
	 * A fresh chain of the same parameters, grown to as many segments as
	 * the input, has its length and descriptors: nothing but the plan
	 * decides a chain's layout.
	 */
	{
		BfHeader	fresh;
		size_t		fresh_len = BF_HEADER_SIZE;
		uint8_t    *chain = malloc(BF_HEADER_SIZE);

		FUZZ_CHECK(chain != NULL);
		FUZZ_CHECK(bf_chain_header(header->capacity, header->fpr, header->growth,
								   &fresh) == BF_OK);
		fresh.seed = header->seed;
		while (fresh.nsegments < header->nsegments)
			grow_chain(&chain, &fresh_len, &fresh);
		FUZZ_CHECK(fresh_len == len);
		FUZZ_CHECK(bf_read_header(chain, fresh_len, &decoded) == BF_OK);
		FUZZ_CHECK(bf_check_segments(chain, fresh_len, &decoded) == BF_OK);
		FUZZ_CHECK(decoded.nsegments == header->nsegments && decoded.inserted == 0 &&
				   decoded.identity.kind == BF_KIND_NONE);
		for (uint32_t i = 0; i < header->nsegments; i++)
		{
			size_t		at = segments[i].bits - BF_SEGMENT_HEADER_SIZE;

			FUZZ_CHECK(memcmp(chain + at, value + at, 8) == 0);
			FUZZ_CHECK(slow_load(chain + at + 8, 8) == 0);
			FUZZ_CHECK(slow_popcount(chain + segments[i].bits,
									 (size_t) segments[i].nblocks * BF_BLOCK_BYTES) == 0);
		}
		free(chain);
	}
	free(grown);
}

/* What the glue does with a value that validated, by its layout. */
static void
exercise_valid(const uint8_t *value, size_t len, const BfHeader *header)
{
	/* a version 3 value's body is what its check says */
	FUZZ_CHECK(header->version < 3 || slow_body_sum(value, len) == header->body_check);
	FUZZ_CHECK(header->version < 3 ||
			   bf_body_sum(value + BF_HEADER_SIZE, len - BF_HEADER_SIZE, 0) == header->body_check);
	if (bf_is_chain(header))
		exercise_chain(value, len, header);
	else
		exercise_blocked(value, len, header);
}

/* One validation of one byte string, with everything that follows from it. */
static void
fuzz_one(const uint8_t *value, size_t len)
{
	BfHeader	header;
	BfHeader	again;
	BfStatus	status = bf_validate(value, len, &header, &sizing_memo);

	FUZZ_CHECK(bf_validate(value, len, &again, &sizing_memo) == status);
	if (status == BF_OK)
		exercise_valid(value, len, &header);
	else
		check_rejection(value, len, status);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t    *repaired;
	BfHeader	header;
	bool		valid_as_is;

	fuzz_one(data, size);
	if (size < BF_HEADER_SIZE)
		return 0;

	/* An exact-size heap copy, so that ASan sees any read past its end. */
	repaired = malloc(size);
	FUZZ_CHECK(repaired != NULL);
	memcpy(repaired, data, size);
	store_checksum(repaired, size);
	valid_as_is = bf_validate(data, size, &header, &sizing_memo) == BF_OK;
	if (valid_as_is)
		FUZZ_CHECK(memcmp(repaired, data, size) == 0);
	else
		fuzz_one(repaired, size);
	free(repaired);
	return 0;
}
