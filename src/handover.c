/*-------------------------------------------------------------------------
 *
 * handover.c
 *	  The parallel leader hands its own partial aggregate state to its
 *	  Finalize Aggregate in memory instead of serialising it.
 *
 * Why
 * ---
 * The leader of a parallel plan runs its share of the partial aggregate
 * too, and the Finalize Aggregate above the Gather, in the same process,
 * reads the result.  Serialised, a large state would be copied four times
 * on its way there: into the message, twice by the executor as the first
 * input row of the Finalize Aggregate, and by deserialize, each time into
 * new memory that must be faulted in while the other CPUs wait.  When the
 * plan shows that the state goes straight to an aggregate of this process
 * that deserialises it, the message only names it, and deserialize returns
 * the state itself.
 *
 * How it stays safe
 * -----------------
 * Only one plan shape qualifies (HandOverConsumer): an ungrouped Partial
 * Aggregate directly under a Gather directly under an ungrouped Aggregate
 * that deserialises.  The leader passes its row from the Gather straight to
 * that aggregate, which deserialises it at once and reads the state until
 * its final function, within the same call; the partial aggregate's state
 * is reset only by a rescan or the end of its node, and those reach the
 * aggregate above first.  A registration ends when the state's memory is
 * reset.  A message names this process (pid and start time) and a token it
 * never reuses, and is honoured only for the consumer it was made for.
 *
 * This reads executor internals (the plan tree, AggState), so it can be
 * turned off: SET bloomfilter.parallel_handover = off serialises every
 * state, with the same result bit for bit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "lib/ilist.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "bloomvalue.h"
#include "handover.h"

/*
 * A state handed over within this process, registered until the memory it
 * lives in is reset (then "forget" unregisters it).
 */
typedef struct HandedOverState
{
	dlist_node	node;
	uint64		token;
	void	   *state;
	const Plan *consumer;		/* the aggregate that may take it */
	MemoryContextCallback forget;
} HandedOverState;

static dlist_head handed_over = DLIST_STATIC_INIT(handed_over);
static uint64 last_token = 0;

/* bloomfilter.parallel_handover */
static bool parallel_handover = true;

void
HandOverDefineSettings(void)
{
	/*
	 * Another build of the module loaded in this session (bench/ab.sh
	 * compares two) has defined it already: defining it twice is an ERROR,
	 * and this build then keeps the default.
	 */
	if (GetConfigOption("bloomfilter.parallel_handover", true, false) != NULL &&
		!(GetConfigOptionFlags("bloomfilter.parallel_handover", true) & GUC_CUSTOM_PLACEHOLDER))
		return;
	DefineCustomBoolVariable("bloomfilter.parallel_handover",
							 "Lets a parallel leader hand its own bloom_agg state to its Finalize Aggregate in memory.",
							 "Off serialises the leader's state like a worker's; the result is the same.",
							 &parallel_handover,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("bloomfilter");
#else
	EmitWarningsOnPlaceholders("bloomfilter");
#endif
}

/* Whether the caller is an ungrouped aggregate (no GROUP BY): one state. */
bool
UngroupedAggregate(FunctionCallInfo fcinfo)
{
	AggState   *aggstate = CallingAggNode(fcinfo);
	Agg		   *agg;

	if (aggstate == NULL)
		return false;
	agg = (Agg *) aggstate->ss.ps.plan;
	return agg->aggstrategy == AGG_PLAIN && agg->groupingSets == NIL;
}

/*
 * The node of the plan tree under "node" that has "child" as a child, or
 * NULL.  It follows the children an aggregate of a parallel plan can sit
 * under; a kind of node it does not follow only means that a state is
 * serialised instead of handed over.
 */
static Plan *
ParentPlan(Plan *node, const Plan *child)
{
	List	   *children = NIL;
	ListCell   *lc;
	Plan	   *found;

	check_stack_depth();
	if (node == NULL)
		return NULL;
	if (node->lefttree == child || node->righttree == child)
		return node;
	if ((found = ParentPlan(node->lefttree, child)) != NULL ||
		(found = ParentPlan(node->righttree, child)) != NULL)
		return found;
	switch (nodeTag(node))
	{
		case T_Append:
			children = ((Append *) node)->appendplans;
			break;
		case T_MergeAppend:
			children = ((MergeAppend *) node)->mergeplans;
			break;
		case T_SubqueryScan:
			if (((SubqueryScan *) node)->subplan == child)
				return node;
			return ParentPlan(((SubqueryScan *) node)->subplan, child);
		case T_CustomScan:
			children = ((CustomScan *) node)->custom_plans;
			break;
#if PG_VERSION_NUM < 140000
		case T_ModifyTable:
			children = ((ModifyTable *) node)->plans;
			break;
#endif
		default:
			break;
	}
	foreach(lc, children)
	{
		if (lfirst(lc) == child)
			return node;
		if ((found = ParentPlan(lfirst(lc), child)) != NULL)
			return found;
	}
	return NULL;
}

/* The parent of "child" in the statement's plan or its subplans, or NULL. */
static Plan *
ParentInStatement(PlannedStmt *stmt, const Plan *child)
{
	Plan	   *found = ParentPlan(stmt->planTree, child);
	ListCell   *lc;

	foreach(lc, stmt->subplans)
	{
		if (found != NULL)
			break;
		found = ParentPlan(lfirst(lc), child);
	}
	return found;
}

/*
 * The aggregate a state can be handed over to, if serialize is called for
 * the leader's own share of a parallel plan, or NULL: an ungrouped partial
 * aggregate right under a Gather right under an ungrouped aggregate that
 * deserialises.  The leader passes its row from the Gather straight to that
 * aggregate, which deserialises it at once and reads the state until its
 * final function, within the same call to it.  The partial aggregate's one
 * state is reset only by a rescan or the end of its node, and those reach
 * the aggregate above it first.
 */
const Plan *
HandOverConsumer(FunctionCallInfo fcinfo)
{
	AggState   *aggstate;
	Agg		   *agg;
	PlannedStmt *stmt;
	Plan	   *gather;
	Plan	   *consumer;

	if (!parallel_handover || IsParallelWorker() || !UngroupedAggregate(fcinfo))
		return NULL;
	aggstate = CallingAggNode(fcinfo);
	agg = (Agg *) aggstate->ss.ps.plan;
	stmt = aggstate->ss.ps.state->es_plannedstmt;
	if (aggstate->aggsplit != AGGSPLIT_INITIAL_SERIAL || stmt == NULL)
		return NULL;
	gather = ParentInStatement(stmt, &agg->plan);
	if (gather == NULL || !IsA(gather, Gather))
		return NULL;
	consumer = ParentInStatement(stmt, gather);
	if (consumer == NULL || !IsA(consumer, Agg) ||
		((Agg *) consumer)->aggstrategy != AGG_PLAIN ||
		!DO_AGGSPLIT_DESERIALIZE(((Agg *) consumer)->aggsplit))
		return NULL;
	return consumer;
}

/* Unregisters a state handed over, as the memory it lives in goes. */
static void
ForgetHandedOver(void *arg)
{
	dlist_delete(&((HandedOverState *) arg)->node);
}

/*
 * Registers the state for "consumer" and returns the message that names it:
 * this process (its pid and start time, as pids are reused) and a number
 * it never gives twice.
 */
bytea *
HandOver(void *state, MemoryContext context, const Plan *consumer,
		 uint8 first_byte)
{
	HandedOverState *entry = MemoryContextAlloc(context, sizeof(HandedOverState));
	StringInfoData buf;

	entry->token = ++last_token;
	entry->state = state;
	entry->consumer = consumer;
	dlist_push_head(&handed_over, &entry->node);
	entry->forget.func = ForgetHandedOver;
	entry->forget.arg = entry;
	MemoryContextRegisterResetCallback(context, &entry->forget);

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, first_byte);
	pq_sendint32(&buf, MyProcPid);
	pq_sendint64(&buf, (int64) MyStartTimestamp);
	pq_sendint64(&buf, (int64) entry->token);
	return pq_endtypsend(&buf);
}

/*
 * The state a message names, if this process registered it for the
 * aggregate calling deserialize.  Nothing is ever read from an address in
 * a message: a name this process did not register for this very consumer
 * is an ERROR.
 */
void *
HandedOver(StringInfo buf, FunctionCallInfo fcinfo)
{
	int			pid = pq_getmsgint(buf, 4);
	int64		started = pq_getmsgint64(buf);
	uint64		token = (uint64) pq_getmsgint64(buf);
	const Plan *caller = IsA(fcinfo->context, AggState)
		? ((AggState *) fcinfo->context)->ss.ps.plan : NULL;
	dlist_iter	iter;

	pq_getmsgend(buf);
	dlist_foreach(iter, &handed_over)
	{
		HandedOverState *entry = dlist_container(HandedOverState, node, iter.cur);

		if (entry->token == token && entry->consumer == caller &&
			pid == MyProcPid && started == (int64) MyStartTimestamp)
			return entry->state;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid serialised bloom_agg state"),
			 errdetail("It names a state that this aggregate cannot take.")));
	return NULL;				/* not reached */
}
