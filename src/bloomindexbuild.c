/*-------------------------------------------------------------------------
 *
 * bloomindexbuild.c
 *	  Building a bloomfilter index (ambuild): the table's keys hashed into
 *	  a bloom value in memory, in batches, then written out as the index's
 *	  pages (WriteIndex: metapage, segments, change log); and the init fork
 *	  of an unlogged index (ambuildempty).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/tableam.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomindex.h"

/*
 * Writes a new index from a bloom value: the metapage, then each segment's
 * pages in turn, then the change log's (log_pages of them), all WAL-logged
 * whole.
 */
void
WriteIndex(Relation index, ForkNumber fork, Bloom *bloom, uint32 log_pages)
{
	BfHeader	header;
	BfSegment	segment;
	BloomIndexSegment places[BF_MAX_SEGMENTS];
	BlockNumber next_page = BLOOM_INDEX_METAPAGE + 1;
	Buffer		buffer;
	GenericXLogState *state;
	Page		page;

	BloomReadHeader(bloom, &header);
	memset(places, 0, sizeof(places));
	bf_segment_first(BloomData(bloom), &header, &segment);
	do
	{
		BloomIndexSegment *place = &places[segment.index];

		place->first_page = next_page;
		place->nblocks = segment.nblocks;
		place->k = segment.k;
		place->built = segment.inserted;
		next_page += SegmentPages(place);
	} while (bf_segment_next(BloomData(bloom), &header, &segment));

	buffer = NewIndexBuffer(index, fork);
	if (BufferGetBlockNumber(buffer) != BLOOM_INDEX_METAPAGE)
		elog(ERROR, "bloomfilter index metapage was created as block %u",
			 BufferGetBlockNumber(buffer));
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
	InitIndexPage(page, sizeof(BloomIndexMeta));
	PageMeta(page)->magic = BLOOM_INDEX_MAGIC;
	PageMeta(page)->version = BLOOM_INDEX_VERSION;
	bf_write_header(PageMeta(page)->header, &header);
	memcpy(PageMeta(page)->segments, places, sizeof(places));
	PageMeta(page)->log.first_page = next_page;
	PageMeta(page)->log.npages = log_pages;
	GenericXLogFinish(state);
	LogInitForkPage(buffer, fork);
	UnlockReleaseBuffer(buffer);

	bf_segment_first(BloomData(bloom), &header, &segment);
	do
	{
		WriteSegmentPages(index, fork, &places[segment.index],
						  BloomData(bloom) + segment.bits);
	} while (bf_segment_next(BloomData(bloom), &header, &segment));
	if (log_pages > 0)
		WriteChangeLog(index, log_pages);
}

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
