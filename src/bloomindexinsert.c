/*-------------------------------------------------------------------------
 *
 * bloomindexinsert.c
 *	  Inserting into a bloomfilter index (aminsert): a key sets bits of one
 *	  block of the last segment, logged by its own generic WAL record; what
 *	  inserts keep in rd_amcache; and the chain's growth by a new segment
 *	  once the last one has taken its capacity.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/rmgr.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "bloomindex.h"

/*
 * The WAL record of an insert: a generic WAL record (RM_GENERIC_ID, replayed
 * by the server's generic_redo) whose fragments are the bytes the insert
 * changed, in the key's 64-byte block and the page's insert counter, each
 * as generic_xlog.c lays fragments out: offset, length, bytes.  A key sets
 * at most k bits of its block, so most of the block is not logged.
 * GenericXLogFinish would find the same changes by comparing the whole 8
 * kB page before and after, which took most of an insert's time.  The
 * first change of a page after a checkpoint carries its full image, as
 * with GenericXLog.
 */
#define FRAGMENT_HEADER (2 * sizeof(OffsetNumber))

/*
 * Appends the fragments that turn before into the page's len bytes at
 * offset: one per run of changed bytes, runs closer than a fragment
 * header merged.
 */
static char *
AppendChangedFragments(char *ptr, Page page, Size offset, const uint8 *before, Size len)
{
	const uint8 *after = (const uint8 *) page + offset;
	Size		i = 0;

	while (i < len)
	{
		Size		end;
		OffsetNumber fragment[2];

		if (after[i] == before[i])
		{
			i++;
			continue;
		}
		end = i + 1;
		for (Size j = end; j < len && j - end < FRAGMENT_HEADER; j++)
		{
			if (after[j] != before[j])
				end = j + 1;
		}
		fragment[0] = (OffsetNumber) (offset + i);
		fragment[1] = (OffsetNumber) (end - i);
		memcpy(ptr, fragment, FRAGMENT_HEADER);
		ptr += FRAGMENT_HEADER;
		memcpy(ptr, after + i, end - i);
		ptr += end - i;
		i = end;
	}
	return ptr;
}

/* Appends one fragment: the page's len bytes at offset, as they are now. */
static char *
AppendFragment(char *ptr, Page page, Size offset, Size len)
{
	OffsetNumber fragment[2];

	fragment[0] = (OffsetNumber) offset;
	fragment[1] = (OffsetNumber) len;
	memcpy(ptr, fragment, FRAGMENT_HEADER);
	ptr += FRAGMENT_HEADER;
	memcpy(ptr, (char *) page + offset, len);
	return ptr + len;
}

/*
 * The insert's one WAL record: the bits and counter it changed in the
 * filter's page, and, where the index keeps a change log, the entry it
 * appended to the log's head page with that page's new pd_lower.  One
 * record, so that the bits and the entry are replayed together.
 */
static XLogRecPtr
LogInsert(Buffer buffer, Page page, uint32 slot, const uint8 *block_before,
		  const BloomIndexOpaque *opaque_before, Buffer logbuf, Size entry_offset)
{
	/* at worst every byte its own fragment */
	char		delta[(FRAGMENT_HEADER + 1) * (BF_BLOCK_BYTES + sizeof(BloomIndexOpaque))];
	char		logdelta[2 * FRAGMENT_HEADER + sizeof(LocationIndex) + sizeof(ChangeLogEntry)];
	char	   *ptr = delta;
	Size		block = (Size) (PageBlocks(page) - (uint8 *) page) + (Size) slot * BF_BLOCK_BYTES;
	Size		opaque = (Size) ((char *) PageOpaque(page) - (char *) page);

	ptr = AppendChangedFragments(ptr, page, block, block_before, BF_BLOCK_BYTES);
	ptr = AppendChangedFragments(ptr, page, opaque, (const uint8 *) opaque_before,
								 sizeof(BloomIndexOpaque));
	XLogBeginInsert();
	XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
	XLogRegisterBufData(0, delta, ptr - delta);
	if (BufferIsValid(logbuf))
	{
		Page		logpage = BufferGetPage(logbuf);

		ptr = AppendFragment(logdelta, logpage, offsetof(PageHeaderData, pd_lower),
							 sizeof(LocationIndex));
		ptr = AppendFragment(ptr, logpage, entry_offset, sizeof(ChangeLogEntry));
		XLogRegisterBuffer(1, logbuf, REGBUF_STANDARD);
		XLogRegisterBufData(1, logdelta, ptr - logdelta);
	}
	return XLogInsert(RM_GENERIC_ID, 0);
}

/*
 * Keys this backend has added to bloomfilter indexes: a copy of an index
 * made before one of them lacks it (see ProbeView).
 */
uint64		own_index_writes;

/* The index's InsertCache (bloomindex.h), set up by its first insert. */
static InsertCache *
GetInsertCache(Relation index)
{
	InsertCache *cache = (InsertCache *) index->rd_amcache;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(index->rd_indexcxt, sizeof(InsertCache));
		IndexKeyType(index, &cache->key, index->rd_indexcxt);
		ReadMeta(index, &cache->layout);
		index->rd_amcache = cache;
	}
	return cache;
}

static const BloomIndexSegment *
LastSegment(const IndexLayout *layout)
{
	return &layout->segments[layout->header.nsegments - 1];
}

/*
 * Whether the last segment may be full: its page's counter says so (the
 * page holds its share of the capacity).  From then on an insert rereads
 * the metapage first, so that a segment another backend added takes this
 * backend's keys at once, and checks whether to grow before it adds
 * (GrowthCheckDue).
 */
#define FULL_CHECK_SAMPLE 32

static bool
SegmentMayBeFull(const InsertCache *cache, const BloomIndexSegment *segment,
				 uint64 page_count)
{
	if (!bf_is_chain(&cache->layout.header) || cache->cannot_grow)
		return false;
	return page_count * SegmentPages(segment) + segment->built >=
		bf_segment_capacity(&cache->layout.header, cache->layout.header.nsegments - 1);
}

/*
 * Whether an insert must check for growth before it adds to a page whose
 * counter is page_count.  Concurrent writers must not overfill a full
 * segment, which would raise the rate of the whole chain: the check comes
 * before the key is added, and a backend that finds another one growing
 * the chain waits for it (GrowIfFull).  A segment of one page knows
 * exactly when it is full; one of up to FULL_CHECK_SAMPLE pages is counted
 * exactly on every insert once a page says it may be full.  A larger one
 * is sampled on every FULL_CHECK_INTERVAL-th key of such a page: the keys
 * that slip in between are a sliver of its capacity.
 */
#define FULL_CHECK_INTERVAL 16

static bool
GrowthCheckDue(const InsertCache *cache, const BloomIndexSegment *segment,
			   uint64 page_count)
{
	if (!SegmentMayBeFull(cache, segment, page_count))
		return false;
	return SegmentPages(segment) <= FULL_CHECK_SAMPLE ||
		(page_count + 1) % FULL_CHECK_INTERVAL == 0;
}

/*
 * Keys a segment has taken, estimated from at most max_sample of its pages
 * spread over it (exact for a smaller segment): keys spread evenly over
 * the pages, so a sample of pages of thousands of keys each puts the total
 * within a percent or so, without reading a segment of thousands of pages
 * on every check.
 */
static uint64
SegmentTakenEstimate(Relation index, const BloomIndexSegment *segment, uint32 max_sample)
{
	uint32		pages = SegmentPages(segment);
	uint32		sample = Min(pages, max_sample);
	uint64		counted = 0;

	for (uint32 i = 0; i < sample; i++)
	{
		BlockNumber page = segment->first_page + (BlockNumber) ((uint64) i * pages / sample);
		Buffer		buffer = ReadBuffer(index, page);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		counted += PageOpaque(BufferGetPage(buffer))->inserted;
		UnlockReleaseBuffer(buffer);
	}
	if (sample == pages)
		return bf_count_add(segment->built, counted);
	return bf_count_add(segment->built, (uint64) ((double) counted / sample * pages));
}

/*
 * Whether the last segment has taken its capacity.  The quick sample may
 * err by a percent or so either way: a segment it calls full is counted
 * again over up to FULL_COUNT_PAGES pages (all of them for a segment of
 * millions of keys), so that a chain does not grow early, which would
 * double its size for the keys it holds.
 */
#define FULL_COUNT_PAGES 1024

static bool
SegmentIsFull(Relation index, const IndexLayout *layout)
{
	uint64		capacity = bf_segment_capacity(&layout->header, layout->header.nsegments - 1);

	return SegmentTakenEstimate(index, LastSegment(layout), FULL_CHECK_SAMPLE) >= capacity &&
		SegmentTakenEstimate(index, LastSegment(layout), FULL_COUNT_PAGES) >= capacity;
}

/* Writes a new segment's pages, then points the metapage at it. */
static void
AppendSegment(Relation index, IndexLayout *layout, const BfSegment *next)
{
	BloomIndexSegment place;
	Buffer		metabuf;
	GenericXLogState *state;
	Page		page;

	/*
	 * Pages of a segment whose metapage update a crash lost stay unused:
	 * the next segment starts after them.
	 */
	memset(&place, 0, sizeof(place));
	place.first_page = RelationGetNumberOfBlocks(index);
	place.nblocks = next->nblocks;
	place.k = next->k;
	WriteSegmentPages(index, MAIN_FORKNUM, &place, NULL);

	metabuf = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	DecodeMeta(index, BufferGetPage(metabuf), layout);
	layout->segments[layout->header.nsegments] = place;
	layout->header.nsegments++;
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, metabuf, 0);
	bf_write_header(PageMeta(page)->header, &layout->header);
	PageMeta(page)->segments[layout->header.nsegments - 1] = place;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Adds a segment if the last one has taken its capacity.  Growers queue on
 * the relation extension lock, a heavyweight lock (only growth extends the
 * index after its build): the one that gets it writes the new segment's
 * pages, which can be thousands, with no buffer lock held, so probes and
 * inserts go on meanwhile and a cancel is answered; the metapage is locked
 * only to publish the segment.  A grower that finds the segment already
 * added only takes the new layout.  Refreshes cache.
 */
static void
GrowIfFull(Relation index, InsertCache *cache)
{
	IndexLayout *layout = &cache->layout;
	uint32		had = layout->header.nsegments;
	BfSegment	next;
	size_t		new_len;

	LockRelationForExtension(index, ExclusiveLock);
	ReadMeta(index, layout);
	if (layout->header.nsegments == had)
	{
		if (bf_chain_next(&layout->header, IndexValueLength(layout), &next, &new_len,
						  &BackendSizingMemo) != BF_OK)
			cache->cannot_grow = true;
		else if (SegmentIsFull(index, layout))
			AppendSegment(index, layout, &next);
	}
	UnlockRelationForExtension(index, ExclusiveLock);
}

/*
 * A composite key's type may gain, lose or change attributes after the
 * build (ALTER TYPE, ALTER TABLE on a row type), which PostgreSQL allows
 * without rebuilding the index, and which changes its values' hashes.
 * Probes refuse an index whose key tag is not its type's
 * (bloomindexfuncs.c); but a key inserted under a new shape, followed by
 * ALTER TYPE back to the build's, would hide that key from probes whose
 * tags agree again.  So the first insert under another shape than the
 * metapage's marks the index as holding mixed shapes, for good: probes
 * refuse it until a REINDEX.  The insert itself goes on, as later ones
 * do: a guard index must not stop writes to its table.
 */
static void
KeepShapesApart(Relation index, InsertCache *cache)
{
	IndexLayout *layout = &cache->layout;
	Buffer		metabuf;

	if (cache->key.identity.tag == layout->header.identity.tag ||
		layout->header.identity.tag == KEY_TAG_MIXED_SHAPES)
		return;
	metabuf = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	DecodeMeta(index, BufferGetPage(metabuf), layout);
	if (cache->key.identity.tag != layout->header.identity.tag &&
		layout->header.identity.tag != KEY_TAG_MIXED_SHAPES)
	{
		GenericXLogState *state = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(state, metabuf, 0);

		layout->header.identity.tag = KEY_TAG_MIXED_SHAPES;
		bf_write_header(PageMeta(page)->header, &layout->header);
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
}

/*
 * The key's hash, under the index's seed and format.  Hashing may look up
 * the catalogs (an encoding conversion, a type's hash function), and an
 * invalidation met there would free rd_amcache under us: the cache is
 * taken out of the relcache entry meanwhile.  It lives in rd_indexcxt,
 * which a reload of an open index keeps.
 */
static uint64
HashForInsert(Relation index, InsertCache *cache, Datum value)
{
	uint64		hash;

	index->rd_amcache = NULL;
	/* the tag of the shape the key is hashed under (KeyHash keeps to it) */
	KeyTypeFollowShape(&cache->key);
	hash = KeyHash(&cache->key, value, cache->layout.header.seed,
				   cache->layout.header.version);
	index->rd_amcache = cache;
	if (cache->key.has_shape)
		KeepShapesApart(index, cache);
	return hash;
}

/* Where a key's bits go: its block of the last segment, its page locked. */
typedef struct InsertTarget
{
	const BloomIndexSegment *segment;
	Buffer		buffer;
	Page		page;
	uint32		slot;
	uint8	   *block;
} InsertTarget;

/*
 * Finds and locks the block the key goes to, growing the index first when
 * its last segment is full; false (nothing locked) when the key needs no
 * room: a chain that may hold it already.
 */
static bool
LockTargetBlock(Relation index, InsertCache *cache, uint64 hash, InsertTarget *target)
{
	bool		growth_checked = false;
	BlockNumber pageno;

	if (cache->near_full)
	{
		uint32		had = cache->layout.header.nsegments;

		ReadMeta(index, &cache->layout);
		cache->near_full = cache->layout.header.nsegments == had;
	}
	for (;;)
	{
		uint32		had = cache->layout.header.nsegments;

		target->segment = LastSegment(&cache->layout);
		if (SegmentsHold(index, &cache->layout, had - 1, hash))
			return false;
		BlockOfHash(target->segment, hash, &pageno, &target->slot);
		target->buffer = ReadBuffer(index, pageno);
		LockBuffer(target->buffer, BUFFER_LOCK_EXCLUSIVE);
		target->page = BufferGetPage(target->buffer);
		target->block = PageBlocks(target->page) + (Size) target->slot * BF_BLOCK_BYTES;
		if (bf_is_chain(&cache->layout.header) &&
			bf_block_test(target->block, hash, target->segment->k))
		{
			UnlockReleaseBuffer(target->buffer);
			return false;
		}
		if (growth_checked ||
			!GrowthCheckDue(cache, target->segment, PageOpaque(target->page)->inserted))
			return true;
		UnlockReleaseBuffer(target->buffer);
		GrowIfFull(index, cache);
		/* a segment that is not full after all takes the key */
		growth_checked = cache->layout.header.nsegments == had;
		cache->near_full = growth_checked && !cache->cannot_grow;
	}
}

/*
 * Sets the key's bits in the locked block and appends its change log
 * entry, in one WAL record, so that no copy can have the one without the
 * other; releases the buffers.  Returns the page's count of keys.
 */
static uint64
SetAndLog(Relation index, InsertCache *cache, uint64 hash, InsertTarget *target)
{
	Page		page = target->page;
	uint8		block_before[BF_BLOCK_BYTES];
	BloomIndexOpaque opaque_before;
	Buffer		logbuf = InvalidBuffer;
	Size		entry_offset = 0;
	uint64		page_count;

	if (cache->layout.log.npages > 0)
		logbuf = LockLogHead(index, &cache->layout);
	memcpy(block_before, target->block, BF_BLOCK_BYTES);
	opaque_before = *PageOpaque(page);
	START_CRIT_SECTION();
	bf_block_add(target->block, hash, target->segment->k);
	page_count = ++PageOpaque(page)->inserted;
	MarkBufferDirty(target->buffer);
	if (BufferIsValid(logbuf))
	{
		LogAppend(BufferGetPage(logbuf), cache->layout.header.nsegments - 1, hash,
				  &entry_offset);
		MarkBufferDirty(logbuf);
	}
	if (RelationNeedsWAL(index))
	{
		/* PageSetLSN evaluates its argument twice before PostgreSQL 16 */
		XLogRecPtr	lsn = LogInsert(target->buffer, page, target->slot, block_before,
									&opaque_before, logbuf, entry_offset);

		PageSetLSN(page, lsn);
		if (BufferIsValid(logbuf))
			PageSetLSN(BufferGetPage(logbuf), lsn);
	}
	END_CRIT_SECTION();
	if (BufferIsValid(logbuf))
		UnlockReleaseBuffer(logbuf);
	UnlockReleaseBuffer(target->buffer);
	return page_count;
}

/*
 * Sets the key's bits in its one block of the last segment.  The buffer
 * lock lasts for the bit update only; no lock is held to the end of the
 * transaction.  In a chain, as in a chained value, a key the chain may
 * hold already takes no room (no change, no WAL, no count): otherwise
 * updates that rewrite old rows would fill the last segment with keys the
 * older ones have.
 */
bool
bloomindex_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
				  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
				  IndexInfo *indexInfo)
{
	InsertCache *cache;
	InsertTarget target;
	uint64		hash;
	uint64		page_count;

	if (isnull[0])
		return false;
	own_index_writes++;
	cache = GetInsertCache(index);
	hash = HashForInsert(index, cache, values[0]);
	if (!LockTargetBlock(index, cache, hash, &target))
		return false;
	page_count = SetAndLog(index, cache, hash, &target);
	if (SegmentMayBeFull(cache, target.segment, page_count))
		cache->near_full = !cache->cannot_grow;
	return false;
}
