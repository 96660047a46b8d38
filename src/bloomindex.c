/*-------------------------------------------------------------------------
 *
 * bloomindex.c
 *	  The bloomfilter index access method's handler (the amroutine), its
 *	  options (defined at module load, parsed and checked as bloom_empty
 *	  checks its arguments), the cost estimate that keeps the planner away
 *	  from it, and validate.  The layout and the other files: bloomindex.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>

#include "access/amapi.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "nodes/pathnodes.h"

#include "bloomindex.h"

static relopt_kind bloom_index_relopt_kind;

/* Where build_reloptions puts each option in BloomIndexOptions. */
static const relopt_parse_elt bloom_index_relopt_tab[] = {
	{"capacity", RELOPT_TYPE_INT, offsetof(BloomIndexOptions, capacity)},
	{"fpr", RELOPT_TYPE_REAL, offsetof(BloomIndexOptions, fpr)},
	{"growth", RELOPT_TYPE_INT, offsetof(BloomIndexOptions, growth)},
	{"changelog", RELOPT_TYPE_INT, offsetof(BloomIndexOptions, changelog)},
};

void
BloomIndexDefineOptions(void)
{
	bloom_index_relopt_kind = add_reloption_kind();
	/* 0, outside the bounds, stands for "not set": sized from the table */
	add_int_reloption(bloom_index_relopt_kind, "capacity",
					  "Keys the filter is sized for (unset: the table's rows at build)",
					  0, 1, INT_MAX, AccessExclusiveLock);
	/* the bounds are bloom_empty's, checked by bloomindex_options */
	add_real_reloption(bloom_index_relopt_kind, "fpr",
					   "Target false-positive rate",
					   BLOOM_DEFAULT_FPR, -DBL_MAX, DBL_MAX, AccessExclusiveLock);
	add_int_reloption(bloom_index_relopt_kind, "growth",
					  "Each new segment is this many times larger (2..16); 0: a filter of fixed size",
					  DEFAULT_INDEX_GROWTH, 0, BF_MAX_GROWTH, AccessExclusiveLock);
	/* takes effect at the next build, as the others */
	add_int_reloption(bloom_index_relopt_kind, "changelog",
					  "Keys the change log keeps for copies that follow the index (0: no log)",
					  DEFAULT_INDEX_CHANGELOG, 0, MAX_INDEX_CHANGELOG, AccessExclusiveLock);
}

/*
 * The options, checked as bloom_empty checks its arguments: the same
 * bounds and messages, and a filter of that size must be possible.
 */
static bytea *
bloomindex_options(Datum reloptions, bool validate)
{
	BloomIndexOptions *options;

	options = (BloomIndexOptions *) build_reloptions(reloptions, validate, bloom_index_relopt_kind,
													 sizeof(BloomIndexOptions),
													 bloom_index_relopt_tab,
													 lengthof(bloom_index_relopt_tab));
	if (validate && options != NULL)
		CheckFilterParameters(options->capacity > 0 ? options->capacity : MIN_AUTO_CAPACITY,
							  options->fpr, options->growth);
	return (bytea *) options;
}

/* Never chosen for a scan: there is no scan to choose. */
static void
bloomindex_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
						Cost *indexStartupCost, Cost *indexTotalCost,
						Selectivity *indexSelectivity, double *indexCorrelation,
						double *indexPages)
{
	*indexStartupCost = 1.0e10;
	*indexTotalCost = 1.0e10;
	*indexSelectivity = 1.0;
	*indexCorrelation = 0.0;
	*indexPages = 1.0;
}

static bool
bloomindex_validate(Oid opclassoid)
{
	return true;
}

PG_FUNCTION_INFO_V1(bloomfilter_index_handler);
/* The access method's handler. */
Datum
bloomfilter_index_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = 0;
	am->amsupport = 0;
	am->amcanorder = false;
	am->amcanorderbyop = false;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = false;
	am->amoptionalkey = true;
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuild = bloomindex_build;
	am->ambuildempty = bloomindex_buildempty;
	am->aminsert = bloomindex_insert;
	am->ambulkdelete = bloomindex_bulkdelete;
	am->amvacuumcleanup = bloomindex_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = bloomindex_costestimate;
	am->amoptions = bloomindex_options;
	am->amproperty = NULL;
	am->ambuildphasename = NULL;
	am->amvalidate = bloomindex_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = NULL;
	am->amrescan = NULL;
	am->amgettuple = NULL;
	am->amgetbitmap = NULL;
	am->amendscan = NULL;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}
