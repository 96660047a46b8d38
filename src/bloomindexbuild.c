/*-------------------------------------------------------------------------
 *
 * bloomindexbuild.c
 *	  Building a bloomfilter index (ambuild): the table's keys hashed into
 *	  a bloom value in memory, in batches, then written out as the index's
 *	  pages; and the init fork of an unlogged index (ambuildempty).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomindex.h"

typedef struct BuildState
{
	KeyType    *key;
	Bloom	   *bloom;
	BfHeader	header;
	uint64		pending[256];	/* hashes not yet added: added in batches */
	int			npending;
	uint64		added;
} BuildState;

static void
AddPending(BuildState *state)
{
	BloomAddHashes(&state->bloom, &state->header, state->pending, state->npending);
	state->npending = 0;
}

/*
 * Refuses a build during which the composite key's type changed shape:
 * ALTER TYPE takes no lock on the tables that use the type, so it can
 * commit while the build runs, and keys hashed under two shapes under the
 * build's one tag would be missed by probes (see KeepShapesApart in
 * bloomindexinsert.c).  Called before a hash where a change may have been
 * taken in since the last; KeyHash refuses one taken in while hashing.
 */
static void
CheckShapeKept(Relation index, KeyType *key)
{
	uint32		built = key->identity.tag;

	KeyTypeFollowShape(key);
	if (key->identity.tag != built)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the key type of bloomfilter index \"%s\" was altered during its build",
						RelationGetRelationName(index)),
				 errdetail("Its values hash differently under the new definition."),
				 errhint("Build the index again.")));
}

static void
BuildCallback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *state_ptr)
{
	BuildState *state = (BuildState *) state_ptr;

	if (isnull[0])
		return;
	if (!KeyTypeIsCurrent(state->key))
		CheckShapeKept(index, state->key);
	state->pending[state->npending++] =
		KeyHash(state->key, values[0], state->header.seed, state->header.version);
	if (state->npending == lengthof(state->pending))
		AddPending(state);
	state->added++;
}

IndexBuildResult *
bloomindex_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	BuildState	state;
	KeyType		key;
	IndexBuildResult *result;
	double		reltuples;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));

	state.key = IndexKeyType(index, &key, CurrentMemoryContext);
	state.bloom = EmptyIndexFilter(heap, index, state.key, &state.header);
	state.npending = 0;
	state.added = 0;

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   BuildCallback, &state, NULL);
	AddPending(&state);
	WriteIndex(index, MAIN_FORKNUM, state.bloom, OptionLogPages(index));
	pfree(state.bloom);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = (double) state.added;
	return result;
}

/* The init fork of an unlogged index: an empty filter of its options' size. */
void
bloomindex_buildempty(Relation index)
{
	BfHeader	header;
	KeyType		key;

	WriteIndex(index, INIT_FORKNUM,
			   EmptyIndexFilter(NULL, index, IndexKeyType(index, &key, CurrentMemoryContext),
								&header), 0);
}
