/*-------------------------------------------------------------------------
 *
 * keykind.c
 *	  Key kinds and canonical hashing: which SQL values a filter accepts,
 *	  and the one routine that turns a value into the hash a filter stores.
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

#include <locale.h>
#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

#include "keykind.h"

/* The kind's name, as bloom_info and error messages show it. */
const char *
KeyKindName(uint8 kind)
{
	switch ((BfKeyKind) kind)
	{
		case BF_KIND_NONE:
			return "none";
		case BF_KIND_NUMBER:
			return "number";
		case BF_KIND_FLOAT:
			return "float";
		case BF_KIND_TEXT:
			return "text";
		case BF_KIND_BYTEA:
			return "bytea";
		case BF_KIND_UUID:
			return "uuid";
		case BF_KIND_BOOL:
			return "boolean";
		case BF_KIND_DATE:
			return "date";
		case BF_KIND_TIMESTAMP:
			return "timestamp";
		case BF_KIND_TIMESTAMPTZ:
			return "timestamptz";
		case BF_KIND_OTHER:
			return "other";
	}
	return "unknown";
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

static BfKeyKind
BuiltinKeyKind(Oid basetype)
{
	switch (basetype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
			return BF_KIND_NUMBER;
		case FLOAT4OID:
		case FLOAT8OID:
			return BF_KIND_FLOAT;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
			return BF_KIND_TEXT;
		case BYTEAOID:
			return BF_KIND_BYTEA;
		case UUIDOID:
			return BF_KIND_UUID;
		case BOOLOID:
			return BF_KIND_BOOL;
		case DATEOID:
			return BF_KIND_DATE;
		case TIMESTAMPOID:
			return BF_KIND_TIMESTAMP;
		case TIMESTAMPTZOID:
			return BF_KIND_TIMESTAMPTZ;
		default:
			return BF_KIND_OTHER;
	}
}

/*
 * The type's schema-qualified name: stable across a dump and restore, unlike
 * its OID, and different for same-named types of different schemas.
 */
static char *
TypeNameOf(Oid typid)
{
	HeapTuple	tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type type;
	char	   *name;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for type %u", typid);
	type = (Form_pg_type) GETSTRUCT(tuple);
	name = psprintf("%s.%s", get_namespace_name(type->typnamespace),
					NameStr(type->typname));
	ReleaseSysCache(tuple);
	return name;
}

/* The key tag of a schema-qualified type name (and shape). */
static uint32
TypeTag(const char *name)
{
	return (uint32) bf_hash(name, strlen(name), 0) | 1;
}

static bool ComponentTypes(Oid typid, List **components);

/*
 * The shape of the composites inside a type (itself, an array's element, a
 * range's subtype, at every depth): each one's attributes in order, by type
 * and collation name.  A composite hashes through its attributes, so ALTER
 * TYPE ... ADD, DROP or ALTER ATTRIBUTE changes every value's hash while
 * the type keeps its name; the shape goes into the key tag, and a filter of
 * the old shape refuses the new one.  Empty for a type with no composite.
 */
static void
AppendTypeShape(StringInfo out, Oid typid)
{
	Oid			basetype = getBaseType(typid);
	List	   *components;
	ListCell   *lc;

	if (type_is_rowtype(basetype) && basetype != RECORDOID)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(basetype, -1);

		appendStringInfoChar(out, '(');
		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);
			char	   *name;

			if (att->attisdropped)
				continue;		/* hash_record_extended skips them too */
			name = TypeNameOf(att->atttypid);
			appendStringInfo(out, "%s%s", i > 0 ? "," : "", name);
			if (OidIsValid(att->attcollation))
				appendStringInfo(out, " collate %s", get_collation_name(att->attcollation));
			AppendTypeShape(out, att->atttypid);
			pfree(name);
		}
		appendStringInfoChar(out, ')');
		ReleaseTupleDesc(desc);
		return;
	}
	if (ComponentTypes(basetype, &components))
		foreach(lc, components)
			AppendTypeShape(out, lfirst_oid(lc));
}

/* The key tag of a type of kind "other": its name, and its shape if any. */
static uint32
KeyTagOf(Oid typid)
{
	char	   *name = TypeNameOf(typid);
	StringInfoData tagged;
	uint32		tag;

	initStringInfo(&tagged);
	appendStringInfoString(&tagged, name);
	pfree(name);
	AppendTypeShape(&tagged, typid);
	tag = TypeTag(tagged.data);
	pfree(tagged.data);
	return tag;
}

/*
 * The schema-qualified name of the type whose tag a filter holds, if one
 * still has it; NULL if the type was renamed, moved or dropped since.
 * Error path only: it reads all of pg_type.
 */
static char *
TypeNameOfTag(uint32 tag)
{
	Relation	rel = table_open(TypeRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	HeapTuple	tuple;
	char	   *found = NULL;

	while (found == NULL && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_type type = (Form_pg_type) GETSTRUCT(tuple);

		if (type->typtype != TYPTYPE_PSEUDO && KeyTagOf(type->oid) == tag)
			found = TypeNameOf(type->oid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Whether typid is a container whose hash is made of its parts' own
 * hashes, and if so, the parts' types: an array's element, a range's
 * subtype, a multirange's range, a composite's columns.  (An anonymous
 * record is not: its columns are known only per value.)
 */
static bool
ComponentTypes(Oid typid, List **components)
{
	Oid			inner;

	*components = NIL;
	if (OidIsValid(inner = get_element_type(typid)))
		*components = list_make1_oid(inner);
	else if (type_is_range(typid))
		*components = list_make1_oid(get_range_subtype(typid));
#if PG_VERSION_NUM >= 140000
	else if (type_is_multirange(typid))
		*components = list_make1_oid(get_multirange_range(typid));
#endif
	else if (type_is_rowtype(typid) && typid != RECORDOID)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(typid, -1);

		for (int i = 0; i < desc->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				*components = lappend_oid(*components, TupleDescAttr(desc, i)->atttypid);
		ReleaseTupleDesc(desc);
	}
	else
		return false;
	return true;
}

/*
 * Whether a type's extended hash depends on OIDs that a dump and restore
 * renumber (or that re-creating a role changes): enums (hashed by label OID)
 * inside arrays, ranges and composites, oid and the reg* types, oidvector,
 * and aclitem (role OIDs).
 */
static bool
HashDependsOnOids(Oid typid)
{
	List	   *components;

	typid = getBaseType(typid);
	if (type_is_enum(typid))
		return true;
	switch (typid)
	{
		case OIDOID:
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGNAMESPACEOID:
		case REGROLEOID:
		case REGCOLLATIONOID:
		case OIDVECTOROID:
		case ACLITEMOID:
			return true;
	}
	if (ComponentTypes(typid, &components))
	{
		ListCell   *lc;

		foreach(lc, components)
			if (HashDependsOnOids(lfirst_oid(lc)))
				return true;
	}
	return false;
}

/*
 * What a type's own extended hash depends on besides the value.  The types
 * named here were audited (test/sql/keykinds.sql lists every hashable type
 * of the server with the decision taken for it); a type this code does not
 * know, such as an extension's citext, may follow the locale, so its
 * filters record both the encoding and the locale.
 */
typedef enum HashEnvironment
{
	HASH_ENV_NONE,				/* the same in every database */
	HASH_ENV_ENCODING,			/* hashes strings' bytes in the server encoding */
	HASH_ENV_LOCALE				/* may also follow LC_CTYPE or the collation */
} HashEnvironment;

static HashEnvironment
TypeHashEnvironment(Oid typid)
{
	List	   *components;

	typid = getBaseType(typid);
	switch (typid)
	{
		case BOOLOID:
		case CHAROID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
		case CASHOID:
		case BYTEAOID:
		case UUIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMETZOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case INTERVALOID:
		case INETOID:
		case CIDROID:
		case MACADDROID:
		case MACADDR8OID:
		case PG_LSNOID:
		case XIDOID:
		case XID8OID:
		case CIDOID:
		case TIDOID:
		case BITOID:
		case VARBITOID:
		case INT2VECTOROID:
			return HASH_ENV_NONE;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
		case JSONBOID:
			return HASH_ENV_ENCODING;
	}
	if (ComponentTypes(typid, &components))
	{
		HashEnvironment env = HASH_ENV_NONE;
		ListCell   *lc;

		foreach(lc, components)
			env = Max(env, TypeHashEnvironment(lfirst_oid(lc)));
		return env;
	}
	return HASH_ENV_LOCALE;
}

/*
 * The locale a hash may follow, as text: the database's LC_CTYPE and
 * default collation provider and locale, and the collation applied.
 * Shown in errors, and fingerprinted into filters.
 */
static char *
LocaleDescription(Oid collation)
{
	HeapTuple	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	StringInfoData out;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
	initStringInfo(&out);
	appendStringInfo(&out, "LC_CTYPE \"%s\"", setlocale(LC_CTYPE, NULL));
#if PG_VERSION_NUM >= 150000
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
		bool		isnull;
#if PG_VERSION_NUM >= 170000
		Datum		locale = SysCacheGetAttr(DATABASEOID, tuple,
											 Anum_pg_database_datlocale, &isnull);
#else
		Datum		locale = SysCacheGetAttr(DATABASEOID, tuple,
											 Anum_pg_database_daticulocale, &isnull);
#endif

		appendStringInfo(&out, ", default collation provider %c", db->datlocprovider);
		if (!isnull)
			appendStringInfo(&out, " locale \"%s\"", TextDatumGetCString(locale));
	}
#endif
	ReleaseSysCache(tuple);
	if (OidIsValid(collation) && collation != DEFAULT_COLLATION_OID)
		appendStringInfo(&out, ", collation %s", get_collation_name(collation));
	return out.data;
}

/* The fingerprint of a locale description that filters record. */
static uint32
LocaleFingerprint(Oid collation)
{
	char	   *locale = LocaleDescription(collation);
	uint32		fingerprint = (uint32) bf_hash(locale, strlen(locale), 0) | 1;

	pfree(locale);
	return fingerprint;
}

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
 * Whether typid is one of the extension's filter types, bloom or qfilter:
 * a type of that name in the extension's schema (namespace), which all of
 * its objects share.
 */
static bool
IsFilterType(Oid typid, Oid namespace)
{
	if (!OidIsValid(namespace))
		return false;
	return typid == GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
									CStringGetDatum("bloom"), ObjectIdGetDatum(namespace)) ||
		typid == GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								 CStringGetDatum("qfilter"), ObjectIdGetDatum(namespace));
}

/*
 * Prepares hashing of values of type typid under collation.  Catalog
 * lookups happen here, once per call site, never per value.
 */
/*
 * Whether a type holds strings under a nondeterministic collation below its
 * top level: a domain's collation, a composite's attribute, a range's
 * subtype, at every depth.  (An array's elements take the collation of the
 * expression, which the top level checks.)  Such strings hash by the
 * collation's sort key, which depends on the provider's version and on how
 * a database defined the collation's name.
 */
static bool
NondeterministicCollation(Oid collation)
{
	return OidIsValid(collation) && !get_collation_isdeterministic(collation);
}

static bool
NondeterministicInside(Oid typid)
{
	Oid			basetype = getBaseType(typid);
	List	   *components;
	ListCell   *lc;

	if (type_is_rowtype(basetype) && basetype != RECORDOID)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(basetype, -1);
		bool		found = false;

		for (int i = 0; i < desc->natts && !found; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			found = !att->attisdropped &&
				(NondeterministicCollation(att->attcollation) ||
				 NondeterministicInside(att->atttypid));
		}
		ReleaseTupleDesc(desc);
		return found;
	}
	if (type_is_range(basetype) && NondeterministicCollation(get_range_collation(basetype)))
		return true;
	/* a component of a domain type keeps the domain's collation */
	if (ComponentTypes(basetype, &components))
		foreach(lc, components)
			if (NondeterministicCollation(get_typcollation(lfirst_oid(lc))) ||
				NondeterministicInside(lfirst_oid(lc)))
				return true;
	return false;
}

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
