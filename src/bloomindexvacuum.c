/*-------------------------------------------------------------------------
 *
 * bloomindexvacuum.c
 *	  VACUUM of a bloomfilter index (ambulkdelete, amvacuumcleanup): keys
 *	  cannot leave a Bloom filter, so it reports the index's size and
 *	  records in the metapage how many keys belong to rows that are gone,
 *	  which bloom_index_info reads back (ReadDeadKeys).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "bloomindex.h"

/* Keys cannot leave a Bloom filter: vacuum only reports the index's size. */
IndexBulkDeleteResult *
bloomindex_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					  IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
}

/* Keys a segment took since the build: the sum of its pages' counters. */
static uint64
SegmentInsertedSinceBuild(Relation index, const BloomIndexSegment *segment)
{
	uint64		inserted = 0;

	for (uint32 p = 0; p < SegmentPages(segment); p++)
	{
		Buffer		buffer = ReadBuffer(index, segment->first_page + p);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		inserted += PageOpaque(BufferGetPage(buffer))->inserted;
		UnlockReleaseBuffer(buffer);
	}
	return inserted;
}

/* Keys added since the build, over every segment. */
static uint64
InsertedSinceBuild(Relation index, const IndexLayout *layout)
{
	uint64		inserted = 0;

	for (uint32 i = 0; i < layout->header.nsegments; i++)
		inserted = bf_count_add(inserted, SegmentInsertedSinceBuild(index, &layout->segments[i]));
	return inserted;
}

/*
 * Keys cannot leave the filter, so what VACUUM can tell is how many of the
 * keys added belong to rows that are gone: keys added minus the live rows it
 * counted.  The metapage keeps that for bloom_index_info, which is how users
 * learn when a REINDEX would pay.
 */
static void
RecordDeadKeys(Relation index, double live_rows)
{
	IndexLayout layout;
	uint64		added;
	Buffer		buffer;
	GenericXLogState *state;
	Page		page;

	ReadMeta(index, &layout);
	added = bf_count_add(layout.header.inserted, InsertedSinceBuild(index, &layout));
	buffer = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, 0);
	PageMeta(page)->vacuumed = 1;
	PageMeta(page)->dead_at_vacuum = live_rows >= (double) added ? 0 : added - (uint64) live_rows;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buffer);
}

/* What the last VACUUM recorded (RecordDeadKeys). */
void
ReadDeadKeys(Relation index, bool *vacuumed, uint64 *dead)
{
	Buffer		buffer = ReadBuffer(index, BLOOM_INDEX_METAPAGE);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	*vacuumed = PageMeta(BufferGetPage(buffer))->vacuumed != 0;
	*dead = PageMeta(BufferGetPage(buffer))->dead_at_vacuum;
	UnlockReleaseBuffer(buffer);
}

IndexBulkDeleteResult *
bloomindex_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	if (!info->estimated_count)
		RecordDeadKeys(info->index, info->num_heap_tuples);
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->num_index_tuples = info->num_heap_tuples;
	stats->estimated_count = info->estimated_count;
	return stats;
}
