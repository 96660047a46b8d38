/*-------------------------------------------------------------------------
 *
 * bloom_glue.h
 *	  What the SQL glue files share: the bloom varlena, its accessors, and
 *	  the single routines for sizing, validation, hashing and combining that
 *	  bloomfilter.c defines and bloom_agg.c reuses.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_GLUE_H
#define BLOOM_GLUE_H

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "nodes/nodes.h"
#include "port/pg_bswap.h"

#include "bloom.h"

/* A bloom value is a varlena whose data is the core's serialised format. */
typedef struct varlena Bloom;

#define DatumGetBloomP(X)		((Bloom *) PG_DETOAST_DATUM(X))
#define PG_GETARG_BLOOM_P(n)	DatumGetBloomP(PG_GETARG_DATUM(n))
#define PG_GETARG_BLOOM_P_COPY(n) ((Bloom *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(n)))
#define PG_RETURN_BLOOM_P(x)	PG_RETURN_POINTER(x)

/* How a SQL type is turned into a hash; set up once per call site. */
typedef struct KeyType
{
	Oid			typid;			/* InvalidOid until set up */
	BfKeyKind	kind;
	uint32		tag;			/* for BF_KIND_OTHER: which type */
	Oid			basetype;		/* typid with domains stripped */
	Oid			collation;
	bool		enum_label;		/* BF_KIND_OTHER: hash the enum's label */
	FmgrInfo	extended_hash;	/* BF_KIND_OTHER otherwise: the type's hash */
} KeyType;

static inline uint8 *
BloomData(Bloom *bloom)
{
	return (uint8 *) VARDATA(bloom);
}

static inline size_t
BloomDataLen(const Bloom *bloom)
{
	return VARSIZE(bloom) - VARHDRSZ;
}

extern BF_HIDDEN Bloom *BloomAlloc(const BfHeader *header);
extern BF_HIDDEN void BloomReadHeader(Bloom *bloom, BfHeader *header);
extern BF_HIDDEN void BloomWriteHeader(Bloom *bloom, const BfHeader *header);
extern BF_HIDDEN Bloom *BloomFromBytes(const uint8 *bytes, size_t len, int sqlstate,
							 Node *escontext, const char *message,
									 const char *shown);
extern BF_HIDDEN void SizeFilter(int64 capacity, double fpr, BfHeader *header);
extern BF_HIDDEN KeyType *KeyTypeOfArg(FunctionCallInfo fcinfo, int argno);
extern BF_HIDDEN uint64 KeyHash(const KeyType *key, Datum value, uint64 seed);

/* The int64's little-endian bytes, so the hash is the same on every platform. */
static inline uint64
HashInt64(int64 value, uint64 seed)
{
	uint64		bytes = (uint64) value;

#ifdef WORDS_BIGENDIAN
	bytes = pg_bswap64(bytes);
#endif
	return bf_hash(&bytes, sizeof(bytes), seed);
}

/*
 * KeyHash with the commonest key, bigint, hashed in line: the aggregates
 * hash once per row, and a call and a type dispatch cost as much as the
 * hash itself.
 */
static inline uint64
KeyHashInline(const KeyType *key, Datum value, uint64 seed)
{
	if (key->basetype == INT8OID)
		return HashInt64(DatumGetInt64(value), seed);
	return KeyHash(key, value, seed);
}
extern BF_HIDDEN void BloomCombineInto(Bloom *dst, Bloom *src, bool is_union);

#endif							/* BLOOM_GLUE_H */
