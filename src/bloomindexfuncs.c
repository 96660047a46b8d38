/*-------------------------------------------------------------------------
 *
 * bloomindexfuncs.c
 *	  The bloomfilter index's SQL functions: bloom_index_contains, with
 *	  what each call site keeps between calls; bloom_index_filter,
 *	  bloom_index_info and bloom_index_verify.  A leaf: no other file uses
 *	  it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "pgstat.h"
#include "storage/sinval.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/snapmgr.h"

#include "bloomindex.h"

/* ---------------------------------------------------------------------
 * SQL functions: probes
 * ---------------------------------------------------------------------
 */

/*
 * How a probe's argument becomes a key of the index's column, as
 * "column = argument" would compare them: as it is where its kind is the
 * column's (an int4 against a bigint index); through an implicit cast
 * (numeric to float8); a string through the column type's input function,
 * as a quoted literal is read ('{"a":1}' against a jsonb index).  Where
 * none applies the argument is hashed as it is, and the kind check
 * refuses it.
 */
typedef enum ArgConversion
{
	ARG_AS_IS,
	ARG_CAST,					/* cast function */
	ARG_RELABEL,				/* binary-compatible: the column's hashing */
	ARG_VIA_TEXT				/* the argument's output, the column's input */
} ArgConversion;

/* What a call site of bloom_index_contains keeps. */
typedef struct ProbeSite
{
	Oid			indexoid;
	bool		checked;		/* the checks and leaves below hold ... */
	Oid			user;			/* ... for this user, */
	uint64		transaction;	/* in this transaction (ended_transactions), */
	CommandId	command;		/* this command of it, */
	uint64		invalidations;	/* and with no catalog change since */
	List	   *leaves;			/* in fn_mcxt */
	PgStat_TableStatus **leaf_stats;	/* each leaf's pending statistics */
	KeyType		arg;			/* the argument's type */
	KeyType		column;			/* the index key's type */
	ArgConversion conversion;
	FmgrInfo	cast;
	int			cast_nargs;
	FmgrInfo	output;
	FmgrInfo	input;
	Oid			input_ioparam;
} ProbeSite;

/* Sets up how the site's argument becomes a key of the index's column. */
static void
PlanArgConversion(ProbeSite *site, FunctionCallInfo fcinfo, Relation index)
{
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	Oid			argtype = site->arg.basetype;
	Oid			coltype;
	Oid			funcid;
	char		category;
	bool		preferred;

	IndexKeyType(index, &site->column, mcxt);
	coltype = site->column.basetype;
	site->conversion = ARG_AS_IS;
	if (site->arg.identity.kind == site->column.identity.kind &&
		site->arg.identity.tag == site->column.identity.tag)
		return;
	switch (find_coercion_pathway(coltype, argtype, COERCION_IMPLICIT, &funcid))
	{
		case COERCION_PATH_FUNC:
			site->conversion = ARG_CAST;
			fmgr_info_cxt(funcid, &site->cast, mcxt);
			site->cast_nargs = get_func_nargs(funcid);
			return;
		case COERCION_PATH_RELABELTYPE:
			site->conversion = ARG_RELABEL;
			return;
		case COERCION_PATH_COERCEVIAIO:
			site->conversion = ARG_VIA_TEXT;
			break;
		default:
			get_type_category_preferred(argtype, &category, &preferred);
			if (category != TYPCATEGORY_STRING)
				return;
			site->conversion = ARG_VIA_TEXT;
			break;
	}
	{
		Oid			output;
		Oid			input;
		bool		varlena;

		getTypeOutputInfo(argtype, &output, &varlena);
		getTypeInputInfo(coltype, &input, &site->input_ioparam);
		fmgr_info_cxt(output, &site->output, mcxt);
		fmgr_info_cxt(input, &site->input, mcxt);
	}
}

/* The argument as a key of the index's column, and the type that hashes it. */
static Datum
ArgAsKey(ProbeSite *site, Datum value, const KeyType **key)
{
	*key = &site->column;
	switch (site->conversion)
	{
		case ARG_AS_IS:
			*key = &site->arg;
			return value;
		case ARG_RELABEL:
			return value;
		case ARG_CAST:
			if (site->cast_nargs == 1)
				return FunctionCall1(&site->cast, value);
			return FunctionCall3(&site->cast, value, Int32GetDatum(-1), BoolGetDatum(false));
		case ARG_VIA_TEXT:
			return InputFunctionCall(&site->input, OutputFunctionCall(&site->output, value),
									 site->input_ioparam, -1);
	}
	return value;
}

/*
 * Whether the site's checks still hold: the same index, user, transaction
 * and command, and no catalog change processed since (a GRANT, a policy, an
 * ATTACH, an index's state), which the caller has just taken in.
 */
static bool
ProbeSiteIsCurrent(const ProbeSite *site, Oid indexoid)
{
	return site->checked &&
		site->indexoid == indexoid &&
		site->user == GetUserId() &&
		site->transaction == ended_transactions &&
		site->command == GetCurrentCommandId(false) &&
		site->invalidations == SharedInvalidMessageCounter;
}

/*
 * The pending statistics of each leaf, where probes count as scans; NULL
 * where statistics are not collected.  The entries live until the
 * statistics are reported, which happens between transactions only, so a
 * site, which lasts one command, may keep pointers to them.
 */
static PgStat_TableStatus **
LeafStatistics(List *leaves, MemoryContext mcxt)
{
	PgStat_TableStatus **stats = MemoryContextAllocZero(mcxt, sizeof(PgStat_TableStatus *) *
														Max(list_length(leaves), 1));
	int			i = 0;
	ListCell   *cell;

	foreach(cell, leaves)
	{
		Relation	leaf = index_open(lfirst_oid(cell), NoLock);

		if (pgstat_should_count_relation(leaf))
			stats[i] = leaf->pgstat_info;
		index_close(leaf, NoLock);
		i++;
	}
	return stats;
}

/*
 * A probe of a leaf counts as one scan of it in pg_stat_user_indexes, and
 * a "maybe present" as one entry read (idx_tup_read), as a btree lookup
 * that finds the key would.  No heap row is fetched.
 */
static inline void
CountProbe(PgStat_TableStatus *stats, bool present)
{
	if (stats == NULL)
		return;
#if PG_VERSION_NUM >= 160000
	stats->counts.numscans++;
	stats->counts.tuples_returned += present;
#else
	stats->t_counts.t_numscans++;
	stats->t_counts.t_tuples_returned += present;
#endif
}

/*
 * Checks the caller's rights and the index's state, and lists the indexes
 * that answer; the locks taken stay to the end of the transaction.
 */
static void
PrepareProbeSite(ProbeSite *site, FunctionCallInfo fcinfo, Oid indexoid)
{
	Relation	index;
	List	   *leaves;
	MemoryContext old;

	site->checked = false;
	index = OpenIndexForReading(indexoid);

	/*
	 * Types are set up again too: an ALTER TYPE changes a composite's
	 * hashing, and the index's key kind check must see the type as it is.
	 */
	memset(&site->arg, 0, sizeof(site->arg));
	KeyTypeForArg(&site->arg, fcinfo, 1);
	PlanArgConversion(site, fcinfo, index);
	site->indexoid = indexoid;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	leaves = LeafIndexes(index);
	MemoryContextSwitchTo(old);
	list_free(site->leaves);
	site->leaves = leaves;
	if (site->leaf_stats != NULL)
		pfree(site->leaf_stats);
	site->leaf_stats = LeafStatistics(leaves, fcinfo->flinfo->fn_mcxt);
	index_close(index, NoLock);
	site->user = GetUserId();
	site->transaction = ended_transactions;
	site->command = GetCurrentCommandId(false);
	site->invalidations = SharedInvalidMessageCounter;
	site->checked = true;
}

/*
 * Refuses an index whose key type hashes differently now than at its build:
 * a composite key whose attributes changed (ALTER TYPE ... ADD, DROP or
 * ALTER ATTRIBUTE), which PostgreSQL allows without rebuilding the index,
 * or one that took keys under such a change (KEY_TAG_MIXED_SHAPES).  The
 * key tag records the type's shape (keykind.c).
 */
static void
CheckKeyTypeUnchanged(Oid indexoid, const BfHeader *header, const KeyType *column)
{
	if (header->identity.kind != BF_KIND_OTHER || column->identity.kind != BF_KIND_OTHER ||
		header->identity.tag == column->identity.tag)
		return;
	if (header->identity.tag == KEY_TAG_MIXED_SHAPES)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" holds keys of type %s hashed under two of its definitions",
						get_rel_name(indexoid), format_type_be_qualified(column->typid)),
				 errdetail("Rows were inserted while the type had other attributes or another name than at the index's build, and their keys hash differently."),
				 errhint("Rebuild the index with REINDEX INDEX CONCURRENTLY.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("bloomfilter index \"%s\" holds keys of type %s as the type was at the index's build",
					get_rel_name(indexoid), format_type_be_qualified(column->typid)),
			 errdetail("The type has been altered since (its attributes or its name), and its values hash differently now."),
			 errhint("Rebuild the index with REINDEX INDEX CONCURRENTLY.")));
}

/* Whether one index (not a partitioned one) may hold the key. */
static bool
IndexMayHold(Oid indexoid, uint64 view, const KeyType *column, const KeyType *key, Datum value)
{
	IndexCopy  *copy = CopyUnderView(indexoid, view);
	Relation	index;
	IndexLayout layout;
	uint64		hash;
	bool		present;

	if (copy != NULL && copy->bloom != NULL)
	{
		CheckKeyTypeUnchanged(indexoid, &copy->header, column);
		BloomCheckKey(&copy->header, key);
		hash = KeyHash(key, value, copy->header.seed, copy->header.version);
		return bf_filter_test(BloomData(copy->bloom), &copy->header, hash);
	}
	index = OpenCheckedIndex(indexoid);
	ReadMeta(index, &layout);
	CheckKeyTypeUnchanged(indexoid, &layout.header, column);
	BloomCheckKey(&layout.header, key);
	hash = KeyHash(key, value, layout.header.seed, layout.header.version);
	CopyIfWorthIt(copy, index, &layout);
	present = SegmentsHold(index, &layout, layout.header.nsegments, hash);
	index_close(index, NoLock);
	return present;
}

PG_FUNCTION_INFO_V1(bloom_index_contains);
/* bloom_index_contains(index, value): false if no row has the key. */
Datum
bloom_index_contains(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ProbeSite  *site = (ProbeSite *) fcinfo->flinfo->fn_extra;
	uint64		view = CurrentViewId();
	const KeyType *key;
	Datum		value;
	ListCell   *cell;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ProbeSite));
		fcinfo->flinfo->fn_extra = site;
	}
	/* what a lock taken anew would take in: other sessions' catalog changes */
	AcceptInvalidationMessages();
	if (!ProbeSiteIsCurrent(site, indexoid))
		PrepareProbeSite(site, fcinfo, indexoid);
	value = ArgAsKey(site, PG_GETARG_DATUM(1), &key);
	foreach(cell, site->leaves)
	{
		bool		present = IndexMayHold(lfirst_oid(cell), view, &site->column, key, value);

		CountProbe(site->leaf_stats[foreach_current_index(cell)], present);
		if (present)
			PG_RETURN_BOOL(true);
	}
	PG_RETURN_BOOL(false);
}

/* ---------------------------------------------------------------------
 * SQL functions: snapshot, info, verify
 * ---------------------------------------------------------------------
 */

PG_FUNCTION_INFO_V1(bloom_index_filter);
/*
 * bloom_index_filter(index): the index as a bloom value, same answers; of
 * a partitioned index, the union of its partitions'.
 */
Datum
bloom_index_filter(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
	Bloom	   *bloom = IndexUnionSnapshot(index);

	index_close(index, NoLock);
	PG_RETURN_POINTER(bloom);
}

/* What bloom_index_info adds up over the indexes of a partitioned one. */
typedef struct IndexTotals
{
	uint64		capacity;
	uint64		inserted;
	uint64		bits;
	uint64		bits_set;
	double		none_fpr;		/* chance that no index answers "maybe" */
	int64		segments;
	int64		bytes;
	bool		vacuumed;
	uint64		dead;
} IndexTotals;

static void
AddIndexTotals(IndexTotals *totals, Oid leafoid)
{
	Relation	leaf = OpenCheckedIndex(leafoid);
	Bloom	   *bloom = IndexSnapshot(leaf);
	BfHeader	header;
	BfEstimate	e;
	bool		vacuumed;
	uint64		dead;

	BloomReadHeader(bloom, &header);
	BloomEstimates(bloom, &header, &e);
	ReadDeadKeys(leaf, &vacuumed, &dead);
	index_close(leaf, NoLock);

	totals->capacity = bf_count_add(totals->capacity, e.capacity);
	totals->inserted = bf_count_add(totals->inserted, header.inserted);
	totals->bits += e.bits;
	totals->bits_set += e.bits_set;
	totals->none_fpr *= 1.0 - e.fpr;
	totals->segments += header.nsegments;
	totals->bytes += BloomDataLen(bloom);
	totals->vacuumed = totals->vacuumed && vacuumed;
	totals->dead = bf_count_add(totals->dead, dead);
	pfree(bloom);
}

PG_FUNCTION_INFO_V1(bloom_index_info);
/*
 * bloom_index_info(index): size, fill and estimates, and rows deleted
 * since; of a partitioned index, over its partitions' indexes.
 */
Datum
bloom_index_info(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
	IndexTotals totals = {0};
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {0};
	ListCell   *cell;

	desc = ResultRowDesc(fcinfo);
	totals.none_fpr = 1.0;
	totals.vacuumed = true;
	foreach(cell, LeafIndexes(index))
		AddIndexTotals(&totals, lfirst_oid(cell));

	/* capacity: of the segments there are, as bloom_info reports it */
	values[0] = Int64GetDatum((int64) totals.capacity);
	values[1] = Float8GetDatum(OptionFpr(index));
	values[2] = Int64GetDatum((int64) totals.inserted);
	values[3] = Float8GetDatum(totals.bits > 0 ? (double) totals.bits_set / (double) totals.bits : 0.0);
	values[4] = Float8GetDatum(1.0 - totals.none_fpr);
	values[5] = Int32GetDatum((int32) totals.segments);
	values[6] = Int64GetDatum(totals.bytes);
	/* unknown until a VACUUM has counted the live rows */
	values[7] = Int64GetDatum((int64) totals.dead);
	nulls[7] = !totals.vacuumed;
	index_close(index, NoLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

typedef struct VerifyState
{
	KeyType    *key;
	BfHeader	header;
	const uint8 *value;
	int64		checked;
	int64		missing;
} VerifyState;

static void
VerifyCallback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state_ptr)
{
	VerifyState *state = (VerifyState *) state_ptr;

	if (isnull[0] || !tupleIsAlive)
		return;
	state->checked++;
	/* an ALTER TYPE taken in during the scan: the rows after it are refused */
	if (!KeyTypeIsCurrent(state->key))
	{
		KeyTypeFollowShape(state->key);
		CheckKeyTypeUnchanged(RelationGetRelid(index), &state->header, state->key);
	}
	if (!bf_filter_test(state->value, &state->header,
						KeyHash(state->key, values[0], state->header.seed, state->header.version)))
		state->missing++;
}

/*
 * The index's stored expressions (Anum_pg_index_indexprs) or predicate
 * (Anum_pg_index_indpred), prepared now, as the relcache prepares them:
 * not the relcache's copy, whose SQL functions eval_const_expressions
 * inlined by the names in their bodies, read under the search_path of
 * whoever loaded the index first, so that another role could have put its
 * own functions there for the table's owner to run.
 */
static List *
StoredIndexClauses(Relation index, AttrNumber attnum)
{
	bool		isnull;
	Datum		stored = SysCacheGetAttr(INDEXRELID, index->rd_indextuple, attnum, &isnull);
	char	   *stored_text;
	Node	   *clauses;

	if (isnull)
		return NIL;
	stored_text = TextDatumGetCString(stored);
	clauses = eval_const_expressions(NULL, (Node *) stringToNode(stored_text));
	pfree(stored_text);
	if (attnum == Anum_pg_index_indpred)
		clauses = (Node *) make_ands_implicit(canonicalize_qual((Expr *) clauses, false));
	fix_opfuncids(clauses);
	return (List *) clauses;
}

/*
 * Runs the owner's code as safely as PostgreSQL's maintenance commands
 * do: search_path is pg_catalog and pg_temp only, as RestrictSearchPath
 * sets it from PostgreSQL 17 on, and as the caller's would otherwise let
 * the caller choose which functions the owner's expressions call.
 */
static void
RestrictOwnersSearchPath(void)
{
#if PG_VERSION_NUM >= 170000
	RestrictSearchPath();
#else
	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
#endif
}

/*
 * Checks one index against the rows snapshot sees, adding to *state's
 * counts.  The index's expressions and predicate are user code: they run
 * as the table's owner, in a security-restricted operation with its own
 * GUC nest level and a fixed search_path, as REINDEX and amcheck run them,
 * and prepared from the catalog under those settings.
 */
static void
VerifyLeaf(Oid leafoid, Snapshot snapshot, VerifyState *state)
{
	Relation	index = OpenCheckedIndex(leafoid);
	Relation	heap = table_open(index->rd_index->indrelid, AccessShareLock);
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	KeyType		key;
	Bloom	   *bloom;
	IndexInfo  *indexInfo;
	TableScanDesc scan;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
	RestrictOwnersSearchPath();

	bloom = IndexSnapshot(index);
	BloomReadHeader(bloom, &state->header);
	state->value = BloomData(bloom);
	state->key = IndexKeyType(index, &key, CurrentMemoryContext);
	CheckKeyTypeUnchanged(RelationGetRelid(index), &state->header, state->key);
	/* an MVCC scan: the build scan must not expect every row not yet dead */
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Expressions = StoredIndexClauses(index, Anum_pg_index_indexprs);
	indexInfo->ii_Predicate = StoredIndexClauses(index, Anum_pg_index_indpred);
	indexInfo->ii_Concurrent = true;
	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, false);
	table_index_build_scan(heap, index, indexInfo, true, false,
						   VerifyCallback, state, scan);

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	pfree(bloom);
	table_close(heap, AccessShareLock);
	index_close(index, NoLock);
}

PG_FUNCTION_INFO_V1(bloom_index_verify);
/*
 * bloom_index_verify(index): checks that the key of every live row (its
 * expression, under its predicate) is in the filter, as amcheck does for
 * btree: an ERROR (XX002) naming how many are missing, else the count.
 * A partitioned index: each partition's index.
 */
Datum
bloom_index_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index = OpenIndexForReading(indexoid);
	VerifyState state = {0};
	Snapshot	snapshot;
	ListCell   *cell;

	/*
	 * The rows to check are those of a snapshot taken before any index is
	 * copied: every row it sees committed, so its key reached the index
	 * before the copy.  (A scan of every row not yet dead, as an index
	 * build does, would take rows still being inserted, whose keys may not
	 * be in the index yet.)
	 */
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	foreach(cell, LeafIndexes(index))
		VerifyLeaf(lfirst_oid(cell), snapshot, &state);
	UnregisterSnapshot(snapshot);
	index_close(index, NoLock);
	if (state.missing > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bloomfilter index \"%s\" misses " INT64_FORMAT " of the " INT64_FORMAT " live keys",
						get_rel_name(indexoid), state.missing, state.checked)));
	PG_RETURN_INT64(state.checked);
}
