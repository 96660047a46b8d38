/*-------------------------------------------------------------------------
 *
 * bloom.h
 *	  The filter API of the pure core (bloom.c).  It owns:
 *	    - the serialised format (the header layout below) and its one
 *	      validator, bf_validate, for every value that comes from outside;
 *	    - key kinds and the key identity a filter records (BfKeyIdentity),
 *	      qfilter's too: its rules and the one comparison;
 *	    - the value hash, bf_hash (XXH3-64 of a value's canonical bytes);
 *	    - the cache-line blocked bit layout: adding and testing hashes;
 *	    - chains of segments (layout 2, a growing filter): walking,
 *	      planning and appending segments, creating and growing a chain,
 *	      and adding and testing across them, for values of either layout;
 *	    - set algebra over bit arrays and over whole values (union over
 *	      segments, intersection, with their header updates);
 *	    - estimates over every segment: fill, distinct count, current
 *	      false-positive rate.
 *	  The server and the client library call these same operations, so
 *	  that their answers agree byte for byte by construction.
 *	  Sizing (how many blocks and hashes) is sizing.h's, and the
 *	  aggregates' hash buffers are hashbuf.h's.
 *
 * Nothing here includes a PostgreSQL header, allocates, throws or keeps
 * state of its own.  Every function works on caller-provided memory (a
 * value that grows asks its caller for more through BfHooks; one that
 * sizes uses the caller's BfSizingMemo) and reports problems as a
 * BfStatus, which the SQL glue (bloomvalue.c) turns into an ereport.  That
 * keeps the core buildable with plain cc for unit tests, fuzzing and the
 * client library, and callable from several threads at once.
 *
 * All global symbols start with bf_ so that they can never bind to the
 * server's own bloom_* functions (src/backend/lib/bloomfilter.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_CORE_H
#define BF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Header-only xxHash: nothing to link, and the hash inlines where it runs. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bf_port.h"

/* What the caller lends the core: memory, and pauses (below, with BF_SLICE_BYTES). */
typedef struct BfHooks BfHooks;

/*
 * And the memo of rates sized (sizing.h), which every function that sizes
 * takes: a chain's validation, planning and growth size its segments.
 */
typedef struct BfSizingMemo BfSizingMemo;

/*
 * Serialised format, versions 1, 2 and 3 (all integers little-endian):
 *
 *	offset	size	field
 *	0		2		magic "BF"
 *	2		1		format version (1, 2 or 3)
 *	3		1		layout (1 = blocked, 512-bit blocks)
 *	4		1		k, hash positions per value (1..BF_MAX_K)
 *	5		1		key kind (BfKeyKind)
 *	6		1		v2: environment encoding (0, or the encoding's id + 1);
 *					v1: reserved, must be zero
 *	7		1		reserved, must be zero
 *	8		4		key tag (identifies the type for BF_KIND_OTHER, else 0)
 *	12		4		number of 64-byte blocks
 *	16		8		hash seed
 *	24		8		capacity the filter was sized for
 *	32		8		target false-positive rate (IEEE 754 double)
 *	40		8		inserted count (values added, summed by union)
 *	48		4		checksum: low half of the XXH3-64 of bytes 0..47
 *					(v2, v3: of bytes 0..47 followed by bytes 52..55);
 *					v3: plus the body sum below, modulo 2^32
 *	52		4		v2, v3: environment locale fingerprint (0 when not
 *					recorded); v1: reserved, must be zero
 *	56		...		the bit array: nblocks * 64 bytes
 *
 * The versions differ in how the glue hashes some values, not in the bits:
 * version 2 hashes strings as UTF-8 whatever the server encoding, and
 * fractional numerics by their digits; version 1 hashed the server
 * encoding's bytes and the normalised text.  Version 2 also records, for
 * BF_KIND_OTHER values whose type's own hash depends on the environment,
 * the encoding and a fingerprint of LC_CTYPE and collation they were hashed
 * under (both 0 for every other kind).  New filters are version 2; a
 * version 1 value keeps its version and its hashing when values are added.
 *
 * Layout 2, a chain of segments (a scalable Bloom filter), needs version 2
 * and reuses three header fields: k (offset 4) is zero, the reserved byte 7
 * holds the growth factor (2..16) and offset 12 the number of segments
 * (1..32).  Capacity is the first segment's, fpr the whole chain's target
 * and inserted counts every value added.  The segments follow the header,
 * each a 16-byte descriptor and its bit array:
 *
 *	offset	size	field
 *	0		4		number of 64-byte blocks
 *	4		1		k
 *	5		3		reserved, must be zero
 *	8		8		values this segment took (not already in the chain)
 *	16		...		the bit array: nblocks * 64 bytes
 *
 * Segment i is sized (bf_size_for) for capacity * growth^i values at
 * fpr / 2^(i + 1), so the whole chain stays below fpr however many it
 * holds; the validator insists on exactly those sizes, which stands in for
 * a checksum over the descriptors.  Values go to the last segment; when it
 * has taken its capacity, a new segment starts.
 *
 * Bit i of a block is bit (i % 8) of byte (i / 8), so the bit array has the
 * same bytes on every platform.  The header checksum exists because a flipped
 * bit in k, seed, layout or key kind would otherwise yield a filter that
 * silently answers "absent" for values that were added.
 *
 * The body check (version 3)
 * --------------------------
 * A cleared bit is as bad as a flipped k: a value that was added reads as
 * absent.  Version 3 is version 2 (same hashing, same bits, same offsets)
 * whose checksum field also covers the body, every byte after the header
 * (bit arrays and, in a chain, segment descriptors), through a linear sum
 * over its little-endian 32-bit words w_j:
 *
 *		S = sum of w_j * C_j  (mod 2^32),  C_j = (j * 0x9E3779B1 + 0x7F4A7C15) | 1
 *
 * and the field holds header checksum + S (mod 2^32).  A change d != 0 to
 * one word changes S by d * C_j, and C_j is odd, so it is never 0 mod 2^32:
 * every change confined to one 32-bit word, hence every damaged byte of the
 * body, is detected exactly, not with a probability.  (A damaged header byte
 * changes the XXH3 half: missed with probability 2^-32, as in version 2.)
 * Being linear, S follows an add in O(1): setting bits in word j adds
 * (new - old) * C_j, which is what bf_filter_add and a chain's growth do;
 * whole-value operations (union, intersection, a delta, an aggregate's
 * bulk inserts) recompute it in their one pass, bf_seal.  The header field
 * was the only room in a full 56-byte header; the price is that the header
 * alone (a point probe reads only it and one block) is checked for its
 * structure but not its checksum, which needs the body: a probe trusts a
 * stored value, which bf_validate checked in full on its way in and
 * PostgreSQL's page checksums cover since.
 *
 * Every producer writes version 3 (bf_seal, or the O(1) updates above, on
 * the way out); a version 2 value becomes version 3 the first time it is
 * changed (its body sum computed once).  Version 1 values keep version 1,
 * whose hashing differs, and so have no body check: they, and version 2
 * values from 1.0, are verified by their header checksum and structure
 * (lengths, ranges, segment sizes) only, as 1.0 did.
 */
#define BF_MAGIC_0			'B'
#define BF_MAGIC_1			'F'
#define BF_FORMAT_VERSION	3		/* written by new filters */
#define BF_FORMAT_VERSION_MIN 1	/* oldest still read */
#define BF_LAYOUT_BLOCKED512 1
#define BF_LAYOUT_CHAINED	2
#define BF_SEGMENT_HEADER_SIZE 16
#define BF_MAX_SEGMENTS		32
#define BF_MIN_GROWTH		2
#define BF_MAX_GROWTH		16
#define BF_HEADER_SIZE		56
#define BF_BLOCK_BYTES		64
#define BF_BLOCK_BITS		512
#define BF_MAX_K			32

/*
 * Largest serialised value.  Every value must go through pg_dump and
 * pg_restore, whose COPY moves it as text: "bloom:" and base64, 4
 * characters for every 3 bytes, on one line with the row's other columns,
 * and PostgreSQL allocates at most MaxAllocSize (1 GB - 1, 1073741823
 * bytes) for that line, in the server and in pg_dump alike.  A value of at
 * most 750,000,000 bytes has a text form of at most 1,000,000,006
 * characters, which leaves 73 MB for the other columns; the largest value
 * the block size allows is 749,999,992 bytes, 999,999,998 characters.
 */
#define BF_MAX_VALUE_BYTES	((size_t) 750000000)
#define BF_MAX_BLOCKS \
	((uint32_t) ((BF_MAX_VALUE_BYTES - BF_HEADER_SIZE) / BF_BLOCK_BYTES))

/*
 * What kind of SQL value a filter holds.  Values of one kind hash alike
 * whatever their exact type (int2/int4/int8/numeric are all BF_KIND_NUMBER),
 * and values of different kinds never meet in one filter.  Persisted: never
 * renumber.
 */
typedef enum BfKeyKind
{
	BF_KIND_NONE = 0,			/* no value added yet; takes any kind */
	BF_KIND_NUMBER = 1,			/* int2, int4, int8, numeric */
	BF_KIND_FLOAT = 2,			/* float4, float8 */
	BF_KIND_TEXT = 3,			/* text, varchar, bpchar, name */
	BF_KIND_BYTEA = 4,
	BF_KIND_UUID = 5,
	BF_KIND_BOOL = 6,
	BF_KIND_DATE = 7,
	BF_KIND_TIMESTAMP = 8,
	BF_KIND_TIMESTAMPTZ = 9,
	BF_KIND_OTHER = 10			/* the type's extended hash; key tag says which */
} BfKeyKind;

#define BF_KIND_LAST BF_KIND_OTHER

/*
 * A filter's key identity: the kind of values it holds and, for
 * BF_KIND_OTHER, which type (the tag) and what the type's hash depends on
 * (encoding and locale, zero where nothing is recorded).  A value goes into
 * or is looked up in a filter only under the filter's identity (keykind.c),
 * and two filters or aggregate states combine only when theirs are
 * compatible.  One struct in every header and state that carries it, so
 * that it is copied by assignment and compared in one place; in memory
 * only: each format lays its fields out itself (bloom's header above,
 * qfilter.h's, delta.h's).
 */
typedef struct BfKeyIdentity
{
	uint8_t		kind;			/* BfKeyKind; BF_KIND_NONE before any value */
	uint8_t		env_encoding;	/* BF_KIND_OTHER: the encoding's id + 1, or 0 */
	uint32_t	tag;			/* BF_KIND_OTHER: which type; else 0 */
	uint32_t	env_locale;		/* BF_KIND_OTHER: locale fingerprint, or 0 */
} BfKeyIdentity;

typedef enum BfStatus
{
	BF_OK = 0,
	BF_ERR_TRUNCATED,
	BF_ERR_MAGIC,
	BF_ERR_VERSION,
	BF_ERR_LAYOUT,
	BF_ERR_K,
	BF_ERR_KIND,
	BF_ERR_RESERVED,
	BF_ERR_CHECKSUM,
	BF_ERR_NBLOCKS,
	BF_ERR_LENGTH,
	BF_ERR_CAPACITY,
	BF_ERR_FPR,
	BF_ERR_EMPTY_HAS_BITS,
	BF_ERR_TOO_LARGE,
	BF_ERR_FPR_UNREACHABLE,
	BF_ERR_GROWTH,
	BF_ERR_SEGMENTS,
	BF_ERR_SEGMENT_SIZE,
	BF_ERR_INCOMPATIBLE,
	BF_ERR_NO_MEMORY,
	/* a delta (delta.h) that is damaged */
	BF_ERR_DELTA_LENGTH,
	BF_ERR_DELTA_MAGIC,
	BF_ERR_DELTA_VERSION,
	BF_ERR_DELTA_CHECKSUM,
	BF_ERR_DELTA_HEADER,
	BF_ERR_DELTA_RUN,
	/* a sound delta, of another filter than the copy */
	BF_ERR_DELTA_MISMATCH,
	/* a version 3 value whose body does not match its check */
	BF_ERR_BODY_CHECKSUM
} BfStatus;

/* The decoded header of a filter. */
typedef struct BfHeader
{
	uint8_t		version;
	uint8_t		layout;
	uint8_t		k;
	BfKeyIdentity identity;		/* environment: v2 only, see the format above */
	uint32_t	nblocks;		/* 0 for a chain: see its segments */
	uint64_t	seed;
	uint64_t	capacity;
	double		fpr;
	uint64_t	inserted;
	uint8_t		growth;			/* chain only, else 0 */
	uint32_t	nsegments;		/* 1 unless a chain */
	uint32_t	body_check;		/* v3: the body sum S (see above), else 0 */
} BfHeader;

/*
 * One segment of a value.  A blocked value is a single segment that is the
 * whole filter, so code that walks segments serves both layouts.
 */
typedef struct BfSegment
{
	uint32_t	index;
	uint32_t	nblocks;
	uint8_t		k;
	uint64_t	capacity;
	double		fpr;
	uint64_t	inserted;
	size_t		bits;			/* offset of its bit array in the value */
} BfSegment;

/* Describes a status for an error message. */
extern BF_HIDDEN const char *bf_status_message(BfStatus status);

/* Bytes of a value with nblocks blocks, header included. */
extern BF_HIDDEN size_t bf_value_bytes(uint32_t nblocks);

/*
 * Header encoding, decoding and validation (bf_validate sizes a chain's
 * segments, to check each one's size, from the memo).
 */
extern BF_HIDDEN void bf_write_header(uint8_t *value, const BfHeader *header);
extern BF_HIDDEN BfStatus bf_read_header(const uint8_t *value, size_t len,
							   BfHeader *header);
extern BF_HIDDEN BfStatus bf_validate(const uint8_t *value, size_t len,
							BfHeader *header, BfSizingMemo *memo);
extern BF_HIDDEN BfStatus bf_validate_copy(uint8_t *copy, const uint8_t *value, size_t len,
								 BfHeader *header, BfSizingMemo *memo);
extern BF_HIDDEN void bf_init(uint8_t *value, BfHeader *header, const BfHooks *hooks);
extern BF_HIDDEN bool bf_compatible(const BfHeader *a, const BfHeader *b);

/*
 * The body check.  bf_body_sum is S over nbytes (a multiple of 4) of a
 * body whose first word is word first_word (qfilter's body check is the
 * same sum); bf_body_sum_copy also stores the bytes at dst (unless NULL)
 * as it reads them.  bf_seal is the one way out for a value whose bytes were
 * changed other than through bf_filter_add or a chain's growth: it makes a
 * version 2 header version 3, recomputes S over the len bytes and writes
 * the header.  bf_finish writes the header after a change of header fields
 * alone (S stays), first computing S for a version 2 value.
 */
extern BF_HIDDEN uint32_t bf_body_sum(const uint8_t *body, size_t nbytes, size_t first_word);
extern BF_HIDDEN uint32_t bf_body_sum_copy(uint8_t *dst, const uint8_t *src, size_t nbytes,
								 size_t first_word);
extern BF_HIDDEN void bf_seal(uint8_t *value, size_t len, BfHeader *header);
extern BF_HIDDEN void bf_finish(uint8_t *value, size_t len, BfHeader *header);

/*
 * Whether two headers hash values alike: versions 2 and 3 do (3 only adds
 * the body check), version 1 does not.
 */
static inline bool
bf_same_hashing(uint8_t a, uint8_t b)
{
	return (a == 1) == (b == 1);
}

/*
 * Key identities.  Whether values under a may meet values under b: the same
 * identity, or either of no kind yet (it takes any).  Whether a decoded
 * identity keeps the formats' rules: a known kind with a tag only for
 * BF_KIND_OTHER, and an environment only for BF_KIND_OTHER in a format that
 * records one (bf_records_environment for bloom; qfilter always does).
 */
extern BF_HIDDEN bool bf_key_identity_compatible(const BfKeyIdentity *a,
												 const BfKeyIdentity *b);
extern BF_HIDDEN bool bf_key_identity_kind_valid(const BfKeyIdentity *identity);
extern BF_HIDDEN bool bf_key_identity_environment_valid(const BfKeyIdentity *identity,
														bool recorded);

/*
 * Whether a header records what its values' hashes depend on: version 1
 * did not, and its values keep the hashing they had.
 */
static inline bool
bf_records_environment(const BfHeader *header)
{
	return header->version >= 2;
}

/*
 * The one hash of a value's canonical bytes: XXH3-64 with the filter's seed.
 * Inline because it runs once per row; with a constant length (8 bytes for
 * integers) the compiler also drops XXH3's dispatch on the length.
 */
static inline uint64_t
bf_hash(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

/*
 * The bit layout.  These work on bare bit arrays and do not follow the body
 * check: a value changed through them (or through bf_segment_store_inserted
 * below) leaves by bf_seal, as the aggregates' bulk inserts do; per-key adds
 * go through bf_filter_add, which follows it.
 */
extern BF_HIDDEN uint32_t bf_block_of(uint64_t hash, uint32_t nblocks);
extern BF_HIDDEN void bf_block_add(uint8_t *block, uint64_t hash, int k);
extern BF_HIDDEN bool bf_block_test(const uint8_t *block, uint64_t hash, int k);
extern BF_HIDDEN void bf_add_hashes(uint8_t *bits, uint32_t nblocks, int k,
						  const uint64_t *hashes, size_t n);
extern BF_HIDDEN bool bf_test_hash(const uint8_t *bits, uint32_t nblocks, int k,
						 uint64_t hash);

/*
 * Segments.  bf_check_segments checks that the descriptors a header
 * announces lie within len bytes and fill them exactly, which the walk
 * relies on; bf_validate does it, and so must a reader of a stored value.
 */
extern BF_HIDDEN BfStatus bf_check_segments(const uint8_t *value, size_t len,
											const BfHeader *header);
extern BF_HIDDEN bool bf_is_chain(const BfHeader *header);
extern BF_HIDDEN void bf_segment_first(const uint8_t *value, const BfHeader *header,
									   BfSegment *segment);
extern BF_HIDDEN bool bf_segment_next(const uint8_t *value, const BfHeader *header,
									  BfSegment *segment);
extern BF_HIDDEN void bf_segment_last(const uint8_t *value, const BfHeader *header,
									  BfSegment *segment);
extern BF_HIDDEN void bf_segment_store_inserted(uint8_t *value, const BfSegment *segment);

/*
 * The capacity, rate and size of segment index of a chain; its capacity
 * alone (UINT64_MAX past what a uint64 holds) costs no sizing.
 */
extern BF_HIDDEN BfStatus bf_segment_plan(const BfHeader *header, uint32_t index,
										  BfSegment *segment, BfSizingMemo *memo);
extern BF_HIDDEN uint64_t bf_segment_capacity(const BfHeader *header, uint32_t index);

/*
 * A new chain's header with no segment yet (BF_HEADER_SIZE bytes): its
 * first segment is appended like every later one, below.
 */
extern BF_HIDDEN BfStatus bf_chain_header(uint64_t capacity, double fpr, uint8_t growth,
										  BfHeader *header);

/*
 * Growth: the segment a chain of len bytes would append next and its
 * length after that (BF_OK), or why it cannot grow; bf_chain_append writes
 * the new, empty segment at the end of a value that has room for it.
 */
extern BF_HIDDEN BfStatus bf_chain_next(const BfHeader *header, size_t len,
										BfSegment *next, size_t *new_len,
										BfSizingMemo *memo);
extern BF_HIDDEN void bf_chain_append(uint8_t *value, BfHeader *header, size_t len,
									  const BfSegment *next, const BfHooks *hooks);

/*
 * Whole-value operations, either layout: bf_filter_test (below, inline;
 * bf_chain_test is its chained half), bf_filter_prefetch (the blocks a
 * test of the hash will read) and bf_filter_add, which adds hashes and
 * writes the header; it returns how many it took, fewer than n only when a
 * chain's last segment is full and the chain can grow: the caller appends
 * a segment and calls again with the rest.  In a chain a hash already
 * present takes no room (it counts only in the header's inserted).
 */
extern BF_HIDDEN bool bf_chain_test(const uint8_t *value, const BfHeader *header,
									uint64_t hash);
extern BF_HIDDEN void bf_filter_prefetch(const uint8_t *value, const BfHeader *header,
										 uint64_t hash);
extern BF_HIDDEN size_t bf_filter_add(uint8_t *value, size_t len, BfHeader *header,
									  const uint64_t *hashes, size_t n,
									  BfSizingMemo *memo);

/* Set algebra over bit arrays of equal length. */
extern BF_HIDDEN void bf_union_bits(uint8_t *dst, const uint8_t *src, size_t nbytes);
extern BF_HIDDEN void bf_intersect_bits(uint8_t *dst, const uint8_t *src,
							  size_t nbytes);

/* Fill and estimates. */
extern BF_HIDDEN uint64_t bf_popcount(const uint8_t *bits, size_t nbytes);
extern BF_HIDDEN double bf_estimate_cardinality(uint32_t nblocks, int k,
									  uint64_t bits_set);
extern BF_HIDDEN double bf_estimate_fpr(const uint8_t *bits, uint32_t nblocks, int k);

/*
 * Whole-value operations, for the server and the client alike: a chain's
 * creation and growth, adding that grows a chain, union and intersection
 * (with their header updates), and the estimates over every segment.
 *
 * The core allocates nothing, so what needs memory borrows it from the
 * caller through BfHooks.resize: the value's bytes resized to new_len
 * bytes, the first ones kept (value NULL: new memory), or NULL when there
 * is none, and the operation returns BF_ERR_NO_MEMORY.  The value is then
 * as before the step that asked (a chain grown by the segments before it).
 *
 * Loops over bits go BF_SLICE_BYTES at a time and call
 * BfHooks.between_slices (unless NULL) before each slice: the server
 * answers a cancel there, for the loops cover up to 750 MB and a cancel
 * must be answered well within a second.  The estimated rate is summed
 * slice by slice with or without it, so that every caller's answer has the
 * same rounding.  A NULL hooks is no resize and no pause.
 */
#define BF_SLICE_BYTES		((size_t) 16 * 1024 * 1024)

struct BfHooks
{
	uint8_t    *(*resize) (void *context, uint8_t *value, size_t new_len);
	void		(*between_slices) (void *context);
	void	   *context;
};

/*
 * Zeroes n bytes slice by slice, pausing between slices: a new filter's
 * first touch of its memory is a page fault every 4kB, seconds for the
 * largest, so bf_init, bf_chain_append and qf_init clear this way too.
 */
extern BF_HIDDEN void bf_zero(uint8_t *bytes, size_t n, const BfHooks *hooks);

/*
 * A new chain (bloom_empty with a growth factor) of one empty segment, in
 * *value (resized from NULL), *len bytes, decoded in *header.
 */
extern BF_HIDDEN BfStatus bf_chain_create(uint64_t capacity, double fpr, uint8_t growth,
										  uint8_t **value, size_t *len, BfHeader *header,
										  BfSizingMemo *memo, const BfHooks *hooks);

/* The chain in *value (*len bytes) with its next segment appended. */
extern BF_HIDDEN BfStatus bf_chain_grow(uint8_t **value, size_t *len, BfHeader *header,
										BfSizingMemo *memo, const BfHooks *hooks);

/*
 * bf_filter_add for all n hashes: a chain whose last segment fills grows
 * and the rest go on there.  On failure the hashes before have been added.
 */
extern BF_HIDDEN BfStatus bf_filter_add_growing(uint8_t **value, size_t *len,
												BfHeader *header, const uint64_t *hashes,
												size_t n, BfSizingMemo *memo,
												const BfHooks *hooks);

/*
 * Whether a's segments have the sizes of b's, as far as both go (always,
 * for validated values of compatible headers); if not, *sa and *sb are the
 * first two that differ.
 */
extern BF_HIDDEN bool bf_segments_alike(const uint8_t *a, const BfHeader *ah,
										const uint8_t *b, const BfHeader *bh,
										BfSegment *sa, BfSegment *sb);

/*
 * Union of src into dst, segment by segment, taking the further segments of
 * a longer src as they are (dst is resized for them); the inserted counts
 * add up, dst takes src's key identity if it had none, and its header is
 * written.  Filters that are not bf_compatible (BF_ERR_INCOMPATIBLE) or
 * whose segments differ (BF_ERR_SEGMENT_SIZE) are left alone.
 */
extern BF_HIDDEN BfStatus bf_union_into(uint8_t **dst, size_t *dst_len, BfHeader *d,
										const uint8_t *src, size_t src_len,
										const BfHeader *s, const BfHooks *hooks);

/*
 * Intersection of src into dst, filters of fixed size only (a value may sit
 * in different segments of two chains: BF_ERR_LAYOUT): the smaller inserted
 * count, and no key kind when src had none (nothing is left).
 */
extern BF_HIDDEN BfStatus bf_intersect_into(uint8_t *dst, BfHeader *d, const uint8_t *src,
											const BfHeader *s, const BfHooks *hooks);

/*
 * bloom_info's figures over every segment: bits, bits set, the capacity of
 * the segments present, the fill, the distinct values the fill implies, the
 * false-positive rate for an absent value (any segment may answer "maybe"),
 * the k of the last segment, and whether the filter is over capacity: it
 * holds an estimated BF_OVER_CAPACITY_MARGIN times more distinct values
 * than it was sized for.
 */
#define BF_OVER_CAPACITY_MARGIN 1.1

typedef struct BfEstimate
{
	uint64_t	bits;
	uint64_t	bits_set;
	uint64_t	capacity;
	double		fill;
	double		distinct;
	double		fpr;
	int			k;
	bool		over_capacity;
} BfEstimate;

extern BF_HIDDEN void bf_estimate(const uint8_t *value, const BfHeader *header,
								  BfEstimate *estimate, const BfHooks *hooks);

/* Either layout; inline, since a probe scan runs it once per row. */
static inline bool
bf_filter_test(const uint8_t *value, const BfHeader *header, uint64_t hash)
{
	if (header->layout == BF_LAYOUT_CHAINED)
		return bf_chain_test(value, header, hash);
	return bf_test_hash(value + BF_HEADER_SIZE, header->nblocks, header->k, hash);
}

/* Counters stop at the maximum rather than wrap around to zero. */
static inline uint64_t
bf_count_add(uint64_t count, uint64_t more)
{
	return count > UINT64_MAX - more ? UINT64_MAX : count + more;
}

/* A count as a bigint column shows it: past the largest, the largest. */
static inline int64_t
bf_clamp_int64(uint64_t count)
{
	return count > (uint64_t) INT64_MAX ? INT64_MAX : (int64_t) count;
}

/* Bits of a value, given its start. */
static inline uint8_t *
bf_bits(uint8_t *value)
{
	return value + BF_HEADER_SIZE;
}

static inline const uint8_t *
bf_bits_const(const uint8_t *value)
{
	return value + BF_HEADER_SIZE;
}

#endif							/* BF_CORE_H */
