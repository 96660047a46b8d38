/*-------------------------------------------------------------------------
 *
 * bloomindexutils.c
 *	  What the bloomfilter index's phases and SQL functions share: new
 *	  pages and their WAL, a segment's pages written, the metapage read
 *	  and checked, probing segments, the index's key type,
 *	  and the empty filter its options ask for.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/xloginsert.h"
#include "catalog/pg_am.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomindex.h"

/* ---------------------------------------------------------------------
 * Pages
 * ---------------------------------------------------------------------
 */

/* An empty page with the special space, its contents marked in use. */
void
InitIndexPage(Page page, Size contents)
{
	PageInit(page, BLCKSZ, sizeof(BloomIndexOpaque));
	((PageHeader) page)->pd_lower += contents;
}

/* A new page at the end of fork, locked. */
Buffer
NewIndexBuffer(Relation index, ForkNumber fork)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(index), fork, NULL, EB_LOCK_FIRST);
#else
	Buffer		buffer = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	return buffer;
#endif
}

/*
 * GenericXLog logs nothing for an unlogged index, but its init fork must
 * reach the WAL: crash recovery and a promoted standby reset the index
 * from it.
 */
void
LogInitForkPage(Buffer buffer, ForkNumber fork)
{
	if (fork == INIT_FORKNUM)
		log_newpage_buffer(buffer, true);
}

/* A new bit page, WAL-logged whole: blocks from bits, or zeroes. */
static void
WriteBitPage(Relation index, ForkNumber fork, BlockNumber expected, const uint8 *bits,
			 uint32 count)
{
	Buffer		buffer = NewIndexBuffer(index, fork);
	GenericXLogState *state;
	Page		page;

	if (BufferGetBlockNumber(buffer) != expected)
		elog(ERROR, "bloomfilter index page %u was created as block %u",
			 expected, BufferGetBlockNumber(buffer));
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
	InitIndexPage(page, (Size) count * BF_BLOCK_BYTES);
	if (bits != NULL)
		memcpy(PageBlocks(page), bits, (Size) count * BF_BLOCK_BYTES);
	GenericXLogFinish(state);
	LogInitForkPage(buffer, fork);
	UnlockReleaseBuffer(buffer);
}

/* The pages of one segment, from first on; bits NULL for an empty one. */
void
WriteSegmentPages(Relation index, ForkNumber fork, const BloomIndexSegment *segment,
				  const uint8 *bits)
{
	for (uint32 p = 0; p < SegmentPages(segment); p++)
	{
		uint32		first = p * BLOCKS_PER_PAGE;

		CHECK_FOR_INTERRUPTS();
		WriteBitPage(index, fork, segment->first_page + p,
					 bits != NULL ? bits + (Size) first * BF_BLOCK_BYTES : NULL,
					 Min(BLOCKS_PER_PAGE, segment->nblocks - first));
	}
}

static void
ReportCorruptIndex(Relation index, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has a corrupted metapage", RelationGetRelationName(index)),
			 errdetail("%s.", detail)));
}

/*
 * The change log's place, which changes with every full page of it: read
 * on every call, and checked against the segments the layout already has.
 * A version 2 index has none.
 */
static void
DecodeLog(Relation index, const BloomIndexMeta *meta, IndexLayout *layout)
{
	const BloomIndexLog *log = &meta->log;

	memset(&layout->log, 0, sizeof(layout->log));
	if (meta->version == BLOOM_INDEX_VERSION_NO_LOG || log->npages == 0)
		return;
	if (log->head >= log->npages || log->first_page <= BLOOM_INDEX_METAPAGE ||
		log->first_page + log->npages < log->first_page)
		ReportCorruptIndex(index, "The change log's place is out of bounds");
	for (uint32 i = 0; i < layout->header.nsegments; i++)
	{
		const BloomIndexSegment *segment = &layout->segments[i];

		if (log->first_page < segment->first_page + SegmentPages(segment) &&
			segment->first_page < log->first_page + log->npages)
			ReportCorruptIndex(index, "The change log overlaps a segment");
	}
	layout->log = *log;
}

/* The metapage bytes DecodeMeta last found consistent, and their layout. */
static struct
{
	bool		valid;
	uint8		header[BF_HEADER_SIZE];
	IndexLayout layout;
} last_checked;

/*
 * The metapage's header and segments, from a locked metapage; anything
 * inconsistent is corruption.  A chain's segments must have their planned
 * sizes and lie in order within the relation.
 */
void
DecodeMeta(Relation index, Page page, IndexLayout *result)
{
	BloomIndexMeta *meta = PageMeta(page);
	BfStatus	status;
	BlockNumber next_page = BLOOM_INDEX_METAPAGE + 1;
	IndexLayout decoded;
	IndexLayout *layout = &decoded;	/* result only once all of it checks out */

	if (PageIsNew(page) || meta->magic != BLOOM_INDEX_MAGIC ||
		(meta->version != BLOOM_INDEX_VERSION && meta->version != BLOOM_INDEX_VERSION_NO_LOG))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a valid bloomfilter index",
						RelationGetRelationName(index)),
				 errhint("REINDEX it: it may have been built by an earlier development version.")));

	/*
	 * What is checked below depends on these bytes alone, and a point probe
	 * reads them every time: a backend checks the same bytes once.
	 */
	if (last_checked.valid &&
		memcmp(last_checked.header, meta->header, BF_HEADER_SIZE) == 0 &&
		memcmp(last_checked.layout.segments, meta->segments, sizeof(meta->segments)) == 0)
	{
		*result = last_checked.layout;
		DecodeLog(index, meta, result);
		return;
	}
	status = bf_read_header(meta->header, BF_HEADER_SIZE, &layout->header);
	if (status != BF_OK)
		ReportCorruptIndex(index, bf_status_message(status));
	memcpy(layout->segments, meta->segments, sizeof(layout->segments));
	for (uint32 i = 0; i < layout->header.nsegments; i++)
	{
		BloomIndexSegment *segment = &layout->segments[i];
		BfSegment	planned;

		if (bf_is_chain(&layout->header))
			status = bf_segment_plan(&layout->header, i, &planned, &BackendSizingMemo);
		else
		{
			planned.nblocks = layout->header.nblocks;
			planned.k = layout->header.k;
		}
		if (status != BF_OK || planned.nblocks != segment->nblocks ||
			planned.k != segment->k)
			ReportCorruptIndex(index, "A segment's size does not match its capacity and rate");
		if (segment->first_page < next_page)
			ReportCorruptIndex(index, "Segments overlap");
		next_page = segment->first_page + SegmentPages(segment);
	}
	DecodeLog(index, meta, layout);
	*result = decoded;
	memcpy(last_checked.header, meta->header, BF_HEADER_SIZE);
	last_checked.layout = decoded;
	last_checked.valid = true;
}

/* The filter's header and segments, from the metapage. */
void
ReadMeta(Relation index, IndexLayout *layout)
{
	Buffer		buffer = ReadBuffer(index, BLOOM_INDEX_METAPAGE);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	DecodeMeta(index, BufferGetPage(buffer), layout);
	UnlockReleaseBuffer(buffer);
}

/* Bytes of the index as a bloom value (bloom_index_filter). */
size_t
IndexValueLength(const IndexLayout *layout)
{
	size_t		len = BF_HEADER_SIZE;

	if (!bf_is_chain(&layout->header))
		return bf_value_bytes(layout->header.nblocks);
	for (uint32 i = 0; i < layout->header.nsegments; i++)
		len += BF_SEGMENT_HEADER_SIZE + (size_t) layout->segments[i].nblocks * BF_BLOCK_BYTES;
	return len;
}

/*
 * Whether one of the first count segments may hold the hash, asking the
 * newest first: a chain's last segment is its largest and holds most keys.
 */
bool
SegmentsHold(Relation index, const IndexLayout *layout, uint32 count, uint64 hash)
{
	for (int i = (int) count - 1; i >= 0; i--)
	{
		const BloomIndexSegment *segment = &layout->segments[i];
		BlockNumber pageno;
		uint32		slot;
		Buffer		buffer;
		bool		present;

		BlockOfHash(segment, hash, &pageno, &slot);
		buffer = ReadBuffer(index, pageno);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		present = bf_block_test(PageBlocks(BufferGetPage(buffer)) + (Size) slot * BF_BLOCK_BYTES,
								hash, segment->k);
		UnlockReleaseBuffer(buffer);
		if (present)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

/* The extension's schema: that of the access method's handler. */
static Oid
ExtensionNamespace(Relation index)
{
	HeapTuple	tuple = SearchSysCache1(AMOID, ObjectIdGetDatum(index->rd_rel->relam));
	Oid			handler;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for access method %u", index->rd_rel->relam);
	handler = ((Form_pg_am) GETSTRUCT(tuple))->amhandler;
	ReleaseSysCache(tuple);
	return get_func_namespace(handler);
}

/* The key type of the index's column, refused like any filter key. */
KeyType *
IndexKeyType(Relation index, KeyType *key, MemoryContext mcxt)
{
	Form_pg_attribute column = TupleDescAttr(RelationGetDescr(index), 0);

	memset(key, 0, sizeof(*key));
	return KeyTypeForColumn(key, column->atttypid, index->rd_indcollation[0],
							ExtensionNamespace(index), mcxt);
}

/* ---------------------------------------------------------------------
 * The filter the options ask for
 * ---------------------------------------------------------------------
 */

static int
OptionGrowth(Relation index)
{
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;

	return options != NULL ? options->growth : DEFAULT_INDEX_GROWTH;
}

/*
 * Pages of the change log a new index gets: enough that the keys the
 * option asks for are still there when the head page is cleared, as the
 * page before it may have just begun.  None where pages carry no WAL
 * positions (an unlogged or temporary index).
 */
uint32
OptionLogPages(Relation index)
{
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;
	int			keys = options != NULL ? options->changelog : DEFAULT_INDEX_CHANGELOG;

	if (keys == 0 || index->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		return 0;
	return (uint32) ((keys + LOG_ENTRIES_PER_PAGE - 1) / LOG_ENTRIES_PER_PAGE) + 1;
}

double
OptionFpr(Relation index)
{
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;

	return options != NULL ? options->fpr : BLOOM_DEFAULT_FPR;
}

/* The capacity of a new index: its option, or the table's estimated rows. */
static int64
BuildCapacity(Relation heap, Relation index)
{
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;

	if (options != NULL && options->capacity > 0)
		return options->capacity;
	if (heap == NULL)
		return MIN_AUTO_CAPACITY;
	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	return Max((int64) tuples, MIN_AUTO_CAPACITY);
}

/*
 * An empty filter as the options ask, holding the index's key kind: what
 * bloom_empty(capacity, fpr, growth) makes, which the build then fills as
 * bloom_add_all would.
 */
Bloom *
EmptyIndexFilter(Relation heap, Relation index, KeyType *key, BfHeader *header)
{
	int64		capacity = BuildCapacity(heap, index);
	Bloom	   *bloom;

	if (OptionGrowth(index) != 0)
		bloom = BloomAllocChain(capacity, OptionFpr(index), OptionGrowth(index));
	else
	{
		SizeFilter(capacity, OptionFpr(index), header);
		bloom = BloomAlloc(header);
	}
	BloomReadHeader(bloom, header);
	BloomKeyIntoHeader(header, key);
	BloomWriteHeader(bloom, header);
	return bloom;
}
