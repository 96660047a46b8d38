/*-------------------------------------------------------------------------
 *
 * delta.c
 *	  Deltas of a bloomfilter index, part of the pure core (see delta.h for
 *	  the API and the format): writing one, checking one against a copy of
 *	  the index's filter, and applying it.
 *
 * Checking and applying are apart so that a caller can size the copy's
 * growth, allocate, and only then change it: bf_delta_check reads every
 * byte of the delta and says how long the copy becomes, and bf_delta_apply,
 * given a delta it accepted, cannot fail.  A delta is refused whole or
 * applied whole.
 *
 * Applying uses the core's own routines: a chain grows by bf_chain_next and
 * bf_chain_append, exactly as a chain grows anywhere else, and hashes go
 * into a segment's bit array through bf_add_hashes.  Each hash counts once
 * in its segment and in the header, as the index counts a key it adds (the
 * index logs only keys that took room), so that a copy brought up to date
 * equals the index's snapshot byte for byte.
 *
 *-------------------------------------------------------------------------
 */
#include "delta.h"

#include <string.h>

/* Offsets of the header fields (delta.h). */
#define DELTA_VERSION_AT	2
#define DELTA_RESERVED_AT	3
#define DELTA_NSEGMENTS_AT	4
#define DELTA_SEED_AT		8
#define DELTA_CAPACITY_AT	16
#define DELTA_FPR_AT		24
#define DELTA_KIND_AT		32
#define DELTA_GROWTH_AT		33
#define DELTA_FORMAT_AT		34
#define DELTA_LAYOUT_AT		35
#define DELTA_TAG_AT		36
#define DELTA_NRUNS_AT		40
#define DELTA_CHECKSUM_AT	44

/* Hashes decoded at a time for bf_add_hashes, which prefetches ahead. */
#define APPLY_BATCH			256

size_t
bf_delta_bytes(uint32_t nruns, uint64_t nhashes)
{
	return BF_DELTA_HEADER_SIZE + (size_t) nruns * BF_DELTA_RUN_HEADER_SIZE +
		(size_t) nhashes * sizeof(uint64_t);
}

/* ---------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------
 */

static uint64_t
fpr_bits_of(double fpr)
{
	uint64_t	bits;

	memcpy(&bits, &fpr, sizeof(bits));
	return bits;
}

void
bf_delta_start(BfDeltaWriter *writer, uint8_t *out, const BfHeader *filter,
			   uint32_t nsegments)
{
	memset(out, 0, BF_DELTA_HEADER_SIZE);
	out[0] = BF_DELTA_MAGIC_0;
	out[1] = BF_DELTA_MAGIC_1;
	out[DELTA_VERSION_AT] = BF_DELTA_VERSION;
	bf_store_le32(out + DELTA_NSEGMENTS_AT, nsegments);
	bf_store_le64(out + DELTA_SEED_AT, filter->seed);
	bf_store_le64(out + DELTA_CAPACITY_AT, filter->capacity);
	bf_store_le64(out + DELTA_FPR_AT, fpr_bits_of(filter->fpr));
	out[DELTA_KIND_AT] = filter->identity.kind;
	out[DELTA_GROWTH_AT] = bf_is_chain(filter) ? filter->growth : 0;
	out[DELTA_FORMAT_AT] = filter->version;
	out[DELTA_LAYOUT_AT] = filter->layout;
	bf_store_le32(out + DELTA_TAG_AT, filter->identity.tag);

	writer->out = out;
	writer->len = BF_DELTA_HEADER_SIZE;
	writer->run = 0;
	writer->segment = 0;
	writer->count = 0;
	writer->nruns = 0;
}

void
bf_delta_add(BfDeltaWriter *writer, uint32_t segment, uint64_t hash)
{
	if (writer->run == 0 || segment != writer->segment || writer->count == UINT32_MAX)
	{
		writer->run = writer->len;
		writer->segment = segment;
		writer->count = 0;
		writer->nruns++;
		bf_store_le32(writer->out + writer->run, segment);
		writer->len += BF_DELTA_RUN_HEADER_SIZE;
	}
	bf_store_le64(writer->out + writer->len, hash);
	writer->len += sizeof(uint64_t);
	writer->count++;
	bf_store_le32(writer->out + writer->run + 4, writer->count);
}

size_t
bf_delta_finish(BfDeltaWriter *writer)
{
	bf_store_le32(writer->out + DELTA_NRUNS_AT, writer->nruns);
	bf_store_le32(writer->out + DELTA_CHECKSUM_AT,
				  bf_delta_checksum(writer->out, writer->len));
	return writer->len;
}

/*
 * Streamed, as the checksum leaves out its own four bytes: the same value
 * as one XXH3-64 of the covered bytes laid end to end, without a copy.
 */
uint32_t
bf_delta_checksum(const uint8_t *delta, size_t len)
{
	XXH3_state_t state;

	XXH3_INITSTATE(&state);
	XXH3_64bits_reset(&state);
	XXH3_64bits_update(&state, delta, DELTA_CHECKSUM_AT);
	XXH3_64bits_update(&state, delta + BF_DELTA_HEADER_SIZE, len - BF_DELTA_HEADER_SIZE);
	return (uint32_t) XXH3_64bits_digest(&state);
}

/* ---------------------------------------------------------------------
 * Checking
 * ---------------------------------------------------------------------
 */

/*
 * Whether the runs tile the delta exactly: nruns of them, each within the
 * delta, the last ending at its end.  Bounded by the length, whatever
 * nruns says, since every run takes at least its 8-byte header.
 */
static bool
runs_fill_delta(const uint8_t *delta, size_t len)
{
	uint32_t	nruns = bf_load_le32(delta + DELTA_NRUNS_AT);
	size_t		at = BF_DELTA_HEADER_SIZE;

	for (uint32_t i = 0; i < nruns; i++)
	{
		uint32_t	count;

		if (len - at < BF_DELTA_RUN_HEADER_SIZE)
			return false;
		count = bf_load_le32(delta + at + 4);
		at += BF_DELTA_RUN_HEADER_SIZE;
		if (count > (len - at) / sizeof(uint64_t))
			return false;
		at += (size_t) count * sizeof(uint64_t);
	}
	return at == len;
}

/*
 * Whether the header is one a writer could have written: a filter of fixed
 * size has one segment and no growth, a chain a growth and segment count in
 * range, and the kind is a real one.
 */
static bool
header_consistent(const uint8_t *delta)
{
	uint32_t	nsegments = bf_load_le32(delta + DELTA_NSEGMENTS_AT);
	uint8_t		growth = delta[DELTA_GROWTH_AT];
	uint8_t		kind = delta[DELTA_KIND_AT];

	if (delta[DELTA_RESERVED_AT] != 0)
		return false;
	if (kind == BF_KIND_NONE || kind > BF_KIND_LAST ||
		(kind != BF_KIND_OTHER && bf_load_le32(delta + DELTA_TAG_AT) != 0))
		return false;
	if (delta[DELTA_LAYOUT_AT] == BF_LAYOUT_BLOCKED512)
		return growth == 0 && nsegments == 1;
	if (delta[DELTA_LAYOUT_AT] == BF_LAYOUT_CHAINED)
		return growth >= BF_MIN_GROWTH && growth <= BF_MAX_GROWTH &&
			nsegments >= 1 && nsegments <= BF_MAX_SEGMENTS;
	return false;
}

/* Whether every run has a hash and a segment the delta's filter has. */
static bool
runs_consistent(const uint8_t *delta)
{
	uint32_t	nruns = bf_load_le32(delta + DELTA_NRUNS_AT);
	uint32_t	nsegments = bf_load_le32(delta + DELTA_NSEGMENTS_AT);
	size_t		at = BF_DELTA_HEADER_SIZE;

	for (uint32_t i = 0; i < nruns; i++)
	{
		uint32_t	count = bf_load_le32(delta + at + 4);

		if (count == 0 || bf_load_le32(delta + at) >= nsegments)
			return false;
		at += BF_DELTA_RUN_HEADER_SIZE + (size_t) count * sizeof(uint64_t);
	}
	return true;
}

/* Whether the delta names the copy's filter. */
static bool
delta_belongs_to(const uint8_t *delta, const BfHeader *header)
{
	return bf_load_le64(delta + DELTA_SEED_AT) == header->seed &&
		bf_load_le64(delta + DELTA_CAPACITY_AT) == header->capacity &&
		bf_load_le64(delta + DELTA_FPR_AT) == fpr_bits_of(header->fpr) &&
		delta[DELTA_KIND_AT] == header->identity.kind &&
		bf_load_le32(delta + DELTA_TAG_AT) == header->identity.tag &&
		delta[DELTA_GROWTH_AT] == (bf_is_chain(header) ? header->growth : 0) &&
		bf_same_hashing(delta[DELTA_FORMAT_AT], header->version) &&
		delta[DELTA_LAYOUT_AT] == header->layout &&
		bf_load_le32(delta + DELTA_NSEGMENTS_AT) >= header->nsegments;
}

/*
 * The damage checks come first, in the order that lets each read what it
 * needs (the runs' walk needs only the length; the checksum is over bytes
 * the walk has bounded), then whether the delta is the copy's.  The copy's
 * bytes are not read: bf_validate judged them, and the delta names only
 * header fields and segments.  value stays in the signature beside len
 * for the symmetry with bf_delta_apply.
 */
BfStatus
bf_delta_check(const uint8_t *value, size_t len, const BfHeader *header,
			   const uint8_t *delta, size_t delta_len, size_t *new_len,
			   BfSizingMemo *memo)
{
	BfHeader	grown = *header;
	uint32_t	nsegments;

	(void) value;
	if (delta_len < BF_DELTA_HEADER_SIZE)
		return BF_ERR_DELTA_LENGTH;
	if (delta[0] != BF_DELTA_MAGIC_0 || delta[1] != BF_DELTA_MAGIC_1)
		return BF_ERR_DELTA_MAGIC;
	if (delta[DELTA_VERSION_AT] != BF_DELTA_VERSION)
		return BF_ERR_DELTA_VERSION;
	if (!runs_fill_delta(delta, delta_len))
		return BF_ERR_DELTA_LENGTH;
	if (bf_load_le32(delta + DELTA_CHECKSUM_AT) != bf_delta_checksum(delta, delta_len))
		return BF_ERR_DELTA_CHECKSUM;
	if (!header_consistent(delta))
		return BF_ERR_DELTA_HEADER;
	if (!runs_consistent(delta))
		return BF_ERR_DELTA_RUN;
	if (!delta_belongs_to(delta, header))
		return BF_ERR_DELTA_MISMATCH;

	/* the length the copy takes once grown to the delta's segments */
	nsegments = bf_load_le32(delta + DELTA_NSEGMENTS_AT);
	while (grown.nsegments < nsegments)
	{
		BfSegment	next;
		BfStatus	status = bf_chain_next(&grown, len, &next, &len, memo);

		if (status != BF_OK)
			return status;
		grown.nsegments++;
	}
	*new_len = len;
	return BF_OK;
}

/* ---------------------------------------------------------------------
 * Applying
 * ---------------------------------------------------------------------
 */

/* Adds a run's count hashes, stored at hashes, to a segment's bits. */
static void
add_run(uint8_t *value, const BfSegment *segment, const uint8_t *hashes, uint32_t count)
{
	uint64_t	batch[APPLY_BATCH];

	for (uint32_t done = 0; done < count;)
	{
		uint32_t	n = count - done < APPLY_BATCH ? count - done : APPLY_BATCH;

		for (uint32_t i = 0; i < n; i++)
			batch[i] = bf_load_le64(hashes + (size_t) (done + i) * sizeof(uint64_t));
		bf_add_hashes(value + segment->bits, segment->nblocks, segment->k, batch, n);
		done += n;
	}
}

void
bf_delta_apply(uint8_t *value, size_t len, size_t new_len, BfHeader *header,
			   const uint8_t *delta, size_t delta_len, BfSizingMemo *memo,
			   const BfHooks *hooks)
{
	BfSegment	segments[BF_MAX_SEGMENTS];
	uint32_t	nsegments = bf_load_le32(delta + DELTA_NSEGMENTS_AT);
	uint32_t	nruns = bf_load_le32(delta + DELTA_NRUNS_AT);
	size_t		at = BF_DELTA_HEADER_SIZE;

	(void) new_len;				/* what bf_delta_check said len grows to */
	(void) delta_len;			/* bf_delta_check bounded the runs by it */
	while (header->nsegments < nsegments)
	{
		BfSegment	next;
		size_t		grown_len;

		(void) bf_chain_next(header, len, &next, &grown_len, memo);	/* checked */
		bf_chain_append(value, header, len, &next, hooks);
		len = grown_len;
	}

	bf_segment_first(value, header, &segments[0]);
	for (uint32_t i = 1; i < header->nsegments; i++)
	{
		segments[i] = segments[i - 1];
		bf_segment_next(value, header, &segments[i]);
	}

	for (uint32_t r = 0; r < nruns; r++)
	{
		BfSegment  *segment = &segments[bf_load_le32(delta + at)];
		uint32_t	count = bf_load_le32(delta + at + 4);

		at += BF_DELTA_RUN_HEADER_SIZE;
		add_run(value, segment, delta + at, count);
		at += (size_t) count * sizeof(uint64_t);
		segment->inserted = bf_count_add(segment->inserted, count);
		header->inserted = bf_count_add(header->inserted, count);
	}

	/* a fixed filter's one count is the header's, written below */
	if (bf_is_chain(header))
		for (uint32_t i = 0; i < header->nsegments; i++)
			bf_segment_store_inserted(value, &segments[i]);
	bf_seal(value, len, header);	/* one pass: the body check */
}
