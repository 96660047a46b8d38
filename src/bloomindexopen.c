/*-------------------------------------------------------------------------
 *
 * bloomindexopen.c
 *	  Opening a bloomfilter index for the SQL functions: who may read it
 *	  (SELECT on the columns its key reads, no row-level security in the
 *	  way), whether it may answer (built, valid, not too new for the
 *	  snapshot), and which indexes answer for a partitioned one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/pg_inherits.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "bloomindex.h"

/*
 * Whether the user may read every column the key reads: the key column or
 * its expression's columns, and the predicate's (a whole-row reference
 * needs them all).  SELECT on these is enough, as for a query selecting
 * them.
 */
static bool
MayReadKeyColumns(Relation index, Oid heapoid, Oid user)
{
	Bitmapset  *columns = NULL;
	int			member = -1;

	for (int i = 0; i < index->rd_index->indnatts; i++)
	{
		AttrNumber	column = index->rd_index->indkey.values[i];

		if (column != 0)		/* 0: an expression, pulled below */
			columns = bms_add_member(columns, column - FirstLowInvalidHeapAttributeNumber);
	}
	pull_varattnos((Node *) RelationGetIndexExpressions(index), 1, &columns);
	pull_varattnos((Node *) RelationGetIndexPredicate(index), 1, &columns);
	while ((member = bms_next_member(columns, member)) >= 0)
	{
		AttrNumber	column = member + FirstLowInvalidHeapAttributeNumber;
		bool		allowed;

		if (column == InvalidAttrNumber)
			allowed = pg_attribute_aclcheck_all(heapoid, user, ACL_SELECT,
												ACLMASK_ALL) == ACLCHECK_OK;
		else
			allowed = column > 0 &&
				pg_attribute_aclcheck(heapoid, column, user, ACL_SELECT) == ACLCHECK_OK;
		if (!allowed)
			return false;
	}
	return true;
}

/*
 * Refuses what a query of the table would refuse: reading the keys without
 * SELECT on them; and, where row-level security applies to the caller, any
 * answer at all, as the filter holds the keys of every row and a probe, a
 * copy or a count would tell of the hidden ones.
 */
static void
CheckMayReadIndex(Relation index)
{
	Oid			heapoid = index->rd_index->indrelid;
	Oid			user = GetUserId();

	if (pg_class_aclcheck(heapoid, user, ACL_SELECT) != ACLCHECK_OK &&
		!MayReadKeyColumns(index, heapoid, user))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(heapoid)),
				 errdetail("Reading a bloomfilter index needs SELECT on its table or on every column its key reads.")));
	if (check_enable_rls(heapoid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for bloomfilter index \"%s\"",
						RelationGetRelationName(index)),
				 errdetail("Row-level security hides rows of table \"%s\" from the current user, and the index holds the keys of every row.",
						   get_rel_name(heapoid)),
				 errhint("Only roles that row-level security does not restrict (the table's owner, roles with BYPASSRLS) can read the index.")));
}

/*
 * Refuses an index whose filter may lack keys of rows a query sees: one
 * whose concurrent build has not finished, or whose concurrent drop has
 * begun (inserts no longer reach it); one built after the caller's
 * snapshot over broken HOT chains, whose older row versions it skipped
 * (the planner's indcheckxmin rule).  A partitioned index is invalid while
 * a partition lacks its index.  Checked before any page is read: an index
 * not yet built has none.
 */
static void
CheckIndexIsComplete(Relation index)
{
	Form_pg_index form = index->rd_index;

	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read temporary indexes of other sessions")));
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX && !form->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" is not valid", RelationGetRelationName(index)),
				 errdetail("It is a partitioned index, and a partition of its table has no valid index attached to it: that partition's keys are in no filter."),
				 errhint("Create the missing partitions' indexes and attach them with ALTER INDEX %s ATTACH PARTITION.",
						 RelationGetRelationName(index))));
	if (!form->indisvalid || !form->indisready || !form->indislive)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" is not valid", RelationGetRelationName(index)),
				 errdetail("Its concurrent build did not finish, or its concurrent drop began: it may lack keys of rows in the table."),
				 form->indislive ?
				 errhint("Rebuild it with REINDEX INDEX CONCURRENTLY, or drop it.") :
				 errhint("Finish dropping it with DROP INDEX.")));
	if (form->indcheckxmin &&
		!TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
							   TransactionXmin))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" is too new for this transaction",
						RelationGetRelationName(index)),
				 errdetail("It was built after this transaction's snapshot, and may lack keys of row versions that snapshot sees."),
				 errhint("Probe it in a later transaction.")));
	if (index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read unlogged bloomfilter index \"%s\" during recovery",
						RelationGetRelationName(index))));
}

static void
CheckIsBloomfilterIndex(Relation index)
{
	if (index->rd_indam == NULL || index->rd_indam->aminsert != bloomindex_insert)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not a bloomfilter index", RelationGetRelationName(index))));
}

/*
 * Opens one bloomfilter index (not a partitioned one) whose table the
 * caller has locked and may read.
 */
Relation
OpenCheckedIndex(Oid indexoid)
{
	Relation	index = index_open(indexoid, AccessShareLock);

	CheckIsBloomfilterIndex(index);
	CheckIndexIsComplete(index);
	return index;
}

/*
 * An OID of no index: of no relation at all (a regclass given as a number
 * that names nothing, or a relation dropped since), in PostgreSQL's own
 * words for that, or of a relation of another kind.
 */
static void
ReportNotAnIndex(Oid relid)
{
	char	   *name = get_rel_name(relid);

	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("\"%s\" is not an index", name)));
}

/*
 * Opens a bloomfilter index, or a partitioned one, for a caller who may
 * read it.  The table is locked first, as a query locks it, and both locks
 * stay to the end of the transaction: a DROP INDEX or REINDEX INDEX
 * CONCURRENTLY waits for lockers of the table before it stops inserts
 * reaching the index, so it waits for this transaction's probes too.
 */
Relation
OpenIndexForReading(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid))
		ReportNotAnIndex(indexoid);
	LockRelationOid(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_index->indrelid != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index \"%s\" changed while it was opened",
						RelationGetRelationName(index))));
	CheckIsBloomfilterIndex(index);
	CheckMayReadIndex(index);
	CheckIndexIsComplete(index);
	return index;
}

/*
 * Refuses a partitioned index over a foreign partition: a foreign table has
 * no index, so its rows are in no filter, and the partitioned index stays
 * valid all the same.
 */
static void
CheckNoForeignPartition(Relation index, List *tables)
{
	ListCell   *cell;

	foreach(cell, tables)
	{
		if (get_rel_relkind(lfirst_oid(cell)) == RELKIND_FOREIGN_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("bloomfilter index \"%s\" cannot answer for foreign table \"%s\"",
							RelationGetRelationName(index), get_rel_name(lfirst_oid(cell))),
					 errdetail("The foreign table is a partition of the index's table, and its rows are in no index.")));
	}
}

/*
 * The indexes that hold the keys: the index itself, or each partition's
 * index of a partitioned one (at every level).  Of a partitioned index,
 * the partitions are locked first, as a query of the table locks them,
 * then their indexes.
 */
List *
LeafIndexes(Relation index)
{
	List	   *leaves = NIL;
	List	   *tables;
	List	   *all;
	ListCell   *cell;

	if (index->rd_rel->relkind != RELKIND_PARTITIONED_INDEX)
		return list_make1_oid(RelationGetRelid(index));
	tables = find_all_inheritors(index->rd_index->indrelid, AccessShareLock, NULL);
	CheckNoForeignPartition(index, tables);
	all = find_all_inheritors(RelationGetRelid(index), AccessShareLock, NULL);
	foreach(cell, all)
	{
		if (get_rel_relkind(lfirst_oid(cell)) == RELKIND_INDEX)
			leaves = lappend_oid(leaves, lfirst_oid(cell));
	}
	list_free(tables);
	list_free(all);
	return leaves;
}
