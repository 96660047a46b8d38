/*-------------------------------------------------------------------------
 *
 * keytypes.c
 *	  What the catalogs say of a key's type, from its OID alone: the kind a
 *	  built-in type's values take, a type's schema-qualified name, its key
 *	  tag and the shape of the composites inside it, whether its own hash
 *	  depends on OIDs or on the encoding and locale (and the locale's
 *	  description and fingerprint), and the types refused as keys (the
 *	  extension's filter types; strings under nondeterministic collations
 *	  below the top level).  keykind.c sets up key types and hashes values
 *	  with these answers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <locale.h>

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
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "keytypes.h"

/* The kind a built-in type's values take; BF_KIND_OTHER for every other. */
BfKeyKind
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

/* ---------------------------------------------------------------------
 * Names, tags and shapes
 * ---------------------------------------------------------------------
 */

/*
 * The type's schema-qualified name: stable across a dump and restore, unlike
 * its OID, and different for same-named types of different schemas.
 */
char *
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
void
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
uint32
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
char *
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

/* ---------------------------------------------------------------------
 * What a type's own hash depends on
 * ---------------------------------------------------------------------
 */

/*
 * Whether a type's extended hash depends on OIDs that a dump and restore
 * renumber (or that re-creating a role changes): enums (hashed by label OID)
 * inside arrays, ranges and composites, oid and the reg* types, oidvector,
 * and aclitem (role OIDs).
 */
bool
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

/* The environment a type's hash follows (keytypes.h says how it was decided). */
HashEnvironment
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
char *
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
uint32
LocaleFingerprint(Oid collation)
{
	char	   *locale = LocaleDescription(collation);
	uint32		fingerprint = (uint32) bf_hash(locale, strlen(locale), 0) | 1;

	pfree(locale);
	return fingerprint;
}

/* ---------------------------------------------------------------------
 * Types refused as keys
 * ---------------------------------------------------------------------
 */

/*
 * Whether typid is one of the extension's filter types, bloom or qfilter:
 * a type of that name in the extension's schema (namespace), which all of
 * its objects share.
 */
bool
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

bool
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
