/*-------------------------------------------------------------------------
 *
 * bloom.h
 *	  The filter API of the pure core (bloom.c).  It owns:
 *	    - the serialised format (the header layout below) and its one
 *	      validator, bf_validate, for every value that comes from outside;
 *	    - the value hash, bf_hash (XXH3-64 of a value's canonical bytes);
 *	    - the cache-line blocked bit layout: adding and testing hashes;
 *	    - set algebra over bit arrays (union, intersection);
 *	    - estimates: fill, distinct count, current false-positive rate.
 *	  Sizing (how many blocks and hashes) is sizing.h's, and the
 *	  aggregates' hash buffers are hashbuf.h's.
 *
 * Nothing here includes a PostgreSQL header, allocates or throws.  Every
 * function works on caller-provided memory and reports problems as a
 * BfStatus, which the SQL glue (bloomvalue.c) turns into an ereport.  That
 * keeps the core buildable with plain cc for unit tests, fuzzing and the
 * client library.
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

/*
 * Serialised format, versions 1 and 2 (all integers little-endian):
 *
 *	offset	size	field
 *	0		2		magic "BF"
 *	2		1		format version (1 or 2)
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
 *					(v2: of bytes 0..47 followed by bytes 52..55)
 *	52		4		v2: environment locale fingerprint (0 when not
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
 * Bit i of a block is bit (i % 8) of byte (i / 8), so the bit array has the
 * same bytes on every platform.  The header checksum exists because a flipped
 * bit in k, seed, layout or key kind would otherwise yield a filter that
 * silently answers "absent" for values that were added.
 */
#define BF_MAGIC_0			'B'
#define BF_MAGIC_1			'F'
#define BF_FORMAT_VERSION	2		/* written by new filters */
#define BF_FORMAT_VERSION_MIN 1	/* oldest still read */
#define BF_LAYOUT_BLOCKED512 1
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
	BF_ERR_FPR_UNREACHABLE
} BfStatus;

/* The decoded header of a filter. */
typedef struct BfHeader
{
	uint8_t		version;
	uint8_t		layout;
	uint8_t		k;
	uint8_t		key_kind;
	uint32_t	key_tag;
	uint8_t		env_encoding;	/* v2, BF_KIND_OTHER: see the format above */
	uint32_t	env_locale;
	uint32_t	nblocks;
	uint64_t	seed;
	uint64_t	capacity;
	double		fpr;
	uint64_t	inserted;
} BfHeader;

/* Describes a status for an error message. */
extern BF_HIDDEN const char *bf_status_message(BfStatus status);

/* Bytes of a value with nblocks blocks, header included. */
extern BF_HIDDEN size_t bf_value_bytes(uint32_t nblocks);

/* Header encoding, decoding and validation. */
extern BF_HIDDEN void bf_write_header(uint8_t *value, const BfHeader *header);
extern BF_HIDDEN BfStatus bf_read_header(const uint8_t *value, size_t len,
							   BfHeader *header);
extern BF_HIDDEN BfStatus bf_validate(const uint8_t *value, size_t len,
							BfHeader *header);
extern BF_HIDDEN void bf_init(uint8_t *value, const BfHeader *header);
extern BF_HIDDEN bool bf_compatible(const BfHeader *a, const BfHeader *b);
extern BF_HIDDEN bool bf_kinds_compatible(const BfHeader *a, const BfHeader *b);

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

/* The bit layout. */
extern BF_HIDDEN uint32_t bf_block_of(uint64_t hash, uint32_t nblocks);
extern BF_HIDDEN void bf_block_add(uint8_t *block, uint64_t hash, int k);
extern BF_HIDDEN bool bf_block_test(const uint8_t *block, uint64_t hash, int k);
extern BF_HIDDEN void bf_add_hashes(uint8_t *bits, uint32_t nblocks, int k,
						  const uint64_t *hashes, size_t n);
extern BF_HIDDEN bool bf_test_hash(const uint8_t *bits, uint32_t nblocks, int k,
						 uint64_t hash);

/* Set algebra over bit arrays of equal length. */
extern BF_HIDDEN void bf_union_bits(uint8_t *dst, const uint8_t *src, size_t nbytes);
extern BF_HIDDEN void bf_intersect_bits(uint8_t *dst, const uint8_t *src,
							  size_t nbytes);

/* Fill and estimates. */
extern BF_HIDDEN uint64_t bf_popcount(const uint8_t *bits, size_t nbytes);
extern BF_HIDDEN double bf_estimate_cardinality(uint32_t nblocks, int k,
									  uint64_t bits_set);
extern BF_HIDDEN double bf_estimate_fpr(const uint8_t *bits, uint32_t nblocks, int k);

/* Counters stop at the maximum rather than wrap around to zero. */
static inline uint64_t
bf_count_add(uint64_t count, uint64_t more)
{
	return count > UINT64_MAX - more ? UINT64_MAX : count + more;
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
