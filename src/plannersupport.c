/*-------------------------------------------------------------------------
 *
 * plannersupport.c
 *	  What the planner learns about the extension's functions: the
 *	  selectivity of bloom_contains(f, x), f @> x and x <@ f (one estimate
 *	  for all three) and the cost of one call; which argument of a probe
 *	  is the filter (also for the batched scan, bloomscan.c); and, from
 *	  PostgreSQL 18 on, that bloom_add and bloom_add_all may change their
 *	  filter in place.
 *
 * Selectivity
 * -----------
 * When the filter is known at plan time (a constant, a parameter of a
 * custom plan, anything estimate_expression_value folds) and the key has
 * statistics, the estimate is the share of the key's sampled values that
 * the filter answers "maybe" for: each most common value weighs its
 * frequency, and the histogram bounds stand for the rest of the non-null
 * values.  Probing the filter itself, false positives included, is what
 * makes the estimate honest for a filter that holds none, some or all of
 * the column; since a hundred sampled values cannot resolve a 1% rate, the
 * filter's target rate of the non-null values is the floor.  Without
 * statistics, the filter's distinct count over the key's distinct count is
 * used, plus the filter's rate for the others.
 *
 * When the filter is not known (a scalar subquery, a join column), nothing
 * says how many keys it holds: the estimate is DEFAULT_CONTAINS_SEL, the
 * default PostgreSQL's own containment operators use (DEFAULT_CONTAIN_SEL
 * in selfuncs.c), because a filter is worth probing when it rejects most
 * rows.  The same holds for keys of kind "other", which only execution may
 * hash, and for a filter of another kind than the key, which execution
 * will refuse.
 *
 * Cost
 * ----
 * A probe hashes the key and tests one block: a couple of operator costs
 * per row.  A filter read from a table is detoasted once per query (or,
 * for a single probe, read by slices) and then cached, so its size counts
 * once, as startup cost: its average width in pages when statistics give
 * it.  A constant filter is already in memory.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_statistic.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/selfuncs.h"

#include "bloomvalue.h"
#include "keykind.h"
#include "plannersupport.h"
#include "probefunctions.h"

/* Selectivity when the filter or the key cannot be judged at plan time. */
#define DEFAULT_CONTAINS_SEL 0.005

/* A probe's cost in operator costs: one hash, one block test. */
#define PROBE_OPERATOR_COSTS 2.0

/*
 * The share of the non-null sampled values of the key (vardata) that the
 * filter may contain, or false without usable statistics.
 */
static bool
SelectivityFromStatistics(Bloom *filter, const BfHeader *header,
						  const KeyType *key, VariableStatData *vardata,
						  double *selectivity)
{
	AttStatsSlot mcv;
	AttStatsSlot histogram;
	double		nullfrac;
	double		mcv_share = 0.0;
	double		mcv_found = 0.0;
	double		rest;
	double		floor_selectivity;
	bool		have_mcv;
	bool		have_histogram;

	if (!HeapTupleIsValid(vardata->statsTuple))
		return false;
	nullfrac = ((Form_pg_statistic) GETSTRUCT(vardata->statsTuple))->stanullfrac;
	have_mcv = get_attstatsslot(&mcv, vardata->statsTuple, STATISTIC_KIND_MCV,
								InvalidOid, ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS);
	have_histogram = get_attstatsslot(&histogram, vardata->statsTuple,
									  STATISTIC_KIND_HISTOGRAM, InvalidOid,
									  ATTSTATSSLOT_VALUES);
	if (!have_mcv && !have_histogram)
		return false;
	rest = Max(0.0, 1.0 - nullfrac);

	if (have_mcv)
	{
		for (int i = 0; i < mcv.nvalues; i++)
		{
			mcv_share += mcv.numbers[i];
			if (BloomTestValue(filter, header, key, mcv.values[i]))
				mcv_found += mcv.numbers[i];
		}
	}
	/*
	 * A hundred sampled values cannot resolve a rate of 1%: whatever the
	 * sample says, the filter answers "maybe" for at least its target rate
	 * of the values it does not hold.
	 */
	floor_selectivity = rest * header->fpr;
	rest = Max(0.0, rest - mcv_share);
	if (have_histogram && histogram.nvalues > 0)
	{
		int			found = 0;

		for (int i = 0; i < histogram.nvalues; i++)
			found += BloomTestValue(filter, header, key, histogram.values[i]);
		*selectivity = mcv_found + rest * found / histogram.nvalues;
	}
	else
		*selectivity = mcv_found + (mcv_share > 0 ? rest * mcv_found / mcv_share : 0.0);

	*selectivity = Max(*selectivity, floor_selectivity);
	if (have_mcv)
		free_attstatsslot(&mcv);
	if (have_histogram)
		free_attstatsslot(&histogram);
	return true;
}

/*
 * Without statistics: the filter's distinct values over the key's, the
 * others passing at the filter's rate; false if the key's distinct count
 * is only a default.
 */
static bool
SelectivityFromDistinctCounts(Bloom *filter, const BfHeader *header,
							  VariableStatData *vardata, double *selectivity)
{
	bool		isdefault;
	double		key_distinct = get_variable_numdistinct(vardata, &isdefault);
	BfEstimate	estimate;
	double		held;

	if (isdefault || key_distinct <= 0)
		return false;
	BloomEstimates(filter, header, &estimate);
	held = Min(1.0, estimate.distinct / key_distinct);
	*selectivity = held + (1.0 - held) * estimate.fpr;
	return true;
}

/*
 * The one estimate behind the support function and the operators'
 * restriction estimator.
 */
static Selectivity
ContainsSelectivity(PlannerInfo *root, Node *filter_arg, Node *key_arg,
					Oid collation, int varRelid)
{
	Node	   *folded = estimate_expression_value(root, filter_arg);
	VariableStatData vardata;
	KeyType		key;
	Bloom	   *filter;
	BfHeader	header;
	double		selectivity = DEFAULT_CONTAINS_SEL;

	if (!IsA(folded, Const) || ((Const *) folded)->constisnull)
		return DEFAULT_CONTAINS_SEL;
	if (!KeyTypeOfBuiltinKind(&key, exprType(key_arg), collation))
		return DEFAULT_CONTAINS_SEL;
	filter = DatumGetBloomP(((Const *) folded)->constvalue);
	BloomReadHeader(filter, &header);
	if (header.identity.kind == BF_KIND_NONE)
		return 0.0;
	if (header.identity.kind != key.identity.kind)
		return DEFAULT_CONTAINS_SEL;	/* execution refuses it */

	key_arg = estimate_expression_value(root, key_arg);
	if (IsA(key_arg, Const))
		return ((Const *) key_arg)->constisnull ? 0.0
			: BloomTestValue(filter, &header, &key, ((Const *) key_arg)->constvalue);

	/*
	 * The sampled values are probed only where the caller may read every
	 * row they were sampled from (acl_ok: SELECT, no row-level security),
	 * as PostgreSQL's estimators do for an operator that is not leakproof
	 * (statistic_proc_security_check): otherwise a plan's row estimate
	 * would say whether a hidden row's value is in a filter.
	 */
	examine_variable(root, key_arg, varRelid, &vardata);
	if (!(vardata.acl_ok &&
		  SelectivityFromStatistics(filter, &header, &key, &vardata, &selectivity)) &&
		!SelectivityFromDistinctCounts(filter, &header, &vardata, &selectivity))
		selectivity = DEFAULT_CONTAINS_SEL;
	ReleaseVariableStats(vardata);
	CLAMP_PROBABILITY(selectivity);
	return selectivity;
}

/* The filter types, each by its reader; a plan names one by its place here. */
static const FilterReader *const filter_readers[] = {&BloomReader, &QFilterReader};

/* The probe functions, by the code they run: their filter's argument and reader. */
static const struct
{
	PGFunction	code;
	int			filter_arg;
	const FilterReader *reader;
}			probe_functions[] =
{
	{bloom_contains, 0, &BloomReader},
	{bloom_contained_by, 1, &BloomReader},
	{qfilter_contains, 0, &QFilterReader},
	{qfilter_contained_by, 1, &QFilterReader},
};

/*
 * The code funcid runs, if it is a C function; NULL for any other.  The
 * probes are recognised by their code, not their names: anyone with
 * CREATE on a schema can make a function called bloom_contains, over a
 * type called bloom, and a planner that took it for a probe would read its
 * argument as a filter (a crash) and answer with this extension's probe
 * instead of that function.  Only a superuser can make a C function, so
 * one that runs this module's code is one of its own.
 */
static PGFunction
CodeOf(Oid funcid)
{
	HeapTuple	tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	bool		in_c;
	FmgrInfo	flinfo;

	if (!HeapTupleIsValid(tuple))
		return NULL;
	in_c = ((Form_pg_proc) GETSTRUCT(tuple))->prolang == ClanguageId;
	ReleaseSysCache(tuple);
	if (!in_c)
		return NULL;
	fmgr_info(funcid, &flinfo);
	return flinfo.fn_addr;
}

const FilterReader *
ProbeFunctionReader(Oid funcid, int *filter_arg)
{
	PGFunction	code = CodeOf(funcid);

	for (int i = 0; code != NULL && i < lengthof(probe_functions); i++)
		if (probe_functions[i].code == code)
		{
			*filter_arg = probe_functions[i].filter_arg;
			return probe_functions[i].reader;
		}
	return NULL;
}

int
FilterReaderId(const FilterReader *reader)
{
	for (int i = 0; i < lengthof(filter_readers); i++)
		if (filter_readers[i] == reader)
			return i;
	elog(ERROR, "filter reader not in the probe table");
}

const FilterReader *
FilterReaderOfId(int id)
{
	if (id < 0 || id >= lengthof(filter_readers))
		elog(ERROR, "plan names filter reader %d of %d", id, (int) lengthof(filter_readers));
	return filter_readers[id];
}

/* Which argument of a probe function is the filter: <@ has it second. */
static int
FilterArgumentOf(Oid funcid)
{
	int			filter_arg = 0;

	return ProbeFunctionReader(funcid, &filter_arg) != NULL ? filter_arg : 0;
}

/* Startup cost of a filter argument: reading a stored one once. */
static Cost
FilterStartupCost(PlannerInfo *root, Node *filter_arg)
{
	VariableStatData vardata;
	double		width = 0;

	if (root == NULL || !IsA(filter_arg, Var))
		return 0;
	examine_variable(root, filter_arg, 0, &vardata);
	if (HeapTupleIsValid(vardata.statsTuple))
		width = ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stawidth;
	ReleaseVariableStats(vardata);
	return ceil(width / BLCKSZ) * seq_page_cost;
}

PG_FUNCTION_INFO_V1(bloom_contains_support);
/* Planner support of bloom_contains and bloom_contained_by. */
Datum
bloom_contains_support(PG_FUNCTION_ARGS)
{
	Node	   *request = (Node *) PG_GETARG_POINTER(0);

	if (IsA(request, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) request;
		int			filter_arg = FilterArgumentOf(req->funcid);

		if (req->is_join || list_length(req->args) != 2)
			PG_RETURN_POINTER(NULL);
		req->selectivity = ContainsSelectivity(req->root,
											   list_nth(req->args, filter_arg),
											   list_nth(req->args, 1 - filter_arg),
											   req->inputcollid, req->varRelid);
		PG_RETURN_POINTER(req);
	}
	if (IsA(request, SupportRequestCost))
	{
		SupportRequestCost *req = (SupportRequestCost *) request;
		List	   *args = NIL;

		if (req->node != NULL && IsA(req->node, FuncExpr))
			args = ((FuncExpr *) req->node)->args;
		else if (req->node != NULL && IsA(req->node, OpExpr))
			args = ((OpExpr *) req->node)->args;
		req->per_tuple = PROBE_OPERATOR_COSTS * cpu_operator_cost;
		req->startup = list_length(args) == 2
			? FilterStartupCost(req->root, list_nth(args, FilterArgumentOf(req->funcid)))
			: 0;
		PG_RETURN_POINTER(req);
	}
	PG_RETURN_POINTER(NULL);
}

PG_FUNCTION_INFO_V1(bloom_add_support);
/*
 * Planner support of bloom_add and bloom_add_all: in an assignment
 * f := bloom_add(f, x), PL/pgSQL (from PostgreSQL 18 on) may hand f over
 * read-write, so that the filter is changed in place (bloomexpanded.c)
 * instead of copied per key.  Only when f is the variable assigned to.
 */
Datum
bloom_add_support(PG_FUNCTION_ARGS)
{
#if PG_VERSION_NUM >= 180000
	Node	   *request = (Node *) PG_GETARG_POINTER(0);

	if (IsA(request, SupportRequestModifyInPlace))
	{
		SupportRequestModifyInPlace *req = (SupportRequestModifyInPlace *) request;
		Param	   *filter = (Param *) linitial(req->args);

		if (filter != NULL && IsA(filter, Param) &&
			filter->paramkind == PARAM_EXTERN && filter->paramid == req->paramid)
			PG_RETURN_POINTER(filter);
	}
#endif
	PG_RETURN_POINTER(NULL);
}

PG_FUNCTION_INFO_V1(bloom_contains_sel);
/* Restriction estimator of @> (filter first) and <@ (filter second). */
Datum
bloom_contains_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	Oid			operator = PG_GETARG_OID(1);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);
	int			filter_arg;

	if (list_length(args) != 2)
		PG_RETURN_FLOAT8(DEFAULT_CONTAINS_SEL);
	filter_arg = FilterArgumentOf(get_opcode(operator));
	PG_RETURN_FLOAT8(ContainsSelectivity(root, list_nth(args, filter_arg),
										 list_nth(args, 1 - filter_arg),
										 PG_GET_COLLATION(), varRelid));
}
