/*-------------------------------------------------------------------------
 *
 * qfilter.h
 *	  The pure core of qfilter (qfilter.c): a rank-select quotient filter
 *	  that stores a multiset of fingerprints, so keys can be counted and
 *	  removed, and two filters merge by a linear, deterministic merge.  It
 *	  owns the qfilter format and its one validator, sizing and growth, and
 *	  every operation on the slots.
 *
 * Like bloom.h: no PostgreSQL header, no allocation, no throwing.  Growth
 * needs a larger buffer, so an insert that does not fit says so
 * (QF_ERR_FULL) and the caller rebuilds into a buffer qf_grown_header
 * sizes.
 *
 * A key's fingerprint is F = floor(hash * M / 2^64), hash being the key's
 * 64-bit hash (keykind.c, the same routine as bloom's), and M = nq * 2^r
 * the fingerprint universe: nq home slots (a multiple of 64) and r
 * remainder bits.  F's quotient F >> r is its home slot and its low r bits
 * the remainder stored there.  Doubling nq takes one bit from the remainder,
 * so M and every fingerprint stay the same as a filter grows: growth and
 * unions of filters of different sizes are exact.  The false-positive rate
 * of a filter holding n fingerprints is about n / M; sizing picks M so that
 * it is at most the target at capacity.  Past it a filter keeps growing,
 * exactly, while its fingerprints have remainder bits left, and its rate
 * rises with n: the glue warns once it passes twice the target, as an
 * overfilled bloom does.
 *
 * Serialised format (integers little-endian):
 *
 *	offset	size	field
 *	0		2		magic "QF"
 *	2		1		format version (1 or 2)
 *	3		1		r, remainder bits (0..QF_MAX_R)
 *	4		1		key kind (BfKeyKind, bloom.h)
 *	5		1		environment encoding (as bloom's version 2 header)
 *	6		2		reserved, zero
 *	8		4		key tag (as bloom's)
 *	12		4		environment locale fingerprint (as bloom's)
 *	16		8		hash seed
 *	24		8		capacity the filter was sized for
 *	32		8		target false-positive rate (IEEE 754 double)
 *	40		8		count: fingerprints stored (adds minus removes)
 *	48		4		home blocks (nq / 64)
 *	52		4		total blocks (home blocks and the spare blocks that
 *					runs of the last home slots spill into)
 *	56		4		checksum: low half of the XXH3-64 of bytes 0..55
 *					(v2: followed by bytes 60..63)
 *	60		4		v2: body check, bloom's body sum (bloom.h, "The
 *					body check") over every byte from 64 on;
 *					v1: reserved, zero
 *	64		...		total blocks, each QF_BLOCK_FIXED + 8 * r bytes:
 *					  0  8  occupieds: bit j set if slot 64b+j is the home
 *					        of some fingerprint
 *					  8  8  runends: bit j set if slot 64b+j ends a run
 *					  16 4  offset: slots at the block's start taken by runs
 *					        whose home is in an earlier block
 *					  20 8r 64 remainders of r bits, slot j at bit j*r
 *	then	8		zero padding (remainders are read 8 bytes at a time)
 *
 * Runs are kept in home-slot order and each run's remainders in increasing
 * order, so the slots are a function of the multiset of fingerprints and
 * the size alone: equal multisets of equal size have equal bytes.
 *
 * The body check (version 2).  The slot invariants qf_validate checks catch
 * most damage but not all (a remainder's bits are free: a changed one is
 * another fingerprint, and a count read as absent): version 2 adds bloom's
 * linear body sum, which detects every damaged byte exactly.  Inserts and
 * removes shift slots, so the sum is not followed step by step:
 * qf_write_header, which every producer calls once when its value is done,
 * computes it over the whole value and writes version 2 whatever version
 * was read (the versions hash alike).  Version 1 values (1.0) are read and
 * checked by their header checksum and the slot invariants only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QF_CORE_H
#define QF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bf_port.h"
#include "bloom.h"

#define QF_MAGIC_0			'Q'
#define QF_MAGIC_1			'F'
#define QF_FORMAT_VERSION	2		/* written by every producer */
#define QF_FORMAT_VERSION_MIN 1	/* oldest still read */
#define QF_HEADER_SIZE		64
#define QF_BLOCK_SLOTS		64
#define QF_BLOCK_FIXED		20	/* occupieds, runends, offset */
#define QF_TAIL_PADDING		8
#define QF_MAX_R			57	/* a remainder and its shift fit 64 bits */

/*
 * Highest share of home slots in use: a quotient filter's runs grow long
 * as it fills, and rank-select keeps probes short up to about 95%.
 */
#define QF_MAX_LOAD			0.95

typedef enum QfStatus
{
	QF_OK = 0,
	QF_ERR_TRUNCATED,
	QF_ERR_MAGIC,
	QF_ERR_VERSION,
	QF_ERR_KIND,
	QF_ERR_RESERVED,
	QF_ERR_CHECKSUM,
	QF_ERR_SIZE,				/* blocks or r do not match capacity and fpr */
	QF_ERR_LENGTH,
	QF_ERR_CAPACITY,
	QF_ERR_FPR,
	QF_ERR_FPR_UNREACHABLE,
	QF_ERR_TOO_LARGE,
	QF_ERR_SLOTS,				/* the slots break the filter's invariants */
	QF_ERR_COUNT,				/* count differs from the slots in use */
	QF_ERR_FULL,				/* no room: grow into a larger buffer */
	QF_ERR_LIMIT,				/* cannot grow: no remainder bit left */
	QF_ERR_BODY_CHECKSUM		/* v2: the body does not match its check */
} QfStatus;

/* The decoded header. */
typedef struct QfHeader
{
	uint8_t		version;
	uint8_t		r;
	BfKeyIdentity identity;		/* bloom's, environment always recorded */
	uint64_t	seed;
	uint64_t	capacity;
	double		fpr;
	uint64_t	count;
	uint32_t	home_blocks;
	uint32_t	total_blocks;
	uint32_t	body_check;		/* v2: the body sum, as read (qf_write_header
								 * computes its own) */
} QfHeader;

extern BF_HIDDEN const char *qf_status_message(QfStatus status);

/*
 * The one sizing routine: home blocks and remainder bits of a new filter
 * for (capacity, fpr).  Fills header->r, home_blocks and total_blocks.
 */
extern BF_HIDDEN QfStatus qf_size_for(uint64_t capacity, double fpr, QfHeader *header);


/* Bytes of a value with the header's blocks and r. */
extern BF_HIDDEN size_t qf_value_bytes(const QfHeader *header);

/*
 * The header of the empty filter that header grows into when full: twice
 * the home slots, one remainder bit fewer, the same fingerprints.  Past the
 * capacity the rate rises with the count (the fingerprints' universe stays);
 * the glue warns.  QF_ERR_LIMIT when it cannot grow (no remainder bit
 * left), QF_ERR_TOO_LARGE past the size cap.
 */
extern BF_HIDDEN QfStatus qf_grown_header(const QfHeader *header, QfHeader *grown);

/*
 * The header of a filter with header's parameters, just large enough for
 * count fingerprints: the size a bulk build (aggregate, union) starts at.
 */
extern BF_HIDDEN QfStatus qf_header_for_count(const QfHeader *params, uint64_t count,
											  QfHeader *sized);

/*
 * qf_write_header finishes a value: version 2, the body check computed
 * over the whole value (qf_value_bytes(header) bytes), then the header.
 * qf_encode_header writes the 64 header bytes alone, of header's version
 * and with its body_check as it is: a decoded header encodes to its bytes.
 */
extern BF_HIDDEN void qf_write_header(uint8_t *value, const QfHeader *header);
extern BF_HIDDEN void qf_encode_header(uint8_t *value, const QfHeader *header);
extern BF_HIDDEN QfStatus qf_read_header(const uint8_t *value, size_t len, QfHeader *header);

/* The whole value: header, length and every slot invariant. */
extern BF_HIDDEN QfStatus qf_validate(const uint8_t *value, size_t len, QfHeader *header);

/* An empty filter: the header written, every slot zero (bf_zero's slices). */
extern BF_HIDDEN void qf_init(uint8_t *value, const QfHeader *header, const BfHooks *hooks);

/* Same parameters: a union is defined (sizes may differ). */
extern BF_HIDDEN bool qf_compatible(const QfHeader *a, const QfHeader *b);

/*
 * The fingerprint universe M and a hash's fingerprint in it; inline, as a
 * probe computes one per row.
 */
static inline uint64_t
qf_universe(const QfHeader *header)
{
	return ((uint64_t) header->home_blocks * QF_BLOCK_SLOTS) << header->r;
}

static inline uint64_t
qf_fingerprint(const QfHeader *header, uint64_t hash)
{
	return (uint64_t) (((unsigned __int128) hash * qf_universe(header)) >> 64);
}

/*
 * Operations on fingerprints.  qf_insert adds one copy (QF_ERR_FULL if the
 * buffer has no room: grow and retry);
 * qf_remove removes one copy and says whether there was one; qf_count
 * counts copies.  They keep header->count current, not the value's header:
 * write it with qf_write_header after a batch (the checksum covers it).
 */
extern BF_HIDDEN QfStatus qf_insert(uint8_t *value, QfHeader *header, uint64_t fingerprint);
extern BF_HIDDEN bool qf_remove(uint8_t *value, QfHeader *header, uint64_t fingerprint);
extern BF_HIDDEN uint64_t qf_count(const uint8_t *value, const QfHeader *header,
								   uint64_t fingerprint);
extern BF_HIDDEN bool qf_contains(const uint8_t *value, const QfHeader *header,
								  uint64_t fingerprint);

/*
 * Prefetches what qf_contains(value, header, fingerprint) reads first: the
 * home slot's block words and its remainder.  For probes in batches, whose
 * cache misses then overlap.
 */
extern BF_HIDDEN void qf_prefetch(const uint8_t *value, const QfHeader *header,
								  uint64_t fingerprint);

/* Fingerprints in increasing order, each copy once. */
typedef struct QfCursor
{
	uint64_t	quotient;		/* home slot of the current run */
	uint64_t	slot;			/* next slot to read */
	uint64_t	run_end;		/* last slot of the current run */
	bool		in_run;
} QfCursor;

extern BF_HIDDEN void qf_cursor_start(QfCursor *cursor);
extern BF_HIDDEN bool qf_cursor_next(const uint8_t *value, const QfHeader *header,
									 QfCursor *cursor, uint64_t *fingerprint);

/*
 * Builds the empty filter dst from fingerprints in increasing order, and
 * from the multiset sum of two filters (b may be NULL: a copy of a, as
 * growing does).  QF_ERR_FULL: grow dst and start again with an empty one.
 */
extern BF_HIDDEN QfStatus qf_build_sorted(uint8_t *dst, QfHeader *dst_header,
										  const uint64_t *fingerprints, size_t n);
extern BF_HIDDEN QfStatus qf_merge(uint8_t *dst, QfHeader *dst_header,
								   const uint8_t *a, const QfHeader *a_header,
								   const uint8_t *b, const QfHeader *b_header);

/*
 * The same build as a stream, for fingerprints that come in pieces (from a
 * temporary file): qf_append_start, qf_append for each fingerprint in
 * increasing order into an empty dst, qf_append_finish.  QF_ERR_FULL:
 * grow dst and start again.
 */
typedef struct QfAppender
{
	uint64_t	next_free;		/* first slot after the last one written */
	uint64_t	last_home;
	int64_t		last_slot;		/* -1 before the first fingerprint */
} QfAppender;

extern BF_HIDDEN void qf_append_start(QfAppender *app);
extern BF_HIDDEN QfStatus qf_append(uint8_t *dst, QfHeader *dst_header, QfAppender *app,
									uint64_t fingerprint);
extern BF_HIDDEN void qf_append_finish(uint8_t *dst, const QfHeader *dst_header,
									   const QfAppender *app);

/*
 * A merge in steps, for callers that must answer a cancel while a large one
 * runs: qf_merge_start, then qf_merge_step until it reports done, each
 * step doing about budget units of work (a fingerprint, a block, or 64
 * bytes of clearing dst).  With clear_dst, dst is cleared in steps too and
 * need not be initialised; its header is written once it is.  On an error
 * status (QF_ERR_FULL: grow dst) start again.
 */

typedef enum QfMergePhase
{
	QF_MERGE_CLEAR,
	QF_MERGE_APPEND,
	QF_MERGE_OFFSETS
} QfMergePhase;

typedef struct QfMerge
{
	QfCursor	ca;
	QfCursor	cb;
	uint64_t	fa;
	uint64_t	fb;
	bool		has_a;
	bool		has_b;
	QfAppender	app;
	QfMergePhase phase;
	uint64_t	progress;		/* bytes cleared, or blocks of offsets done */
} QfMerge;

extern BF_HIDDEN void qf_merge_start(QfMerge *m, const uint8_t *a, const QfHeader *a_header,
									 const uint8_t *b, const QfHeader *b_header,
									 bool clear_dst);
extern BF_HIDDEN QfStatus qf_merge_step(QfMerge *m, uint8_t *dst, QfHeader *dst_header,
										const uint8_t *a, const QfHeader *a_header,
										const uint8_t *b, const QfHeader *b_header,
										uint64_t budget, bool *done);

/* Sorts n keys in increasing order; tmp has room for n. */
extern BF_HIDDEN void qf_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n);

/* Distinct fingerprints, and the false-positive rate they give. */
extern BF_HIDDEN uint64_t qf_distinct(const uint8_t *value, const QfHeader *header);
extern BF_HIDDEN double qf_estimated_fpr(const QfHeader *header, uint64_t distinct);

#endif							/* QF_CORE_H */
