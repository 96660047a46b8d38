/*-------------------------------------------------------------------------
 *
 * keykind.h
 *	  Key kinds and canonical hashing (keykind.c): how a SQL value becomes
 *	  the one 64-bit hash that a filter stores, and which values a filter
 *	  accepts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_KEYKIND_H
#define BF_KEYKIND_H

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "storage/sinval.h"

#include "bloom.h"
#include "canonical.h"

/* How a SQL type is turned into a hash; set up once per call site. */
typedef struct KeyType
{
	Oid			typid;			/* InvalidOid until set up */
	BfKeyIdentity identity;		/* as a filter records it (bloom.h); its
								 * kind is never BF_KIND_NONE */
	Oid			basetype;		/* typid with domains stripped */
	Oid			collation;
	FmgrInfo	extended_hash;	/* BF_KIND_OTHER: the type's hash */
	bool		has_shape;		/* holds a composite: the tag follows ALTER TYPE */
	uint64		catalog_seen;	/* for those, the catalog state it was set up */
	CommandId	command_seen;	/* under (KeyTypeShapeIsCurrent) */
} KeyType;

/*
 * The key type of values of typid under the call's collation, set up in
 * *key (which the caller keeps for the call site) unless it already is.
 * Catalog lookups happen here, never per value.
 */
extern BF_HIDDEN KeyType *KeyTypeFor(KeyType *key, FunctionCallInfo fcinfo, Oid typid);

/*
 * For the planner, which must not throw: sets up *key for values of typid
 * if they take one of the built-in kinds (number, text, ...) and returns
 * true; false for any other type, which only execution may judge.
 */
extern BF_HIDDEN bool KeyTypeOfBuiltinKind(KeyType *key, Oid typid, Oid collation);

/*
 * The key type of an index column of type typid under collation, outside
 * any function call (the index access method); namespace is the
 * extension's schema, whose filter types are refused as keys.
 */
extern BF_HIDDEN KeyType *KeyTypeForColumn(KeyType *key, Oid typid, Oid collation,
										   Oid namespace, MemoryContext mcxt);

/* The same for argument argno, whose type is fixed per call site. */
extern BF_HIDDEN KeyType *KeyTypeForArg(KeyType *key, FunctionCallInfo fcinfo, int argno);

/*
 * The one hashing routine: a SQL value's canonical bytes, hashed, by the
 * rules of a filter's format version (bloom.h).
 */
extern BF_HIDDEN uint64 KeyHash(const KeyType *key, Datum value, uint64 seed,
								uint8 version);

/*
 * Whether a key type set up earlier still hashes as it did: a composite's
 * shape is in its tag, and a call site may outlive an ALTER TYPE (a
 * PL/pgSQL expression keeps its call site for the transaction).  Any
 * catalog change taken in, or a later command of this transaction, calls
 * for setting up such a key type again; other types cannot change under a
 * filter.  The KeyTypeFor functions check it; call sites that skip them
 * on a fast path check it there.
 */
static inline bool
KeyTypeIsCurrent(const KeyType *key)
{
	return !key->has_shape ||
		(key->catalog_seen == SharedInvalidMessageCounter &&
		 key->command_seen == GetCurrentCommandId(false));
}

/*
 * For a key type kept longer than a call site (an index's inserts): brings
 * its tag up to its type's shape now, where KeyTypeIsCurrent says it may
 * have changed, without setting up anything else again, which would
 * allocate in the long-lived context again on every catalog change.
 */
extern BF_HIDDEN void KeyTypeFollowShape(KeyType *key);

/*
 * The key tag of a bloomfilter index that took keys under two shapes of
 * its composite key type (bloomindexinsert.c).  Every type's tag is odd
 * (keykind.c), so this even one names none, and probes refuse the index
 * until it is rebuilt.
 */
#define KEY_TAG_MIXED_SHAPES 0

/*
 * Key identities, for both filter types.  records_environment says whether
 * the filter's format records what a hash depends on (not bloom's version
 * 1: bf_records_environment).
 *
 * KeyIdentityOf is the identity a filter takes from key's values.
 * CheckKeyIdentity refuses a value whose identity differs from the
 * filter's: answering "absent" for it would be a false negative.  A filter
 * with no values takes any kind.
 */
extern BF_HIDDEN BfKeyIdentity KeyIdentityOf(const KeyType *key, bool records_environment);
extern BF_HIDDEN void CheckKeyIdentity(const BfKeyIdentity *filter, bool records_environment,
									   const KeyType *key);

/*
 * What a filter's values were hashed under, for bloom_info and qfilter_info:
 * "encoding UTF8", with ", locale fingerprint 1A2B3C4D" where the locale
 * counts; NULL where the identity records nothing.
 */
extern BF_HIDDEN char *KeyEnvironmentName(const BfKeyIdentity *identity);

/* The kind's name, as bloom_info and error messages show it. */
extern BF_HIDDEN const char *KeyKindName(uint8 kind);

/* The int64's little-endian bytes (the core's rule, canonical.h). */
static inline uint64
HashInt64(int64 value, uint64 seed)
{
	return bf_hash_int64(value, seed);
}

/*
 * KeyHash for a new filter, with the commonest key, bigint, hashed in line:
 * the aggregates hash once per row, and a call and a type dispatch cost as
 * much as the hash itself.
 */
static inline uint64
KeyHashInline(const KeyType *key, Datum value, uint64 seed)
{
	if (key->basetype == INT8OID)
		return HashInt64(DatumGetInt64(value), seed);
	return KeyHash(key, value, seed, BF_FORMAT_VERSION);
}

#endif							/* BF_KEYKIND_H */
