/*-------------------------------------------------------------------------
 *
 * delta.h
 *	  Deltas of a bloomfilter index (delta.c, pure core): the keys an index
 *	  took after some WAL position, as the server sends them to a copy of
 *	  the index's filter so that the copy catches up without a new
 *	  snapshot.  It owns the delta format, its writer (the server's
 *	  bloom_index_changes), its one checker and its application (the
 *	  server's bloom_apply_changes and the client library's
 *	  bfc_apply_changes).
 *
 * A delta carries key hashes (bf_hash values, as the index adds them),
 * grouped in runs by the segment of the index's filter each went to.  All
 * integers are little-endian:
 *
 *	offset	size	field
 *	0		2		magic "BD"
 *	2		1		delta format version (1)
 *	3		1		reserved, zero
 *	4		4		nsegments: segments of the index's filter at the delta's
 *					end (1 for a filter of fixed size, 1..BF_MAX_SEGMENTS)
 *	8		8		seed of the filter it applies to
 *	16		8		capacity (the filter header's)
 *	24		8		target fpr (IEEE 754 double bits, the header's)
 *	32		1		key kind (BfKeyKind; never BF_KIND_NONE)
 *	33		1		growth (0 for a filter of fixed size)
 *	34		1		the filter's format version (1, 2 or 3; 2 and 3 hash
 *					alike and so match each other)
 *	35		1		layout (BF_LAYOUT_BLOCKED512 or BF_LAYOUT_CHAINED)
 *	36		4		key tag
 *	40		4		nruns
 *	44		4		checksum: low half of the XXH3-64 (seed 0) of bytes 0..43
 *					followed by every byte from 48 on
 *	48		...		nruns runs, each: u32 segment (0-based), u32 count
 *					(at least 1), count u64 hashes
 *
 * A delta is about 8 bytes per key: a run header per change of segment and
 * the hashes themselves, which is what a copy must set bits for.  Carrying
 * the hashes rather than the bits they set makes the delta independent of
 * the copy's geometry beyond the parameters the header names, and lets the
 * copy count its keys as the index counts them, so that a copy brought up
 * to date equals the index's snapshot byte for byte.
 *
 * A delta that is damaged (length, magic, version, checksum, header, runs)
 * or belongs to another filter (seed, capacity, rate, kind, tag, growth,
 * format version, layout, or a copy with more segments than the delta: a
 * copy of another build of the index) is refused whole by bf_delta_check:
 * nothing of it is applied, so a copy is never left partly updated, and
 * never shrinks.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_DELTA_H
#define BF_DELTA_H

#include "bloom.h"

#define BF_DELTA_MAGIC_0	'B'
#define BF_DELTA_MAGIC_1	'D'
#define BF_DELTA_VERSION	1
#define BF_DELTA_HEADER_SIZE 48
#define BF_DELTA_RUN_HEADER_SIZE 8

/*
 * A delta being written into caller-provided memory: bf_delta_start, one
 * bf_delta_add per hash, bf_delta_finish.
 */
typedef struct BfDeltaWriter
{
	uint8_t    *out;
	size_t		len;			/* bytes written so far */
	size_t		run;			/* offset of the open run; 0: none yet */
	uint32_t	segment;		/* the open run's segment */
	uint32_t	count;			/* hashes in the open run */
	uint32_t	nruns;
} BfDeltaWriter;

/* Bytes of a delta of nruns runs holding nhashes hashes in all. */
extern BF_HIDDEN size_t bf_delta_bytes(uint32_t nruns, uint64_t nhashes);

/*
 * Writing.  out has bf_delta_bytes() room for the runs the adds will make:
 * a run starts with the first add and whenever an add's segment differs
 * from the one before (and, past any size a bytea can hold, every
 * UINT32_MAX hashes).  filter is the header of the index's filter, whose
 * parameters the delta names; nsegments its segments at the delta's end.
 * bf_delta_finish writes nruns and the checksum and returns the length.
 */
extern BF_HIDDEN void bf_delta_start(BfDeltaWriter *writer, uint8_t *out,
									 const BfHeader *filter, uint32_t nsegments);
extern BF_HIDDEN void bf_delta_add(BfDeltaWriter *writer, uint32_t segment, uint64_t hash);
extern BF_HIDDEN size_t bf_delta_finish(BfDeltaWriter *writer);

/* The checksum of a delta of len >= BF_DELTA_HEADER_SIZE bytes (offset 44). */
extern BF_HIDDEN uint32_t bf_delta_checksum(const uint8_t *delta, size_t len);

/*
 * Checks a delta against a copy: value and len are the copy, header its
 * header as bf_validate read it.  BF_OK, with *new_len the copy's length
 * once grown to the delta's segments, or why the delta is refused.  A chain
 * copy's growth is sized (bf_chain_next), from the caller's memo.
 */
extern BF_HIDDEN BfStatus bf_delta_check(const uint8_t *value, size_t len,
										 const BfHeader *header, const uint8_t *delta,
										 size_t delta_len, size_t *new_len,
										 BfSizingMemo *memo);

/*
 * Applies a delta that bf_delta_check accepted for this copy: value has
 * room for new_len bytes, its first len the copy.  Grows a chain to the
 * delta's segments, adds every hash to its run's segment, counts each in
 * that segment and the header, and rewrites the header into value and
 * *header.  A new segment is cleared with hooks' pauses (bf_zero).
 */
extern BF_HIDDEN void bf_delta_apply(uint8_t *value, size_t len, size_t new_len,
									 BfHeader *header, const uint8_t *delta,
									 size_t delta_len, BfSizingMemo *memo,
									 const BfHooks *hooks);

#endif							/* BF_DELTA_H */
