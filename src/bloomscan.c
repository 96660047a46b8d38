/*-------------------------------------------------------------------------
 *
 * bloomscan.c
 *	  The batched filter scan, "Bloom Filter Scan": a custom scan that
 *	  stands in for a sequential scan whose quals probe a bloom filter or a
 *	  qfilter fixed for the scan (bloom_contains(f, key), f @> key,
 *	  key <@ f, and qfilter_contains and its operators alike).  It
 *	  owns the planner hooks that offer it, its plan and executor
 *	  callbacks (parallel ones included), its EXPLAIN output and its two
 *	  settings, bloomfilter.batched_scan and
 *	  bloomfilter.batched_scan_min_size.
 *
 * Why
 * ---
 * A probe of a filter larger than the caches costs a cache miss per row,
 * and a plain scan evaluates its quals one row at a time, so the misses
 * happen one after the other.  This scan reads a batch of rows, hashes
 * their keys and prefetches the block each hash will test
 * (bf_filter_prefetch; for a qfilter, qf_prefetch: the home slot's block)
 * before testing any, so that the misses overlap.
 * A filter smaller than bloomfilter.batched_scan_min_size gains nothing
 * from that: the scan probes it one row at a time, with nothing read ahead
 * (still a little cheaper than the plain scan, which calls the probe
 * function through the qual).  The size is known only when the scan
 * starts, for a filter from a parameter, so it chooses the batch, not the
 * plan.  The
 * default, 1MB, is the size of a core's own cache (L2) on common servers:
 * a filter larger than that already misses on most probes, since the
 * shared cache beyond it is far slower and the scanned rows stream
 * through it (bench/scan.sh measures a filter on either side).
 *
 * The same answers as the plain plan
 * ----------------------------------
 * A plain scan runs each row's quals in the planner's order
 * (order_qual_clauses: by security level, then by cost), the probe among
 * them, and reads no further than its parent asks.  This scan runs the
 * quals ordered before the probe, the key and the probe for a whole batch
 * ahead of its parent, and the quals after the probe (with the projection)
 * only for the rows it returns, as it returns them, in the table's order.
 * Running ahead is invisible only if what runs ahead cannot fail and has
 * no effect: so the key and the quals before the probe must contain no
 * volatile function and no function that is not leakproof applied to the
 * row's columns (the test security-barrier views rely on), and the filter
 * must not depend on the row.  The planner hook offers the scan only
 * then; should the plan's order still disagree, the scan reads one row at
 * a time, which is the plain scan's order exactly.
 *
 * The scan cannot run backward.  A cursor declared with neither SCROLL
 * nor NO SCROLL may fetch backward when its plan can, which the plain
 * scan's can (PerformCursorOpen, SPI_cursor_open): over this scan the same
 * FETCH BACKWARD would be an error.  So such a cursor is not offered the
 * scan (CursorMayScrollBack); a SCROLL cursor gets it under a Material,
 * as the planner gives any plan that cannot run backward.
 *
 * The filter's expression is evaluated when the first row reaches the
 * probe, as the executor evaluates the function's arguments; the filter is
 * read (detoasted, its header checked) and the key's type set up and
 * checked against the filter's kind at the first non-null key, where the
 * strict function is first called and does both: an error comes from the
 * same row as in the plain plan.  A filter from a parameter that changes
 * on a rescan (a correlated subquery, a nested loop's parameter) is
 * evaluated again.
 *
 * XXX: hashing a key cannot fail for the kinds a filter takes, except by
 * running out of memory; a type's own extended hash function (keys of kind
 * "other") is trusted not to fail either.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "access/detoast.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "bloomscan.h"
#include "bloomvalue.h"
#include "largevalue.h"
#include "plannersupport.h"
#include "probecache.h"

#define BLOOM_SCAN_NAME "Bloom Filter Scan"

/*
 * Rows per batch: enough misses in flight to fill the memory system, few
 * enough that the batch's tuples and blocks stay in the caches.
 */
#define BLOOM_SCAN_BATCH 128

/*
 * The share of the sequential scan's run cost this scan is priced at: just
 * below, so that it is chosen where it applies, and too little to change
 * any other choice of the plan.
 */
#define BLOOM_SCAN_COST_FACTOR 0.999

static bool batched_scan = true;
static int	batched_scan_min_size = 1024 * 1024;

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;

/*
 * The cursor options of the statement being planned (BloomScanPlanner), or
 * UNKNOWN_CURSOR_OPTIONS: the module may be loaded while a statement is
 * planned (by a function of it the planner calls), and then the hook did
 * not see that statement start.
 */
#define UNKNOWN_CURSOR_OPTIONS (-1)
static int	planning_cursor_options = UNKNOWN_CURSOR_OPTIONS;

/* What the planner found: a probe of a filter fixed for the scan. */
typedef struct ProbeClause
{
	RestrictInfo *rinfo;
	Expr	   *filter;
	Expr	   *key;
} ProbeClause;

/*
 * The executor's state.  The plan's qual holds the quals but the probe, in
 * the planner's order: the first nbefore run before the probe, in the
 * batch; the others are the node's own qual, which ExecScan runs for each
 * row returned.
 */
typedef struct BloomScanState
{
	CustomScanState css;

	ExprState  *before_qual;	/* quals ordered before the probe */
	ExprState  *recheck_qual;	/* those and the probe: EvalPlanQual */
	ExprState  *filter_expr;
	ExprState  *key_expr;
	const FilterReader *reader; /* of the filter's type */
	bool		filter_in_place;	/* a Const or Param: its value outlives
									 * the row that evaluates it */
	Bitmapset  *filter_params;	/* a rescan changing these re-evaluates */
	Oid			key_typid;
	Oid			collation;		/* the probe's input collation */
	Oid			namespace;		/* the extension's, whose types are not keys */
	bool		may_read_ahead; /* the plan lets the batch read ahead (see
								 * PlanBloomScanPath), and rows are heap rows */

	/*
	 * The filter: its expression evaluated when the first row reaches the
	 * probe (filter_ready), the value read at the first non-null key
	 * (filter_read), as the probe function would.
	 */
	MemoryContext filter_cxt;
	bool		filter_ready;
	bool		filter_null;
	Datum		filter_value;
	bool		filter_read;
	struct varlena *filter;
	void	   *header;			/* the reader's, decoded from filter */
	Size		filter_bytes;
	bool		key_ready;		/* key set up and checked against header */
	KeyType		key;

	/*
	 * The batch (see KeepRow): the rows probed, their pages, pinned, and
	 * their hashes; then the rows that may match, put back in the scan slot
	 * one by one.  A batch of one row is returned where it was read.
	 */
	int			batch_size;		/* rows per batch, 1 until worth more */
	bool		batched;		/* this batch keeps rows in rows[] */
	HeapTupleData rows[BLOOM_SCAN_BATCH];
	Buffer		row_pages[BLOOM_SCAN_BATCH];
	uint64		hashes[BLOOM_SCAN_BATCH];	/* a qfilter's: fingerprints */
	uint16		probed[BLOOM_SCAN_BATCH];
	uint16		survivors[BLOOM_SCAN_BATCH];
	int			nsurvivors;
	int			next;			/* the next survivor to return */
	bool		exhausted;		/* the table has no more rows */
	Buffer		pinned[BLOOM_SCAN_BATCH];	/* pages of rows[], pinned */
	int			npinned;
} BloomScanState;

static Plan *PlanBloomScanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							   List *tlist, List *clauses, List *custom_plans);
static Node *CreateBloomScanState(CustomScan *cscan);
static void BeginBloomScan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ExecBloomScan(CustomScanState *node);
static void EndBloomScan(CustomScanState *node);
static void ReScanBloomScan(CustomScanState *node);
static Size EstimateDSMBloomScan(CustomScanState *node, ParallelContext *pcxt);
static void InitializeDSMBloomScan(CustomScanState *node, ParallelContext *pcxt,
								   void *coordinate);
static void ReInitializeDSMBloomScan(CustomScanState *node, ParallelContext *pcxt,
									 void *coordinate);
static void InitializeWorkerBloomScan(CustomScanState *node, shm_toc *toc,
									  void *coordinate);
static void ExplainBloomScan(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods BloomScanPathMethods = {
	.CustomName = BLOOM_SCAN_NAME,
	.PlanCustomPath = PlanBloomScanPath,
};

static const CustomScanMethods BloomScanPlanMethods = {
	.CustomName = BLOOM_SCAN_NAME,
	.CreateCustomScanState = CreateBloomScanState,
};

static const CustomExecMethods BloomScanExecMethods = {
	.CustomName = BLOOM_SCAN_NAME,
	.BeginCustomScan = BeginBloomScan,
	.ExecCustomScan = ExecBloomScan,
	.EndCustomScan = EndBloomScan,
	.ReScanCustomScan = ReScanBloomScan,
	.EstimateDSMCustomScan = EstimateDSMBloomScan,
	.InitializeDSMCustomScan = InitializeDSMBloomScan,
	.ReInitializeDSMCustomScan = ReInitializeDSMBloomScan,
	.InitializeWorkerCustomScan = InitializeWorkerBloomScan,
	.ExplainCustomScan = ExplainBloomScan,
};

/* ---------------------------------------------------------------------
 * Planning
 * ---------------------------------------------------------------------
 */

/*
 * Whether funcid is one of this extension's probe functions
 * (ProbeFunctionReader) with its filter argument of the type the function
 * declares.  Sets *filter_arg to the filter's argument and *reader to the
 * reader of its type.
 */
static bool
IsProbeFunction(Oid funcid, Oid type_of_arg0, Oid type_of_arg1, int *filter_arg,
				const FilterReader **reader)
{
	Oid		   *declared;
	int			nargs;
	bool		is_probe;

	*reader = ProbeFunctionReader(funcid, filter_arg);
	if (*reader == NULL)
		return false;
	get_func_signature(funcid, &declared, &nargs);
	is_probe = nargs == 2 &&
		declared[*filter_arg] == (*filter_arg == 0 ? type_of_arg0 : type_of_arg1);
	pfree(declared);
	return is_probe;
}

/*
 * The filter, key and filter reader of a probe clause, or false for any
 * other clause.
 */
static bool
ProbeArguments(Expr *clause, Expr **filter, Expr **key, const FilterReader **reader)
{
	Oid			funcid;
	List	   *args;
	int			filter_arg;

	if (IsA(clause, FuncExpr))
	{
		funcid = ((FuncExpr *) clause)->funcid;
		args = ((FuncExpr *) clause)->args;
	}
	else if (IsA(clause, OpExpr))
	{
		funcid = get_opcode(((OpExpr *) clause)->opno);
		args = ((OpExpr *) clause)->args;
	}
	else
		return false;
	if (list_length(args) != 2 ||
		!IsProbeFunction(funcid, exprType(linitial(args)), exprType(lsecond(args)),
						 &filter_arg, reader))
		return false;
	*filter = list_nth(args, filter_arg);
	*key = list_nth(args, 1 - filter_arg);
	return true;
}

/*
 * Whether an expression may be evaluated for rows the plain plan would not
 * evaluate it for: it can neither fail on a row's values nor have effects.
 */
static bool
SafeToRunAhead(Node *expr)
{
	return !contain_volatile_functions(expr) && !contain_leaked_vars(expr);
}

/*
 * Whether clause a runs before clause b (at positions a_pos and b_pos of
 * the relation's restrictions) in the scan's plan: order_qual_clauses
 * sorts a scan's quals by security level, then by per-row cost, and keeps
 * the original order between equals.
 */
static bool
RunsBefore(PlannerInfo *root, RestrictInfo *a, int a_pos, RestrictInfo *b, int b_pos)
{
	QualCost	a_cost;
	QualCost	b_cost;

	if (a->security_level != b->security_level)
		return a->security_level < b->security_level;
	cost_qual_eval_node(&a_cost, (Node *) a, root);
	cost_qual_eval_node(&b_cost, (Node *) b, root);
	if (a_cost.per_tuple != b_cost.per_tuple)
		return a_cost.per_tuple < b_cost.per_tuple;
	return a_pos < b_pos;
}

/*
 * The first restriction of rel that the batched scan can take as its
 * probe: a probe of a filter that does not depend on the row (no
 * Var, nothing volatile, no subplan, not a null constant); whose key and
 * whose preceding quals may run ahead (see the header comment).  The
 * filter's size does not choose the plan, only the batch (EvaluateFilter):
 * a constant and the same filter read from a table get the same plan.
 */
static bool
FindProbeClause(PlannerInfo *root, RelOptInfo *rel, ProbeClause *probe)
{
	int			pos = 0;
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Expr	   *filter;
		Expr	   *key;
		const FilterReader *reader;
		bool		ahead_ok = true;
		int			other_pos = 0;
		ListCell   *other;

		pos++;
		if (rinfo->pseudoconstant || !ProbeArguments(rinfo->clause, &filter, &key, &reader))
			continue;
		if (contain_var_clause((Node *) filter) ||
			contain_volatile_functions((Node *) filter) ||
			contain_subplans((Node *) filter) ||
			!contain_var_clause((Node *) key) || !SafeToRunAhead((Node *) key))
			continue;
		if (IsA(filter, Const) && ((Const *) filter)->constisnull)
			continue;
		foreach(other, rel->baserestrictinfo)
		{
			RestrictInfo *orinfo = lfirst_node(RestrictInfo, other);

			other_pos++;
			if (orinfo == rinfo || orinfo->pseudoconstant)
				continue;
			if (RunsBefore(root, orinfo, other_pos, rinfo, pos) &&
				!SafeToRunAhead((Node *) orinfo->clause))
			{
				ahead_ok = false;
				break;
			}
		}
		if (!ahead_ok)
			continue;
		probe->rinfo = rinfo;
		probe->filter = filter;
		probe->key = key;
		return true;
	}
	return false;
}

/* A Bloom Filter Scan path in place of a sequential scan path. */
static CustomPath *
BloomScanPath(Path *seqscan, ProbeClause *probe)
{
	CustomPath *path = makeNode(CustomPath);

	path->path.pathtype = T_CustomScan;
	path->path.parent = seqscan->parent;
	path->path.pathtarget = seqscan->pathtarget;
	path->path.param_info = NULL;
	path->path.parallel_aware = seqscan->parallel_aware;
	path->path.parallel_safe = seqscan->parallel_safe;
	path->path.parallel_workers = seqscan->parallel_workers;
	path->path.rows = seqscan->rows;
#if PG_VERSION_NUM >= 180000
	path->path.disabled_nodes = seqscan->disabled_nodes;
#endif
	path->path.startup_cost = seqscan->startup_cost;
	path->path.total_cost = seqscan->startup_cost +
		(seqscan->total_cost - seqscan->startup_cost) * BLOOM_SCAN_COST_FACTOR;
	path->path.pathkeys = NIL;
	path->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	path->custom_private = list_make1(probe->rinfo);
	path->methods = &BloomScanPathMethods;
	return path;
}

/* An unparameterized sequential scan path (parallel or not). */
static bool
IsPlainSeqScan(Path *path)
{
	return path->pathtype == T_SeqScan && path->param_info == NULL;
}

/*
 * planner_hook: notes the cursor options of the statement it plans, for
 * CursorMayScrollBack, and puts back the outer statement's when it is done
 * (a function folded while planning may plan a statement of its own).
 */
static PlannedStmt *
BloomScanPlanner(Query *parse, const char *query_string, int cursorOptions,
				 ParamListInfo boundParams)
{
	int			outer_options = planning_cursor_options;
	PlannedStmt *result;

	planning_cursor_options = cursorOptions;
	PG_TRY();
	{
		if (prev_planner_hook)
			result = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			result = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		planning_cursor_options = outer_options;
	}
	PG_END_TRY();
	return result;
}

/*
 * Whether the statement being planned is a cursor that may fetch backward
 * without having said SCROLL: DECLARE and PL/pgSQL's cursors (the ones
 * that ask for a fast-start plan) with neither SCROLL nor NO SCROLL.
 *
 * Of a statement whose options are unknown, only what rules out a cursor
 * whose plan runs backward is sure: a statement other than a SELECT (a
 * cursor over one keeps its rows), or one that may run in parallel (only
 * statements run to completion may, and the planner knows that before it
 * plans a scan).  Any other may be one.
 */
static bool
CursorMayScrollBack(PlannerInfo *root)
{
	PlannerInfo *top = root;

	if (planning_cursor_options != UNKNOWN_CURSOR_OPTIONS)
		return (planning_cursor_options & CURSOR_OPT_FAST_PLAN) != 0 &&
			(planning_cursor_options & (CURSOR_OPT_SCROLL | CURSOR_OPT_NO_SCROLL)) == 0;
	while (top->parent_root != NULL)
		top = top->parent_root;
	return top->parse->commandType == CMD_SELECT && !root->glob->parallelModeOK;
}

/*
 * set_rel_pathlist_hook: next to each sequential scan of a plain table
 * whose restrictions hold a probe this scan can take, a Bloom Filter Scan.
 */
static void
BloomScanPathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	ProbeClause probe;
	List	   *seqscans = NIL;
	List	   *partial_seqscans = NIL;
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!batched_scan || CursorMayScrollBack(root) ||
		(rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		rte->rtekind != RTE_RELATION || rte->tablesample != NULL ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW) ||
		rel->baserestrictinfo == NIL)
		return;
	if (!FindProbeClause(root, rel, &probe))
		return;

	/* add_path may free the paths it replaces: pick them out first */
	foreach(lc, rel->pathlist)
		if (IsPlainSeqScan((Path *) lfirst(lc)))
			seqscans = lappend(seqscans, BloomScanPath((Path *) lfirst(lc), &probe));
	foreach(lc, rel->partial_pathlist)
		if (IsPlainSeqScan((Path *) lfirst(lc)))
			partial_seqscans = lappend(partial_seqscans,
									   BloomScanPath((Path *) lfirst(lc), &probe));
	foreach(lc, seqscans)
		add_path(rel, (Path *) lfirst(lc));
	foreach(lc, partial_seqscans)
		add_partial_path(rel, (Path *) lfirst(lc));
}

/* Where the plan keeps what execution needs, by position. */
typedef enum BloomScanExpr
{
	SCAN_EXPR_FILTER,			/* the filter argument of the probe */
	SCAN_EXPR_KEY,				/* the key argument */
	SCAN_EXPR_PROBE				/* the probe clause itself, for rechecks */
} BloomScanExpr;

typedef enum BloomScanPrivate
{
	SCAN_PRIVATE_NBEFORE,		/* how many quals run before the probe */
	SCAN_PRIVATE_MAY_READ_AHEAD,	/* whether the batch may read ahead */
	SCAN_PRIVATE_READER			/* the filter's reader (FilterReaderId) */
} BloomScanPrivate;

#define ScanExpr(cscan, which) ((Expr *) list_nth((cscan)->custom_exprs, (which)))
#define ScanPrivate(cscan, which) intVal(list_nth((cscan)->custom_private, (which)))

/*
 * The plan: the quals but the probe in the planner's order (clauses comes
 * sorted), in the plan's qual so that EXPLAIN shows them as its Filter;
 * the filter, the key and the probe in custom_exprs; how many quals run
 * before the probe, whether the batch may read ahead, and the filter's
 * type, in custom_private.
 */
static Plan *
PlanBloomScanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	RestrictInfo *probe = linitial_node(RestrictInfo, best_path->custom_private);
	List	   *quals = NIL;
	int			nbefore = -1;
	bool		may_read_ahead = true;
	Expr	   *filter;
	Expr	   *key;
	const FilterReader *reader;
	ListCell   *lc;

	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo->pseudoconstant)
			continue;
		if (rinfo == probe)
		{
			nbefore = list_length(quals);
			continue;
		}
		if (nbefore < 0 && !SafeToRunAhead((Node *) rinfo->clause))
			may_read_ahead = false;
		quals = lappend(quals, rinfo->clause);
	}
	if (nbefore < 0 || !ProbeArguments(probe->clause, &filter, &key, &reader))
		elog(ERROR, "bloom filter scan lost its probe clause");

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = quals;
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_plans = NIL;
	/* in the order of BloomScanExpr and BloomScanPrivate */
	cscan->custom_exprs = list_make3(filter, key, probe->clause);
	cscan->custom_private = list_make3(makeInteger(nbefore), makeInteger(may_read_ahead),
									   makeInteger(FilterReaderId(reader)));
	cscan->custom_scan_tlist = NIL;
	cscan->methods = &BloomScanPlanMethods;
	return &cscan->scan.plan;
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

static Node *
CreateBloomScanState(CustomScan *cscan)
{
	BloomScanState *state = palloc0(sizeof(BloomScanState));

	NodeSetTag(state, T_CustomScanState);
	state->css.methods = &BloomScanExecMethods;
	return (Node *) state;
}

static void
BeginBloomScan(CustomScanState *node, EState *estate, int eflags)
{
	BloomScanState *state = (BloomScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	int			nbefore = ScanPrivate(cscan, SCAN_PRIVATE_NBEFORE);
	List	   *before = list_copy_head(cscan->scan.plan.qual, nbefore);
	Expr	   *filter = ScanExpr(cscan, SCAN_EXPR_FILTER);
	Expr	   *key = ScanExpr(cscan, SCAN_EXPR_KEY);
	Expr	   *probe = ScanExpr(cscan, SCAN_EXPR_PROBE);

	/*
	 * ExecInitCustomScan made a virtual scan slot, and compiled the
	 * projection for one; the rows come in the table's own kind of slot.
	 */
	ExecInitScanTupleSlot(estate, &node->ss, RelationGetDescr(rel), table_slot_callbacks(rel));
	ExecAssignScanProjectionInfoWithVarno(&node->ss, cscan->scan.scanrelid);

	node->ss.ps.qual = ExecInitQual(list_copy_tail(cscan->scan.plan.qual, nbefore),
									(PlanState *) node);
	state->before_qual = ExecInitQual(before, (PlanState *) node);
	state->recheck_qual = ExecInitQual(lappend(list_copy(before), probe), (PlanState *) node);
	state->filter_expr = ExecInitExpr(filter, (PlanState *) node);
	state->key_expr = ExecInitExpr(key, (PlanState *) node);
	state->filter_in_place = IsA(filter, Const) || IsA(filter, Param);
	state->filter_params = pull_paramids(filter);
	state->key_typid = exprType((Node *) key);
	state->collation = exprInputCollation((Node *) probe);
	state->namespace = get_func_namespace(IsA(probe, FuncExpr) ? ((FuncExpr *) probe)->funcid
										  : get_opcode(((OpExpr *) probe)->opno));
	state->may_read_ahead = ScanPrivate(cscan, SCAN_PRIVATE_MAY_READ_AHEAD) != 0;
	state->reader = FilterReaderOfId(ScanPrivate(cscan, SCAN_PRIVATE_READER));
	/* in the query's memory: filter_cxt is reset with each new filter */
	state->header = palloc(state->reader->header_size);
	state->filter_cxt = AllocSetContextCreate(estate->es_query_cxt, "bloom filter scan",
											  ALLOCSET_DEFAULT_SIZES);
	state->batch_size = 1;

	/* Only heap rows can be kept without a copy (KeepRow). */
	if (!TTS_IS_BUFFERTUPLE(node->ss.ss_ScanTupleSlot))
		state->may_read_ahead = false;
}

/*
 * Evaluates the filter's expression, at the first row that reaches the
 * probe, as the executor evaluates a function's arguments.
 */
static void
EvaluateFilter(BloomScanState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	MemoryContext old;
	Datum		value;
	bool		isnull;

	MemoryContextReset(state->filter_cxt);
	old = MemoryContextSwitchTo(state->filter_cxt);
	value = ExecEvalExpr(state->filter_expr, econtext, &isnull);
	/* Anything but a Const or Param may be in memory the next row frees. */
	if (!isnull)
		state->filter_value = state->filter_in_place ? value : datumCopy(value, false, -1);
	MemoryContextSwitchTo(old);
	state->filter_null = isnull;
	state->filter_ready = true;
	state->filter_read = false;
	state->key_ready = false;
}

/*
 * Reads the filter (detoasts it, decodes and checks its header) at the
 * first non-null key, where the probe function reads it, and chooses the
 * batch size: batches only for a filter large enough to miss the caches,
 * and only if the plan lets the batch read ahead.
 */
static void
ReadFilter(BloomScanState *state)
{
	MemoryContext old = MemoryContextSwitchTo(state->filter_cxt);

	state->filter = DetoastLarge(state->filter_value, false);
	state->reader->read_header(state->filter, state->header);
	state->filter_bytes = VARSIZE(state->filter);
	MemoryContextSwitchTo(old);
	state->filter_read = true;
	state->batch_size = state->may_read_ahead &&
		state->filter_bytes >= (Size) batched_scan_min_size ? BLOOM_SCAN_BATCH : 1;
}

/*
 * Sets up the key type and checks it against the filter's kind, as the
 * probe function does at its first non-null key (with its errors).
 */
static void
SetUpKey(BloomScanState *state)
{
	KeyTypeForColumn(&state->key, state->key_typid, state->collation, state->namespace,
					 state->css.ss.ps.state->es_query_cxt);
	state->reader->check_key(state->header, &state->key);
	state->key_ready = true;
}

/* The scan's table scan, begun at the first row unless a parallel one was. */
static TableScanDesc
TableScan(BloomScanState *state)
{
	ScanState  *ss = &state->css.ss;

	if (ss->ss_currentScanDesc == NULL)
		ss->ss_currentScanDesc = table_beginscan(ss->ss_currentRelation,
												 ss->ps.state->es_snapshot, 0, NULL);
	return ss->ss_currentScanDesc;
}

/*
 * Keeps row n of the batch, just read into the scan slot, past the table
 * scan's next step.  A table scan owes a slot its row only until it
 * fetches the next, but a heap row's bytes stay where they are in their
 * page for as long as the page is pinned: the batch keeps the row's
 * header (a few bytes, where copying the row would cost as much as the
 * probe) and pins each page once, where a slot per row would pin and
 * unpin one per row.  (Rows of other table access methods are not read
 * ahead: BeginBloomScan.)
 */
static inline void
KeepRow(BloomScanState *state, int n)
{
	BufferHeapTupleTableSlot *slot = (BufferHeapTupleTableSlot *) state->css.ss.ss_ScanTupleSlot;

	state->rows[n] = *slot->base.tuple;
	state->row_pages[n] = slot->buffer;
	if (state->npinned == 0 || state->pinned[state->npinned - 1] != slot->buffer)
	{
		IncrBufferRefCount(slot->buffer);
		state->pinned[state->npinned++] = slot->buffer;
	}
}

/*
 * Lets go of the batch's rows and their pages.  The scan slot keeps its
 * row, and its own pin on the row's page: the next row read replaces both,
 * and clearing the slot first would unpin and pin again the page most rows
 * share, per row where the scan reads one row at a time.
 */
static void
EmptyBatch(BloomScanState *state)
{
	for (int i = 0; i < state->npinned; i++)
		ReleaseBuffer(state->pinned[i]);
	state->npinned = 0;
	state->nsurvivors = 0;
	state->next = 0;
}

/*
 * Survivor n, in the scan slot, where it was read or put back.  The scan
 * slot must hold the row returned last, not one read ahead: WHERE CURRENT
 * OF takes a cursor's row from there (execCurrentOf).
 */
static inline TupleTableSlot *
ReturnRow(BloomScanState *state, int n)
{
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;

	if (!state->batched)
		return slot;
	return ExecStoreBufferHeapTuple(&state->rows[n], slot, state->row_pages[n]);
}

/*
 * The probe in its three steps, through the filter type's reader: a key's
 * hash (a qfilter's fingerprint), the prefetch of what its test will read,
 * and the test.  The reader is the same for the whole scan, so each call's
 * target is predicted; the rows' keys and quals cost far more.
 */
static inline uint64
ProbeHash(BloomScanState *state, Datum key)
{
	return state->reader->hash(state->header, &state->key, key);
}

static inline void
ProbePrefetch(BloomScanState *state, uint64 hash)
{
	state->reader->prefetch(state->filter, state->header, hash);
}

static inline bool
ProbeTest(BloomScanState *state, uint64 hash)
{
	return state->reader->test_hash(state->filter, state->header, hash);
}

/*
 * Reads the next batch: for each row, the quals before the probe, then its
 * key, hashed and its block prefetched; then the tests, which keep the
 * rows that may be in the filter, in order.
 */
static void
FillBatch(BloomScanState *state)
{
	ExprContext *econtext = state->css.ss.ps.ps_ExprContext;
	TableScanDesc scan = TableScan(state);
	TupleTableSlot *slot = state->css.ss.ss_ScanTupleSlot;
	int			nprobed = 0;
	int			dropped = 0;

	EmptyBatch(state);
	if (!state->filter_read && state->may_read_ahead)
		state->batch_size = BLOOM_SCAN_BATCH;	/* until the filter says */
	state->batched = state->batch_size > 1;

	/* batch_size may drop to 1 once the filter is known */
	for (int n = 0; n < state->batch_size; n++)
	{
		MemoryContext old;
		Datum		key;
		bool		isnull;

		if (!table_scan_getnextslot(scan, ForwardScanDirection, slot))
		{
			state->exhausted = true;
			break;
		}
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (state->before_qual != NULL && !ExecQual(state->before_qual, econtext))
		{
			InstrCountFiltered1(state, 1);
			continue;
		}
		if (!state->filter_ready)
			EvaluateFilter(state);
		if (state->filter_null)
		{
			dropped++;			/* a strict probe of NULL is NULL */
			continue;
		}
		old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
		key = ExecEvalExpr(state->key_expr, econtext, &isnull);
		if (!isnull)
		{
			if (!state->filter_read)
				ReadFilter(state);
			if (!state->key_ready || !KeyTypeIsCurrent(&state->key))
				SetUpKey(state);
			state->hashes[n] = ProbeHash(state, key);
			if (state->batched)
			{
				ProbePrefetch(state, state->hashes[n]);
				KeepRow(state, n);
			}
			state->probed[nprobed++] = n;
		}
		else
			dropped++;
		MemoryContextSwitchTo(old);
	}

	for (int i = 0; i < nprobed; i++)
	{
		int			n = state->probed[i];

		if (ProbeTest(state, state->hashes[n]))
			state->survivors[state->nsurvivors++] = n;
		else
			dropped++;
	}
	InstrCountFiltered2(state, dropped);
}

/* ExecScan's access method: the next row of the batch that may match. */
static TupleTableSlot *
BloomScanNext(ScanState *ss)
{
	BloomScanState *state = (BloomScanState *) ss;

	for (;;)
	{
		if (state->next < state->nsurvivors)
			return ReturnRow(state, state->survivors[state->next++]);
		if (state->exhausted)
			return NULL;
		CHECK_FOR_INTERRUPTS();
		FillBatch(state);
	}
}

/* ExecScan's recheck (EvalPlanQual): the quals before the probe, and it. */
static bool
BloomScanRecheck(ScanState *ss, TupleTableSlot *slot)
{
	BloomScanState *state = (BloomScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	return ExecQual(state->recheck_qual, econtext);
}

/* ExecScan runs the quals after the probe and projects. */
static TupleTableSlot *
ExecBloomScan(CustomScanState *node)
{
	return ExecScan(&node->ss, BloomScanNext, BloomScanRecheck);
}

static void
EndBloomScan(CustomScanState *node)
{
	BloomScanState *state = (BloomScanState *) node;

	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	EmptyBatch(state);
	if (node->ss.ss_currentScanDesc != NULL)
		table_endscan(node->ss.ss_currentScanDesc);
	MemoryContextDelete(state->filter_cxt);
}

static void
ReScanBloomScan(CustomScanState *node)
{
	BloomScanState *state = (BloomScanState *) node;

	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	EmptyBatch(state);
	state->exhausted = false;
	if (node->ss.ss_currentScanDesc != NULL)
		table_rescan(node->ss.ss_currentScanDesc, NULL);
	if (bms_overlap(node->ss.ps.chgParam, state->filter_params))
		state->filter_ready = false;
	ExecScanReScan(&node->ss);
}

/* A parallel scan's shared state is the table's parallel scan descriptor. */
static Size
EstimateDSMBloomScan(CustomScanState *node, ParallelContext *pcxt)
{
	return table_parallelscan_estimate(node->ss.ss_currentRelation,
									   node->ss.ps.state->es_snapshot);
}

static void
InitializeDSMBloomScan(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	table_parallelscan_initialize(node->ss.ss_currentRelation,
								  (ParallelTableScanDesc) coordinate,
								  node->ss.ps.state->es_snapshot);
	node->ss.ss_currentScanDesc =
		table_beginscan_parallel(node->ss.ss_currentRelation,
								 (ParallelTableScanDesc) coordinate);
}

static void
ReInitializeDSMBloomScan(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	table_parallelscan_reinitialize(node->ss.ss_currentRelation,
									(ParallelTableScanDesc) coordinate);
}

static void
InitializeWorkerBloomScan(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	node->ss.ss_currentScanDesc =
		table_beginscan_parallel(node->ss.ss_currentRelation,
								 (ParallelTableScanDesc) coordinate);
}

/*
 * EXPLAIN: the key, the filter's size where known (a constant, or once
 * evaluated), never its value; under ANALYZE the rows the probe removed
 * (the node's second filtered count, summed over workers like the first),
 * shown as EXPLAIN shows its own counts.
 */
static void
ExplainBloomScan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BloomScanState *state = (BloomScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Expr	   *filter = ScanExpr(cscan, SCAN_EXPR_FILTER);
	List	   *context;
	Size		size = 0;
	Instrumentation *instrument = node->ss.ps.instrument;

	/* qualified as EXPLAIN qualifies a scan's Filter: under VERBOSE */
	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	ExplainPropertyText("Bloom Filter Key",
						deparse_expression((Node *) ScanExpr(cscan, SCAN_EXPR_KEY), context,
										   es->verbose, false),
						es);
	if (IsA(filter, Const) && !((Const *) filter)->constisnull)
		size = toast_raw_datum_size(((Const *) filter)->constvalue);
	else if (state->filter_read)
		size = state->filter_bytes;
	if (size > 0)
		ExplainPropertyInteger("Bloom Filter Size", "kB", (size + 1023) / 1024, es);
	if (es->analyze && instrument != NULL && instrument->nloops > 0 &&
		(instrument->nfiltered2 > 0 || es->format != EXPLAIN_FORMAT_TEXT))
		ExplainPropertyFloat("Rows Removed by Bloom Filter", NULL,
							 instrument->nfiltered2 / instrument->nloops, 0, es);
	/* this process's choice (batched_scan_min_size, may_read_ahead) */
	if (es->analyze && state->filter_read)
		ExplainPropertyText("Bloom Filter Probes",
							state->batch_size > 1 ? "batched" : "row by row", es);
}

/* ---------------------------------------------------------------------
 * Module load
 * ---------------------------------------------------------------------
 */

void
BloomScanInit(void)
{
	DefineCustomBoolVariable("bloomfilter.batched_scan",
							 "Lets the planner use the batched Bloom Filter Scan for probes of large filters.",
							 "Off leaves such probes to a plain sequential scan; the results are the same.",
							 &batched_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("bloomfilter.batched_scan_min_size",
							"The smallest filter the Bloom Filter Scan probes in prefetched batches.",
							"A smaller filter is probed one row at a time.",
							&batched_scan_min_size,
							1024 * 1024,
							0,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	RegisterCustomScanMethods(&BloomScanPlanMethods);
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = BloomScanPathlist;
	prev_planner_hook = planner_hook;
	planner_hook = BloomScanPlanner;
}
