/*-------------------------------------------------------------------------
 *
 * fuzz_delta.c
 *	  libFuzzer target: arbitrary bytes as a delta (delta.h) against copies
 *	  of an index's filter, of fixed size and chains (delta_copies.h):
 *	  bf_delta_check must give a clear status, never crash, and a delta it
 *	  accepts must never leave the copy shrunken or missing a bit.
 *
 * An input is a mode byte (which copy; whether to rewrite the checksum
 * first, so that mutations reach the checks behind it) and the delta.
 *
 * The verdict is checked against the format read again from delta.h here,
 * apart from delta.c: the runs walked, the checksum computed in one piece
 * over the covered bytes laid end to end, the header's consistency and the
 * copy's parameters.  bf_delta_check must give exactly that status, except
 * that where the reference accepts, growing the copy to the delta's
 * segments may be refused with bf_chain_next's own status (too large, too
 * many segments, an unreachable rate).
 *
 * On an accepted delta, applied to a private copy grown with realloc to the
 * length the check gave:
 *	- the copy validates, its header is the one bf_delta_apply left, it has
 *	  the delta's segments and exactly the length the check said;
 *	- it is no shorter, and a superset: every segment it had keeps its
 *	  place and every bit, and no count goes down;
 *	- the header's inserted grew by the delta's hashes (saturating), and
 *	  every hash of the delta is found;
 *	- the same delta again is accepted, changes no bit, and counts again;
 *	- its runs written again through the writer (bf_delta_start, _add,
 *	  _finish) give the same bytes, when no two neighbouring runs share a
 *	  segment (the writer merges those), and in any case a delta that
 *	  makes the same copy.
 * Copies past COPY_LIMIT bytes are checked but not applied: a delta may
 * name 32 segments of a chain, hundreds of megabytes, which only costs the
 * fuzzer its memory limit.
 *
 *-------------------------------------------------------------------------
 */
#include "delta.h"
#include "delta_copies.h"
#include "fuzz_check.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define COPY_LIMIT ((size_t) 16 * 1024 * 1024)

static DeltaCopy pristine[DELTA_NCOPIES];
static bool built;

static uint64_t
slow_load(const uint8_t *p, int bytes)
{
	uint64_t	v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t) p[i] << (8 * i);
	return v;
}

/* The checksum of delta.h, in one piece over a copy of the covered bytes. */
static uint32_t
slow_checksum(const uint8_t *delta, size_t len)
{
	uint8_t    *covered = malloc(len - 4);
	uint32_t	sum;

	FUZZ_CHECK(covered != NULL);
	memcpy(covered, delta, 44);
	memcpy(covered + 44, delta + 48, len - 48);
	sum = (uint32_t) XXH3_64bits(covered, len - 4);
	free(covered);
	return sum;
}

static void
store_checksum(uint8_t *delta, size_t len)
{
	uint32_t	sum = slow_checksum(delta, len);

	for (int i = 0; i < 4; i++)
		delta[44 + i] = (uint8_t) (sum >> (8 * i));
}

/*
 * The status delta.h's rules give, in delta.h's order of checks; *hashes
 * the hashes the runs hold when they tile the delta.
 */
static BfStatus
reference_status(const uint8_t *d, size_t len, const BfHeader *h, uint64_t *hashes)
{
	uint64_t	nruns;
	uint64_t	nsegments;
	uint64_t	at = 48;
	uint8_t		kind;
	uint8_t		layout;
	uint8_t		growth;
	uint64_t	fpr_bits;

	if (len < 48)
		return BF_ERR_DELTA_LENGTH;
	if (d[0] != 'B' || d[1] != 'D')
		return BF_ERR_DELTA_MAGIC;
	if (d[2] != 1)
		return BF_ERR_DELTA_VERSION;
	nruns = slow_load(d + 40, 4);
	*hashes = 0;
	for (uint64_t i = 0; i < nruns; i++)
	{
		uint64_t	count;

		if (at + 8 > len)
			return BF_ERR_DELTA_LENGTH;
		count = slow_load(d + at + 4, 4);
		at += 8 + 8 * count;
		*hashes += count;
		if (at > len)
			return BF_ERR_DELTA_LENGTH;
	}
	if (at != len)
		return BF_ERR_DELTA_LENGTH;
	if (slow_load(d + 44, 4) != slow_checksum(d, len))
		return BF_ERR_DELTA_CHECKSUM;

	nsegments = slow_load(d + 4, 4);
	kind = d[32];
	growth = d[33];
	layout = d[35];
	if (d[3] != 0 || kind == BF_KIND_NONE || kind > BF_KIND_LAST ||
		(kind != BF_KIND_OTHER && slow_load(d + 36, 4) != 0) ||
		!((layout == BF_LAYOUT_BLOCKED512 && growth == 0 && nsegments == 1) ||
		  (layout == BF_LAYOUT_CHAINED && growth >= 2 && growth <= 16 &&
		   nsegments >= 1 && nsegments <= BF_MAX_SEGMENTS)))
		return BF_ERR_DELTA_HEADER;

	at = 48;
	for (uint64_t i = 0; i < nruns; i++)
	{
		uint64_t	count = slow_load(d + at + 4, 4);

		if (count == 0 || slow_load(d + at, 4) >= nsegments)
			return BF_ERR_DELTA_RUN;
		at += 8 + 8 * count;
	}

	memcpy(&fpr_bits, &h->fpr, sizeof(fpr_bits));
	if (slow_load(d + 8, 8) != h->seed || slow_load(d + 16, 8) != h->capacity ||
		slow_load(d + 24, 8) != fpr_bits || kind != h->identity.kind ||
		slow_load(d + 36, 4) != h->identity.tag ||
		growth != (h->layout == BF_LAYOUT_CHAINED ? h->growth : 0) ||
		(d[34] == 1) != (h->version == 1) || layout != h->layout || nsegments < h->nsegments)
		return BF_ERR_DELTA_MISMATCH;
	return BF_OK;
}

/* What growing a chain may answer instead of BF_OK. */
static bool
growth_refusal(BfStatus status)
{
	return status == BF_ERR_TOO_LARGE || status == BF_ERR_SEGMENTS ||
		status == BF_ERR_FPR_UNREACHABLE || status == BF_ERR_FPR ||
		status == BF_ERR_CAPACITY;
}

/* Headers equal field by field (padding is not a value; fpr by its bits). */
static bool
headers_equal(const BfHeader *a, const BfHeader *b)
{
	return a->version == b->version && a->layout == b->layout && a->k == b->k &&
		a->identity.kind == b->identity.kind && a->identity.tag == b->identity.tag &&
		a->identity.env_encoding == b->identity.env_encoding && a->identity.env_locale == b->identity.env_locale &&
		a->nblocks == b->nblocks && a->seed == b->seed && a->capacity == b->capacity &&
		memcmp(&a->fpr, &b->fpr, sizeof(double)) == 0 && a->inserted == b->inserted &&
		a->growth == b->growth && a->nsegments == b->nsegments;
}

/*
 * Whether after is a superset of before: each segment before had is at the
 * same place with the same size, every bit still set and no smaller count.
 */
static bool
superset(const DeltaCopy *before, const uint8_t *after, const BfHeader *after_header)
{
	BfSegment	old;
	BfSegment	now;

	if (after_header->inserted < before->header.inserted ||
		after_header->nsegments < before->header.nsegments)
		return false;
	bf_segment_first(before->value, &before->header, &old);
	bf_segment_first(after, after_header, &now);
	for (;;)
	{
		size_t		nbytes = (size_t) old.nblocks * BF_BLOCK_BYTES;

		if (now.bits != old.bits || now.nblocks != old.nblocks || now.k != old.k ||
			now.inserted < old.inserted)
			return false;
		for (size_t i = 0; i < nbytes; i++)
			if ((before->value[old.bits + i] & ~after[now.bits + i]) != 0)
				return false;
		if (!bf_segment_next(before->value, &before->header, &old))
			return true;
		if (!bf_segment_next(after, after_header, &now))
			return false;
	}
}

static bool
holds_every_hash(const uint8_t *value, const BfHeader *header, const uint8_t *d, size_t len)
{
	size_t		at = 48;

	while (at < len)
	{
		uint32_t	count = (uint32_t) slow_load(d + at + 4, 4);

		at += 8;
		for (uint32_t i = 0; i < count; i++, at += 8)
			if (!bf_filter_test(value, header, slow_load(d + at, 8)))
				return false;
	}
	return true;
}

/*
 * The delta's runs written again by the core's writer into a new buffer;
 * *canonical says whether the input had no neighbouring runs of one
 * segment, so that the two must be equal.
 */
static uint8_t *
rewrite(const uint8_t *d, size_t len, const BfHeader *header, size_t *out_len,
		bool *canonical)
{
	uint32_t	nruns = (uint32_t) slow_load(d + 40, 4);
	uint64_t	nhashes = (len - 48 - 8 * (uint64_t) nruns) / 8;
	uint8_t    *out = malloc(bf_delta_bytes(nruns, nhashes));
	BfDeltaWriter writer;
	size_t		at = 48;
	int64_t		previous = -1;
	BfHeader	as_logged = *header;

	FUZZ_CHECK(out != NULL);
	*canonical = true;
	/* the index's version, which may be the other of two that hash alike */
	as_logged.version = d[34];
	bf_delta_start(&writer, out, &as_logged, (uint32_t) slow_load(d + 4, 4));
	while (at < len)
	{
		uint32_t	segment = (uint32_t) slow_load(d + at, 4);
		uint32_t	count = (uint32_t) slow_load(d + at + 4, 4);

		*canonical = *canonical && segment != previous;
		previous = segment;
		at += 8;
		for (uint32_t i = 0; i < count; i++, at += 8)
			bf_delta_add(&writer, segment, slow_load(d + at, 8));
	}
	*out_len = bf_delta_finish(&writer);
	FUZZ_CHECK(*out_len <= bf_delta_bytes(nruns, nhashes));
	return out;
}

static void
fuzz_one(int which, const uint8_t *delta, size_t delta_len)
{
	const DeltaCopy *copy = &pristine[which];
	BfHeader	header = copy->header;
	BfHeader	decoded;
	uint64_t	nhashes = 0;
	size_t		new_len = 0;
	BfStatus	expected = reference_status(delta, delta_len, &copy->header, &nhashes);
	BfStatus	status = bf_delta_check(copy->value, copy->len, &header, delta, delta_len,
										&new_len, &sizing_memo);
	uint8_t    *value;
	uint8_t    *again;

	FUZZ_CHECK(status == expected || (expected == BF_OK && growth_refusal(status)));
	FUZZ_CHECK(strcmp(bf_status_message(status), "unknown status") != 0);
	FUZZ_CHECK(headers_equal(&header, &copy->header));
	if (status != BF_OK)
		return;
	FUZZ_CHECK(new_len >= copy->len && new_len <= BF_MAX_VALUE_BYTES);
	if (new_len > COPY_LIMIT)
		return;

	value = malloc(new_len);
	FUZZ_CHECK(value != NULL);
	memcpy(value, copy->value, copy->len);
	bf_delta_apply(value, copy->len, new_len, &header, delta, delta_len, &sizing_memo, NULL);

	FUZZ_CHECK(bf_validate(value, new_len, &decoded, &sizing_memo) == BF_OK);
	FUZZ_CHECK(headers_equal(&decoded, &header));
	FUZZ_CHECK(header.nsegments == slow_load(delta + 4, 4));
	FUZZ_CHECK(superset(copy, value, &header));
	FUZZ_CHECK(header.inserted == bf_count_add(copy->header.inserted, nhashes));
	FUZZ_CHECK(holds_every_hash(value, &header, delta, delta_len));

	/* the writer gives this delta back, or one that makes the same copy */
	{
		bool		canonical;
		size_t		written_len;
		uint8_t    *written = rewrite(delta, delta_len, &copy->header, &written_len,
									  &canonical);
		BfHeader	rewritten = copy->header;
		size_t		rewritten_len;

		if (canonical)
			FUZZ_CHECK(written_len == delta_len && memcmp(written, delta, delta_len) == 0);
		FUZZ_CHECK(bf_delta_check(copy->value, copy->len, &rewritten, written, written_len,
								  &rewritten_len, &sizing_memo) == BF_OK && rewritten_len == new_len);
		again = malloc(new_len);
		FUZZ_CHECK(again != NULL);
		memcpy(again, copy->value, copy->len);
		bf_delta_apply(again, copy->len, new_len, &rewritten, written, written_len, &sizing_memo, NULL);
		FUZZ_CHECK(memcmp(again, value, new_len) == 0 && headers_equal(&rewritten, &header));
		free(again);
		free(written);
	}

	/* once more: accepted, at the same length, no new bit, counted again */
	FUZZ_CHECK(bf_delta_check(value, new_len, &header, delta, delta_len, &new_len, &sizing_memo) == BF_OK);
	again = malloc(new_len);
	FUZZ_CHECK(again != NULL);
	memcpy(again, value, new_len);
	decoded = header;
	bf_delta_apply(again, new_len, new_len, &decoded, delta, delta_len, &sizing_memo, NULL);
	FUZZ_CHECK(decoded.inserted == bf_count_add(header.inserted, nhashes));
	{
		BfSegment	a;
		BfSegment	b;

		bf_segment_first(value, &header, &a);
		bf_segment_first(again, &decoded, &b);
		do
		{
			FUZZ_CHECK(memcmp(value + a.bits, again + b.bits,
							  (size_t) a.nblocks * BF_BLOCK_BYTES) == 0);
			FUZZ_CHECK(bf_segment_next(again, &decoded, &b) ==
					   (a.index + 1 < header.nsegments));
		} while (bf_segment_next(value, &header, &a));
	}
	free(again);
	free(value);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t    *delta;
	size_t		len;
	int			which;

	if (!built)
	{
		for (int i = 0; i < DELTA_NCOPIES; i++)
			pristine[i] = delta_copy_build(i);
		built = true;
	}
	if (size < 1)
		return 0;
	which = data[0] % DELTA_NCOPIES;
	len = size - 1;

	/* An exact-size heap copy, so that ASan sees any read past its end. */
	delta = malloc(len > 0 ? len : 1);
	FUZZ_CHECK(delta != NULL);
	memcpy(delta, data + 1, len);
	if ((data[0] & DELTA_MODE_RECHECKSUM) && len >= 48)
		store_checksum(delta, len);
	fuzz_one(which, delta, len);
	free(delta);
	return 0;
}
