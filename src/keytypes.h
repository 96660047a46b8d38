/*-------------------------------------------------------------------------
 *
 * keytypes.h
 *	  What the catalogs say of a key's type, from its OID alone
 *	  (keytypes.c), for keykind.c's key types.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_KEYTYPES_H
#define BF_KEYTYPES_H

#include "lib/stringinfo.h"

#include "bloom.h"

/* The kind a built-in type's values take; BF_KIND_OTHER for any other. */
extern BF_HIDDEN BfKeyKind BuiltinKeyKind(Oid basetype);

/*
 * A type's schema-qualified name (palloc'd); the key tag of a type of kind
 * "other" (its name and its shape, always odd); the name of the type a tag
 * names, or NULL (error path only: it reads all of pg_type); the shape of
 * the composites inside a type, appended to out (nothing when it has none).
 */
extern BF_HIDDEN char *TypeNameOf(Oid typid);
extern BF_HIDDEN uint32 KeyTagOf(Oid typid);
extern BF_HIDDEN char *TypeNameOfTag(uint32 tag);
extern BF_HIDDEN void AppendTypeShape(StringInfo out, Oid typid);

/*
 * What a type's own extended hash depends on besides the value.  The types
 * keytypes.c names were audited (test/sql/keykinds.sql lists every hashable
 * type of the server with the decision taken for it); a type it does not
 * know, such as an extension's citext, may follow the locale, so its
 * filters record both the encoding and the locale.
 */
typedef enum HashEnvironment
{
	HASH_ENV_NONE,				/* the same in every database */
	HASH_ENV_ENCODING,			/* hashes strings' bytes in the server encoding */
	HASH_ENV_LOCALE				/* may also follow LC_CTYPE or the collation */
} HashEnvironment;

extern BF_HIDDEN HashEnvironment TypeHashEnvironment(Oid typid);

/* Whether a type's hash follows OIDs that a dump and restore renumber. */
extern BF_HIDDEN bool HashDependsOnOids(Oid typid);

/*
 * The locale a hash may follow, as text (the database's LC_CTYPE, default
 * collation provider and locale, the collation applied), and the
 * fingerprint of it that filters record.
 */
extern BF_HIDDEN char *LocaleDescription(Oid collation);
extern BF_HIDDEN uint32 LocaleFingerprint(Oid collation);

/*
 * Whether typid is the extension's bloom or qfilter type (of its schema,
 * namespace); whether a type holds strings under a nondeterministic
 * collation below its top level.
 */
extern BF_HIDDEN bool IsFilterType(Oid typid, Oid namespace);
extern BF_HIDDEN bool NondeterministicInside(Oid typid);

#endif							/* BF_KEYTYPES_H */
