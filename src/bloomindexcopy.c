/*-------------------------------------------------------------------------
 *
 * bloomindexcopy.c
 *	  Copies of a bloomfilter index: the index read into a bloom value
 *	  (bloom_index_filter, bloom_index_info, bloom_index_verify), and the
 *	  copies a backend makes for scans of many probes, each tied to the
 *	  view of the data it was made under and kept to the transaction's end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bloomindex.h"

/*
 * Copies the segment's blocks into bits, and returns the keys its pages
 * took since the build; the two come from the same locked page.
 */
static uint64
CopySegment(Relation index, const BloomIndexSegment *segment, uint8 *bits)
{
	uint64		inserted = 0;

	for (uint32 p = 0; p < SegmentPages(segment); p++)
	{
		uint32		first = p * BLOCKS_PER_PAGE;
		uint32		count = Min(BLOCKS_PER_PAGE, segment->nblocks - first);
		Buffer		buffer = ReadBuffer(index, segment->first_page + p);
		Page		page;

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		memcpy(bits + (Size) first * BF_BLOCK_BYTES, PageBlocks(page),
			   (Size) count * BF_BLOCK_BYTES);
		inserted += PageOpaque(page)->inserted;
		UnlockReleaseBuffer(buffer);
	}
	return inserted;
}

/*
 * The index as a bloom value: the header, then each segment as the format
 * lays it out (a chain's segments through the core's bf_chain_append).
 */
Bloom *
IndexSnapshot(Relation index)
{
	IndexLayout layout;
	BfHeader	header;
	Bloom	   *bloom;
	size_t		len;
	uint64		since_build = 0;

	ReadMeta(index, &layout);
	header = layout.header;
	bloom = palloc_extended(VARHDRSZ + IndexValueLength(&layout), MCXT_ALLOC_HUGE);
	SET_VARSIZE(bloom, VARHDRSZ + IndexValueLength(&layout));
	if (!bf_is_chain(&header))
		since_build = CopySegment(index, &layout.segments[0], bf_bits(BloomData(bloom)));
	else
	{
		header.nsegments = 0;
		len = BF_HEADER_SIZE;
		for (uint32 i = 0; i < layout.header.nsegments; i++)
		{
			BfSegment	segment;
			uint64		taken;

			if (bf_segment_plan(&header, i, &segment, &BackendSizingMemo) != BF_OK)
				elog(ERROR, "bloomfilter index segment %u has no plan", i);
			segment.bits = len + BF_SEGMENT_HEADER_SIZE;
			bf_chain_append(BloomData(bloom), &header, len, &segment, &InterruptibleSlices);
			taken = CopySegment(index, &layout.segments[i], BloomData(bloom) + segment.bits);
			since_build = bf_count_add(since_build, taken);
			segment.inserted = bf_count_add(layout.segments[i].built, taken);
			bf_segment_store_inserted(BloomData(bloom), &segment);
			len = segment.bits + (size_t) segment.nblocks * BF_BLOCK_BYTES;
		}
	}
	header.inserted = bf_count_add(header.inserted, since_build);
	BloomWriteHeader(bloom, &header);
	return bloom;
}

/* A copy of one index (not a partitioned one). */
static Bloom *
LeafSnapshot(Oid leafoid)
{
	Relation	leaf = OpenCheckedIndex(leafoid);
	Bloom	   *bloom = IndexSnapshot(leaf);

	index_close(leaf, NoLock);
	return bloom;
}

/*
 * Partitions' filters unite only where they have the same parameters,
 * which a capacity option on the partitioned index gives them.
 */
static void
CheckPartitionsAlike(Relation parent, Bloom *a, Bloom *b)
{
	BfHeader	ha;
	BfHeader	hb;

	BloomReadHeader(a, &ha);
	BloomReadHeader(b, &hb);
	if (ha.capacity != hb.capacity || ha.fpr != hb.fpr || ha.growth != hb.growth ||
		ha.layout != hb.layout || ha.nblocks != hb.nblocks || ha.k != hb.k)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("the partitions of bloomfilter index \"%s\" have filters of different sizes",
						RelationGetRelationName(parent)),
				 errdetail("One has capacity " UINT64_FORMAT " at rate %g, another capacity " UINT64_FORMAT " at rate %g: their union is not defined.",
						   ha.capacity, ha.fpr, hb.capacity, hb.fpr),
				 errhint("Create the partitioned index with a capacity option, so that every partition's filter has the same size; bloom_index_contains answers for it either way.")));
}

/*
 * The index as a bloom value (bloom_index_filter, bloom_index_snapshot):
 * of a partitioned index, the union of its partitions'.
 */
Bloom *
IndexUnionSnapshot(Relation index)
{
	List	   *leaves = LeafIndexes(index);
	Bloom	   *bloom = NULL;
	ListCell   *cell;

	foreach(cell, leaves)
	{
		Bloom	   *leaf = LeafSnapshot(lfirst_oid(cell));

		if (bloom == NULL)
			bloom = leaf;
		else
		{
			CheckPartitionsAlike(index, bloom, leaf);
			bloom = BloomCombineInto(bloom, leaf, true, false);
			pfree(leaf);
		}
	}
	if (bloom == NULL)
	{
		/* a partitioned index of no partition: an empty filter of its kind */
		KeyType		key;
		BfHeader	header;

		bloom = EmptyIndexFilter(NULL, index, IndexKeyType(index, &key, CurrentMemoryContext),
								 &header);
	}
	return bloom;
}

/*
 * A scan that probes many rows reads an index into memory once, as a probe
 * of a stored bloom value detoasts it once: after as many probes as the
 * index has pages, a copy costs less than going on through the buffer
 * manager.  A copy answers only under the view of the data it was made
 * under, which must see no key the copy lacks:
 *
 * - the same snapshot contents: xmin, xmax and the lists of transactions
 *   in progress.  Two snapshots that agree on them see the same committed
 *   transactions, whichever commits happened in between; a commit that
 *   moves neither bound still leaves the list.  (A copied snapshot's count
 *   of completed transactions is zero, so that count tells nothing.)
 * - the same command, and no key added by this backend since: a
 *   statement's own inserts reach the index's pages, so the copy must see
 *   them too (INSERT ... RETURNING a probe).
 * - the same user: a copy made after one user's checks never answers
 *   another (a SECURITY DEFINER function's probes).
 *
 * Views are numbered, and copies keep the number.  Copies live
 * to the end of the transaction: one per index, whichever call site made
 * it, and none larger than work_mem (beyond it probes read the pages).
 */
typedef struct ProbeView
{
	uint64		id;				/* 0: none */
	Oid			user;
	uint64		own_writes;
	CommandId	curcid;
	TransactionId xmin;
	TransactionId xmax;
	bool		suboverflowed;
	bool		taken_during_recovery;
	uint32		xcnt;
	int32		subxcnt;
	TransactionId *xip;
	TransactionId *subxip;
} ProbeView;

static ProbeView current_view;
static uint64 last_view_id;

static MemoryContext copies_context;
static IndexCopy *copies;

/* Transactions this backend has ended: a call site's checks last one. */
uint64		ended_transactions;

/*
 * Whether the snapshot has its subtransactions' list: a copied snapshot
 * drops an overflowed one, which visibility then does not consult.
 */
static bool
SubxipKept(Snapshot snapshot)
{
	return snapshot->subxcnt > 0 &&
		(!snapshot->suboverflowed || snapshot->takenDuringRecovery);
}

static bool
SnapshotIsView(Snapshot snapshot, const ProbeView *view)
{
	return view->id != 0 &&
		view->user == GetUserId() &&
		view->own_writes == own_index_writes &&
		view->curcid == snapshot->curcid &&
		view->xmin == snapshot->xmin &&
		view->xmax == snapshot->xmax &&
		view->suboverflowed == snapshot->suboverflowed &&
		view->taken_during_recovery == snapshot->takenDuringRecovery &&
		view->xcnt == snapshot->xcnt &&
		view->subxcnt == snapshot->subxcnt &&
		(snapshot->xcnt == 0 ||
		 memcmp(view->xip, snapshot->xip, sizeof(TransactionId) * snapshot->xcnt) == 0) &&
		(!SubxipKept(snapshot) ||
		 memcmp(view->subxip, snapshot->subxip, sizeof(TransactionId) * snapshot->subxcnt) == 0);
}

/* At the end of a transaction its copies and views are gone. */
static void
ForgetCopies(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			if (copies_context != NULL)
				MemoryContextReset(copies_context);
			copies = NULL;
			current_view.id = 0;
			ended_transactions++;
			break;
		default:
			break;
	}
}

/*
 * The number of the view the active snapshot gives, or 0 where there is
 * none to tie a copy to (no active MVCC snapshot).
 */
uint64
CurrentViewId(void)
{
	Snapshot	snapshot;

	if (!ActiveSnapshotSet())
		return 0;
	snapshot = GetActiveSnapshot();
	if (snapshot->snapshot_type != SNAPSHOT_MVCC)
		return 0;
	if (SnapshotIsView(snapshot, &current_view))
		return current_view.id;

	if (copies_context == NULL)
	{
		if (current_view.xip == NULL)
			current_view.xip = MemoryContextAlloc(TopMemoryContext,
												  sizeof(TransactionId) * GetMaxSnapshotXidCount());
		if (current_view.subxip == NULL)
			current_view.subxip = MemoryContextAlloc(TopMemoryContext,
													 sizeof(TransactionId) * GetMaxSnapshotSubxidCount());
		RegisterXactCallback(ForgetCopies, NULL);
		copies_context = AllocSetContextCreate(TopMemoryContext,
											   "bloomfilter index copies",
											   ALLOCSET_DEFAULT_SIZES);
	}
	current_view.id = 0;		/* not a view until all of it is copied */
	current_view.user = GetUserId();
	current_view.own_writes = own_index_writes;
	current_view.curcid = snapshot->curcid;
	current_view.xmin = snapshot->xmin;
	current_view.xmax = snapshot->xmax;
	current_view.suboverflowed = snapshot->suboverflowed;
	current_view.taken_during_recovery = snapshot->takenDuringRecovery;
	current_view.xcnt = snapshot->xcnt;
	current_view.subxcnt = snapshot->subxcnt;
	if (snapshot->xcnt > 0)
		memcpy(current_view.xip, snapshot->xip, sizeof(TransactionId) * snapshot->xcnt);
	if (SubxipKept(snapshot))
		memcpy(current_view.subxip, snapshot->subxip,
			   sizeof(TransactionId) * snapshot->subxcnt);
	current_view.id = ++last_view_id;
	return current_view.id;
}

/* The backend's copy of an index under view, made new when it is older. */
IndexCopy *
CopyUnderView(Oid indexoid, uint64 view)
{
	IndexCopy  *copy;

	if (view == 0)
		return NULL;
	for (copy = copies; copy != NULL; copy = copy->next)
		if (copy->indexoid == indexoid)
			break;
	if (copy == NULL)
	{
		copy = MemoryContextAllocZero(copies_context, sizeof(IndexCopy));
		copy->indexoid = indexoid;
		copy->next = copies;
		copies = copy;
	}
	if (copy->view != view)
	{
		if (copy->bloom != NULL)
			pfree(copy->bloom);
		copy->bloom = NULL;
		copy->probes = 0;
		copy->view = view;
	}
	return copy;
}

/* Bit pages of every segment: how many probes a copy is worth. */
static uint32
IndexBitPages(const IndexLayout *layout)
{
	uint32		pages = 0;

	for (uint32 i = 0; i < layout->header.nsegments; i++)
		pages += SegmentPages(&layout->segments[i]);
	return pages;
}

/* Copies the index once the probes under the copy's view pay for it. */
void
CopyIfWorthIt(IndexCopy *copy, Relation index, const IndexLayout *layout)
{
	MemoryContext old;

	if (copy == NULL || ++copy->probes <= IndexBitPages(layout) + 1 ||
		IndexValueLength(layout) > (Size) work_mem * 1024)
		return;
	old = MemoryContextSwitchTo(copies_context);
	copy->bloom = IndexSnapshot(index);
	MemoryContextSwitchTo(old);
	BloomReadHeader(copy->bloom, &copy->header);
}
