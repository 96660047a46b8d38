/*-------------------------------------------------------------------------
 *
 * keykind.c
 *	  Key kinds and canonical hashing: which SQL values a filter accepts,
 *	  and the one routine that turns a value into the hash a filter stores.
 *	  What the catalogs say of a type (its tag, what its hash depends on)
 *	  is keytypes.c's.
 *
 * Values equal in SQL must hash equal, or a filter built from one type would
 * answer "absent" for an equal value of another: a false negative.  So every
 * value is reduced to canonical bytes first: int2/int4/int8 and integral
 * numerics as one little-endian int64, other numerics by their digits
 * ("0.50" and "0.5" alike), floats with -0 = 0 and one NaN, strings as
 * UTF-8 without trailing blanks.  Those rules are the pure core's
 * (canonical.h), shared with the client library; this file takes SQL
 * values apart for them.  Types with no such rule go through their own
 * extended hash function.  A filter remembers the identity of the values
 * it holds (BfKeyIdentity: their kind, and for kind "other" a tag naming
 * the type and what its hash depends on) and refuses values of another
 * identity rather than answer "absent" for them.
 *
 * Refused outright: values whose hash follows object identifiers that a
 * dump and restore renumber, strings under nondeterministic collations, and
 * bloom values themselves (a filter is never a key; combining filters is
 * what | and bloom_union_agg are for).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/typcache.h"
#include "utils/uuid.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "keykind.h"
#include "keytypes.h"

/* ---------------------------------------------------------------------
 * Kinds
 * ---------------------------------------------------------------------
 */

/* The kind's name, as bloom_info and error messages show it: the core's. */
const char *
KeyKindName(uint8 kind)
{
	return bf_key_kind_name(kind);
}

/* The SQL type to cast to when a value does not match a filter's kind. */
static const char *
KeyKindCastHint(uint8 kind)
{
	switch ((BfKeyKind) kind)
	{
		case BF_KIND_NUMBER:
			return "bigint or numeric";
		case BF_KIND_FLOAT:
			return "double precision";
		case BF_KIND_BOOL:
			return "boolean";
		case BF_KIND_OTHER:
			return "the type the filter was built from";
		default:
			return KeyKindName(kind);
	}
}

/* ---------------------------------------------------------------------
 * Key types: set up once per call site, from keytypes.c's answers
 * ---------------------------------------------------------------------
 */

/* Records in key what its type's hash depends on here. */
static void
KeyTypeSetEnvironment(KeyType *key, Oid basetype, Oid collation)
{
	HashEnvironment env = TypeHashEnvironment(basetype);

	if (env >= HASH_ENV_ENCODING)
		key->identity.env_encoding = (uint8) (GetDatabaseEncoding() + 1);
	if (env >= HASH_ENV_LOCALE)
		key->identity.env_locale = LocaleFingerprint(collation);
}

/*
 * Prepares hashing of values of type typid under collation.  Catalog
 * lookups happen here, once per call site, never per value.
 */
static void
KeyTypeSetup(KeyType *key, Oid namespace, Oid typid, Oid collation, MemoryContext mcxt)
{
	Oid			basetype = getBaseType(typid);

	if ((type_is_collatable(basetype) && OidIsValid(collation) &&
		 !get_collation_isdeterministic(collation)) ||
		NondeterministicInside(typid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters do not support nondeterministic collations"),
				 errdetail("Values equal under such a collation have different bytes, so a filter could not find them; this holds inside composites, ranges and domains too."),
				 errhint("Apply a deterministic collation to the value, for example COLLATE \"C\", or to the attribute or subtype that has one.")));

	if (IsFilterType(basetype, namespace))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s values cannot be keys of a filter", format_type_be(basetype)),
				 errhint("To combine filters, use the | operator or %s_union_agg.",
						 format_type_be(basetype))));

	/*
	 * An enum value has no identity that survives everything a filter must:
	 * its label changes with RENAME VALUE, its sort position with ADD VALUE
	 * BEFORE, and its OID with a dump and restore.
	 */
	if (type_is_enum(basetype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters cannot hold values of enum type %s",
						format_type_be(typid)),
				 errdetail("An enum value keeps neither its label (RENAME VALUE) nor its position (ADD VALUE) nor its OID (dump and restore), so a stored filter could miss it."),
				 errhint("Cast the value to text, both when building the filter and when probing it.")));

	key->identity = (BfKeyIdentity) {.kind = BuiltinKeyKind(basetype)};
	key->has_shape = false;
	if (key->identity.kind == BF_KIND_OTHER && HashDependsOnOids(basetype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bloom filters cannot hold values of type %s",
						format_type_be(typid)),
				 errdetail("The type's hash depends on object identifiers, which change in a dump and restore, so a stored filter would miss its values."),
				 errhint("Cast the value to text.")));
	if (key->identity.kind == BF_KIND_OTHER)
	{
		TypeCacheEntry *entry = lookup_type_cache(basetype,
												  TYPECACHE_HASH_EXTENDED_PROC);
		char	   *name = TypeNameOf(basetype);

		if (!OidIsValid(entry->hash_extended_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("bloom filters cannot hash values of type %s",
							format_type_be(typid)),
					 errdetail("The type has no extended hash function."),
					 errhint("Cast the value to text or another hashable type.")));
		fmgr_info_cxt(entry->hash_extended_proc, &key->extended_hash, mcxt);

		/* By name, so that the tag survives dump and restore. */
		key->identity.tag = KeyTagOf(basetype);
		{
			StringInfoData shape;

			initStringInfo(&shape);
			AppendTypeShape(&shape, basetype);
			key->has_shape = shape.len > 0;
			pfree(shape.data);
		}
		key->catalog_seen = SharedInvalidMessageCounter;
		key->command_seen = GetCurrentCommandId(false);
		pfree(name);
		KeyTypeSetEnvironment(key, basetype, collation);
	}
	key->basetype = basetype;
	key->collation = collation;
	key->typid = typid;
}

bool
KeyTypeOfBuiltinKind(KeyType *key, Oid typid, Oid collation)
{
	Oid			basetype = getBaseType(typid);

	memset(key, 0, sizeof(*key));
	key->identity.kind = BuiltinKeyKind(basetype);
	if (key->identity.kind == BF_KIND_OTHER ||
		(type_is_collatable(basetype) && OidIsValid(collation) &&
		 !get_collation_isdeterministic(collation)))
		return false;
	key->basetype = basetype;
	key->collation = collation;
	key->typid = typid;
	return true;
}

void
KeyTypeFollowShape(KeyType *key)
{
	if (KeyTypeIsCurrent(key))
		return;
	key->identity.tag = KeyTagOf(key->basetype);
	key->catalog_seen = SharedInvalidMessageCounter;
	key->command_seen = GetCurrentCommandId(false);
}

KeyType *
KeyTypeFor(KeyType *key, FunctionCallInfo fcinfo, Oid typid)
{
	if (key->typid != typid || key->collation != PG_GET_COLLATION() ||
		!KeyTypeIsCurrent(key))
		KeyTypeSetup(key, get_func_namespace(fcinfo->flinfo->fn_oid), typid,
					 PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	return key;
}

KeyType *
KeyTypeForColumn(KeyType *key, Oid typid, Oid collation, Oid namespace, MemoryContext mcxt)
{
	KeyTypeSetup(key, namespace, typid, collation, mcxt);
	return key;
}

KeyType *
KeyTypeForArg(KeyType *key, FunctionCallInfo fcinfo, int argno)
{
	Oid			typid;

	/* An argument's type is fixed per call site: look it up once. */
	if (OidIsValid(key->typid) && key->collation == PG_GET_COLLATION() &&
		KeyTypeIsCurrent(key))
		return key;
	typid = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the type of argument %d", argno + 1);
	return KeyTypeFor(key, fcinfo, typid);
}

/* ---------------------------------------------------------------------
 * Hashing: the one routine, and the canonical forms it hashes
 * ---------------------------------------------------------------------
 */

/*
 * The integer a numeric's normalised text spells, if it fits an int64: the
 * version 1 rule for integral numerics.
 */
static bool
NumericTextIsInt64(const char *text, int64 *integer)
{
	char	   *end;
	long long	parsed;

	if (strchr(text, '.') != NULL || strspn(text, "-0123456789") != strlen(text))
		return false;
	errno = 0;
	parsed = strtoll(text, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*integer = (int64) parsed;
	return true;
}

/*
 * Version 1: integral numerics hash as the int64 they equal, so 42::numeric
 * finds 42::bigint; others hash as their normalised text ("0.5" for 0.50).
 * That text can be far longer than the value (1e131071 prints 131,072
 * characters), which is why version 2 hashes digits instead.
 */
static uint64
HashNumericText(Datum value, uint64 seed)
{
	char	   *text = numeric_normalize(DatumGetNumeric(value));
	int64		integer;
	uint64		hash;

	if (NumericTextIsInt64(text, &integer))
		hash = HashInt64(integer, seed);
	else
		hash = bf_hash(text, strlen(text), seed);
	pfree(text);
	return hash;
}

/*
 * Version 2: numeric's sign, weight and base-10000 digits, from its binary
 * form, hashed by the core's rule for numbers (canonical.c), which the
 * client library shares.
 */
static uint64
HashNumericDigits(Datum value, uint64 seed)
{
	bytea	   *sent = DatumGetByteaPP(DirectFunctionCall1(numeric_send, value));
	const uint8 *words = (const uint8 *) VARDATA_ANY(sent);
	int			ndigits;
	int			weight;
	uint16		sign;
	uint16	   *digits;
	uint64		hash;

	/* big-endian 16-bit words: ndigits, weight, sign, display scale, digits */
#define SENT_WORD(i) ((uint16) (words[2 * (i)] << 8 | words[2 * (i) + 1]))
	ndigits = (int16) SENT_WORD(0);
	weight = (int16) SENT_WORD(1);
	sign = SENT_WORD(2);
	/* the display scale (word 3) does not count: 0.5 = 0.50 */
	Assert(VARSIZE_ANY_EXHDR(sent) == 8 + 2 * (Size) ndigits);
	digits = palloc((ndigits + 1) * sizeof(uint16));
	for (int i = 0; i < ndigits; i++)
		digits[i] = SENT_WORD(4 + i);
#undef SENT_WORD

	hash = bf_hash_numeric(sign, weight, digits, ndigits, seed);
	pfree(digits);
	pfree(sent);
	return hash;
}

/*
 * A string's characters, as UTF-8 from version 2 on (version 1 hashed the
 * server encoding's bytes, so a filter built in a LATIN1 database missed
 * 'café' in a UTF8 one), without trailing blanks.  bpchar compares ignoring
 * them, and varchar = bpchar compares as bpchar, so a string filter cannot
 * keep them: 'x '::varchar must find 'x'::char(3).  Strings that differ
 * only in trailing blanks thus share a key, which costs a false positive,
 * never a false negative.  A SQL_ASCII database's bytes are hashed as they
 * are, since nothing says what they encode.
 */
static uint64
HashString(const char *bytes, size_t len, uint64 seed, uint8 version)
{
	char	   *utf8 = (char *) bytes;
	uint64		hash;

	if (version >= 2 && len > 0)
		utf8 = pg_server_to_any(bytes, (int) len, PG_UTF8);
	if (utf8 != bytes)
		len = strlen(utf8);
	hash = bf_hash_string(utf8, len, seed);
	if (utf8 != bytes)
		pfree(utf8);
	return hash;
}

/* A varlena's bytes, without detoasting a short inline value. */
static uint64
HashVarlena(Datum value, uint64 seed, bool is_string, uint8 version)
{
	struct varlena *data = PG_DETOAST_DATUM_PACKED(value);
	const char *bytes = VARDATA_ANY(data);
	size_t		len = VARSIZE_ANY_EXHDR(data);
	uint64		hash;

	hash = is_string ? HashString(bytes, len, seed, version)
		: bf_hash(bytes, len, seed);
	if ((Pointer) data != DatumGetPointer(value))
		pfree(data);
	return hash;
}

/*
 * The one hashing routine: a SQL value's canonical bytes, hashed, by the
 * rules of the filter's format version.
 */
/*
 * A composite's hash function reads the type's current definition, and
 * can take an ALTER TYPE's invalidation in itself (detoasting the value
 * takes a lock, which reads the invalidations): the value may then have
 * been hashed under a definition other than the one the key type was set
 * up for, and its tag, which the filter records or is checked against,
 * would be wrong.  Refused; a later call sets the key type up anew.
 */
static pg_noinline void
CheckShapeKeptWhileHashing(const KeyType *key)
{
	if (KeyTagOf(key->basetype) != key->identity.tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("type %s was altered while its values were being hashed",
						format_type_be(key->typid)),
				 errdetail("Its values hash differently under the new definition."),
				 errhint("Run the statement again.")));
}

uint64
KeyHash(const KeyType *key, Datum value, uint64 seed, uint8 version)
{
	switch (key->basetype)
	{
		case INT2OID:
			return HashInt64(DatumGetInt16(value), seed);
		case INT4OID:
			return HashInt64(DatumGetInt32(value), seed);
		case INT8OID:
			return HashInt64(DatumGetInt64(value), seed);
		case NUMERICOID:
			return version >= 2 ? HashNumericDigits(value, seed)
				: HashNumericText(value, seed);
		case FLOAT4OID:
			return bf_hash_float8(DatumGetFloat4(value), seed);
		case FLOAT8OID:
			return bf_hash_float8(DatumGetFloat8(value), seed);
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			return HashVarlena(value, seed, true, version);
		case BYTEAOID:
			return HashVarlena(value, seed, false, version);
		case NAMEOID:
			{
				const char *name = NameStr(*DatumGetName(value));

				return HashString(name, strlen(name), seed, version);
			}
		case UUIDOID:
			return bf_hash_uuid(DatumGetUUIDP(value)->data, seed);
		case BOOLOID:
			return bf_hash_bool(DatumGetBool(value), seed);
		case DATEOID:
			return bf_hash_date(DatumGetInt32(value), seed);
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return bf_hash_timestamp(DatumGetInt64(value), seed);
		default:
			{
				Datum		h = FunctionCall2Coll((FmgrInfo *) &key->extended_hash,
												  key->collation, value,
												  Int64GetDatum(0));

				if (unlikely(key->has_shape) && !KeyTypeIsCurrent(key))
					CheckShapeKeptWhileHashing(key);
				return HashInt64(DatumGetInt64(h), seed);
			}
	}
}

/* ---------------------------------------------------------------------
 * Identities: what a filter holds, checked against a key
 * ---------------------------------------------------------------------
 */

/* The error for a value of another kind or type than the filter's. */
static void
ReportKindMismatch(const BfKeyIdentity *filter, const KeyType *key)
{
	char	   *built_for;

	if (filter->kind != BF_KIND_OTHER)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("filter holds values of kind %s, not %s",
						KeyKindName(filter->kind), format_type_be(key->typid)),
				 errhint("Cast the value to %s.", KeyKindCastHint(filter->kind))));
	built_for = TypeNameOfTag(filter->tag);
	if (built_for != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("filter holds values of type %s, not %s",
						built_for, format_type_be(key->typid)),
				 errhint("Cast the value to %s.", built_for)));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("filter holds values of a type that no longer has the name or the attributes it had when the filter was built"),
			 errdetail("The type was renamed, moved to another schema or dropped, or a composite in it gained, lost or changed an attribute (ALTER TYPE, or ALTER TABLE on a row type), which changes its values' hashes; the value is of type %s.",
					   format_type_be(key->typid)),
			 errhint("Rebuild the filter from the values as they are now (REINDEX for a bloomfilter index).")));
}

/*
 * The error for a value whose type hashes differently here than where the
 * filter was built: another server encoding, LC_CTYPE or collation.
 */
static void
ReportEnvironmentMismatch(const BfKeyIdentity *filter, const KeyType *key)
{
	/* one side records what the other does not: the same name, another type */
	if ((filter->env_encoding == 0) != (key->identity.env_encoding == 0) ||
		(filter->env_locale == 0) != (key->identity.env_locale == 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("filter holds values of type %s as it was when the filter was built",
						format_type_be(key->typid)),
				 errdetail("The type has been redefined since, and its values no longer hash the same way."),
				 errhint("Rebuild the filter.")));
	if (filter->env_encoding != key->identity.env_encoding)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("filter of %s values was built in a database with another encoding",
						format_type_be(key->typid)),
				 errdetail("The filter's values were hashed as %s, and this database's encoding is %s; the type's hash depends on it.",
						   filter->env_encoding == 0 ? "unknown"
						   : pg_encoding_to_char(filter->env_encoding - 1),
						   GetDatabaseEncodingName()),
				 errhint("Rebuild the filter here, or cast the values to text, whose filters do not depend on the encoding.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("filter of %s values was built under another locale or collation",
					format_type_be(key->typid)),
			 errdetail("The type's hash may depend on them; here: %s.",
					   LocaleDescription(key->collation)),
			 errhint("Rebuild the filter here, or probe it under the locale and collation it was built with.")));
}

BfKeyIdentity
KeyIdentityOf(const KeyType *key, bool records_environment)
{
	BfKeyIdentity identity = key->identity;

	if (!records_environment)
	{
		/* such a filter's values keep the hashing they had */
		identity.env_encoding = 0;
		identity.env_locale = 0;
	}
	return identity;
}

void
CheckKeyIdentity(const BfKeyIdentity *filter, bool records_environment, const KeyType *key)
{
	BfKeyIdentity offered = KeyIdentityOf(key, records_environment);

	if (bf_key_identity_compatible(filter, &offered))
		return;
	if (filter->kind != offered.kind || filter->tag != offered.tag)
		ReportKindMismatch(filter, key);
	ReportEnvironmentMismatch(filter, key);
}

char *
KeyEnvironmentName(const BfKeyIdentity *identity)
{
	StringInfoData out;

	if (identity->env_encoding == 0 && identity->env_locale == 0)
		return NULL;
	initStringInfo(&out);
	if (identity->env_encoding != 0)
		appendStringInfo(&out, "encoding %s",
						 pg_encoding_to_char(identity->env_encoding - 1));
	if (identity->env_locale != 0)
		appendStringInfo(&out, "%slocale fingerprint %08X",
						 out.len > 0 ? ", " : "", identity->env_locale);
	return out.data;
}
