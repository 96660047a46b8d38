/*-------------------------------------------------------------------------
 *
 * bloomindex.c
 *	  The bloomfilter index access method: a Bloom filter of one key column
 *	  that PostgreSQL keeps current on every insert, WAL-logged (generic
 *	  WAL), and the SQL functions that probe, snapshot and describe it.
 *
 * The index is a bloom value cut into pages: page 0 is the metapage (the
 * value's header, as bloom.h writes it, and where each segment's pages
 * start), and each segment's 64-byte blocks fill the pages after it,
 * BLOCKS_PER_PAGE to a page.  By default the value is a chain (the option
 * growth, 2): when its last segment has taken its capacity, an insert
 * appends a segment growth times larger at half the rate (GrowIfFull), so
 * the index keeps its target rate however much the table grows.  With
 * growth = 0 it is one fixed-size filter, which overfills as a stored one
 * does.
 *
 * A key's hash picks one block of the last segment (bf_block_of), so an
 * insert locks and logs one page, and writers of other pages never wait on
 * it (it also reads its block of each older segment, as a key the chain
 * holds already takes no room); its WAL record is that block and the
 * page's insert counter (LogInsert).  Probes test every segment.  The snapshot (bloom_index_filter)
 * lays the segments out as the value they are: the same bits, so the same
 * answers.
 *
 * The planner never uses the index for scans: it has no scan functions, so
 * no path can be built on it.  Probes go through bloom_index_contains.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "access/reloptions.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "commands/vacuum.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "storage/sinval.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_inherits.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "pgstat.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rls.h"

#include "bloomvalue.h"
#include "keykind.h"

#define BLOOM_INDEX_MAGIC		0x424C4958	/* "BLIX" */
#define BLOOM_INDEX_VERSION		2
#define BLOOM_INDEX_METAPAGE	0

/* Where a segment's blocks are, and what the build put in it. */
typedef struct BloomIndexSegment
{
	BlockNumber first_page;
	uint32		nblocks;
	uint8		k;
	uint8		unused[7];
	uint64		built;			/* values the build put in this segment */
} BloomIndexSegment;

/* What the metapage holds after its page header. */
typedef struct BloomIndexMeta
{
	uint32		magic;
	uint32		version;
	uint8		header[BF_HEADER_SIZE]; /* inserted = keys added by the build */
	uint32		vacuumed;		/* a VACUUM has counted the live rows since */
	uint32		unused;
	uint64		dead_at_vacuum; /* keys added minus live rows, at that VACUUM */
	BloomIndexSegment segments[BF_MAX_SEGMENTS];	/* header's nsegments */
} BloomIndexMeta;

/* The metapage as read: the value's header and its segments' places. */
typedef struct IndexLayout
{
	BfHeader	header;
	BloomIndexSegment segments[BF_MAX_SEGMENTS];
} IndexLayout;

/* The special space of every page: keys added there since the build. */
typedef struct BloomIndexOpaque
{
	uint64		inserted;
} BloomIndexOpaque;

#define BLOCKS_PER_PAGE \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(BloomIndexOpaque))) / BF_BLOCK_BYTES)

/* Options: WITH (capacity = ..., fpr = ..., growth = ...). */
typedef struct BloomIndexOptions
{
	int32		vl_len_;
	int			capacity;		/* 0: from the table's size */
	double		fpr;
	int			growth;			/* 0: one segment of fixed size */
} BloomIndexOptions;

#define DEFAULT_INDEX_GROWTH 2

static relopt_kind bloom_index_relopt_kind;
static relopt_parse_elt bloom_index_relopt_tab[3];

/*
 * The smallest capacity a build from the table's size picks.  A chain that
 * grows by doubling holds up to twice its keys' worth of segments, each at
 * a tighter rate; an index started small on an empty table would end some
 * two times larger (and slower to insert into, with more segments to ask)
 * than one built after the load.  Starting at a million keys, an index on
 * a new table that fills to that takes one segment.  The price is the
 * floor's size for an index of a small table, which a capacity option
 * avoids.
 */
#define MIN_AUTO_CAPACITY 1000000

void		BloomIndexDefineOptions(void);

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
	bloom_index_relopt_tab[0].optname = "capacity";
	bloom_index_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	bloom_index_relopt_tab[0].offset = offsetof(BloomIndexOptions, capacity);
	add_int_reloption(bloom_index_relopt_kind, "growth",
					  "Each new segment is this many times larger (2..16); 0: a filter of fixed size",
					  DEFAULT_INDEX_GROWTH, 0, BF_MAX_GROWTH, AccessExclusiveLock);
	bloom_index_relopt_tab[1].optname = "fpr";
	bloom_index_relopt_tab[1].opttype = RELOPT_TYPE_REAL;
	bloom_index_relopt_tab[1].offset = offsetof(BloomIndexOptions, fpr);
	bloom_index_relopt_tab[2].optname = "growth";
	bloom_index_relopt_tab[2].opttype = RELOPT_TYPE_INT;
	bloom_index_relopt_tab[2].offset = offsetof(BloomIndexOptions, growth);
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

/* ---------------------------------------------------------------------
 * Pages
 * ---------------------------------------------------------------------
 */

static BloomIndexMeta *
PageMeta(Page page)
{
	return (BloomIndexMeta *) PageGetContents(page);
}

static uint8 *
PageBlocks(Page page)
{
	return (uint8 *) PageGetContents(page);
}

static BloomIndexOpaque *
PageOpaque(Page page)
{
	return (BloomIndexOpaque *) PageGetSpecialPointer(page);
}

/* An empty page with the special space, its contents marked in use. */
static void
InitPage(Page page, Size contents)
{
	PageInit(page, BLCKSZ, sizeof(BloomIndexOpaque));
	((PageHeader) page)->pd_lower += contents;
}

/* A new page at the end of fork, locked. */
static Buffer
NewBuffer(Relation index, ForkNumber fork)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(index), fork, NULL, EB_LOCK_FIRST);
#else
	Buffer		buffer = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	return buffer;
#endif
}

static uint32
SegmentPages(const BloomIndexSegment *segment)
{
	return (segment->nblocks + BLOCKS_PER_PAGE - 1) / BLOCKS_PER_PAGE;
}

/*
 * GenericXLog logs nothing for an unlogged index, but its init fork must
 * reach the WAL: crash recovery and a promoted standby reset the index
 * from it.
 */
static void
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
	Buffer		buffer = NewBuffer(index, fork);
	GenericXLogState *state;
	Page		page;

	if (BufferGetBlockNumber(buffer) != expected)
		elog(ERROR, "bloomfilter index page %u was created as block %u",
			 expected, BufferGetBlockNumber(buffer));
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
	InitPage(page, (Size) count * BF_BLOCK_BYTES);
	if (bits != NULL)
		memcpy(PageBlocks(page), bits, (Size) count * BF_BLOCK_BYTES);
	GenericXLogFinish(state);
	LogInitForkPage(buffer, fork);
	UnlockReleaseBuffer(buffer);
}

/* The pages of one segment, from first on; bits NULL for an empty one. */
static void
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

/*
 * Writes a new index from a bloom value: the metapage, then each segment's
 * pages in turn, all WAL-logged whole.
 */
static void
WriteIndex(Relation index, ForkNumber fork, Bloom *bloom)
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

	buffer = NewBuffer(index, fork);
	if (BufferGetBlockNumber(buffer) != BLOOM_INDEX_METAPAGE)
		elog(ERROR, "bloomfilter index metapage was created as block %u",
			 BufferGetBlockNumber(buffer));
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
	InitPage(page, sizeof(BloomIndexMeta));
	PageMeta(page)->magic = BLOOM_INDEX_MAGIC;
	PageMeta(page)->version = BLOOM_INDEX_VERSION;
	bf_write_header(PageMeta(page)->header, &header);
	memcpy(PageMeta(page)->segments, places, sizeof(places));
	GenericXLogFinish(state);
	LogInitForkPage(buffer, fork);
	UnlockReleaseBuffer(buffer);

	bf_segment_first(BloomData(bloom), &header, &segment);
	do
	{
		WriteSegmentPages(index, fork, &places[segment.index],
						  BloomData(bloom) + segment.bits);
	} while (bf_segment_next(BloomData(bloom), &header, &segment));
}

static void
ReportCorruptIndex(Relation index, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" has a corrupted metapage", RelationGetRelationName(index)),
			 errdetail("%s.", detail)));
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
static void
DecodeMeta(Relation index, Page page, IndexLayout *result)
{
	BloomIndexMeta *meta = PageMeta(page);
	BfStatus	status;
	BlockNumber next_page = BLOOM_INDEX_METAPAGE + 1;
	IndexLayout decoded;
	IndexLayout *layout = &decoded;	/* result only once all of it checks out */

	if (PageIsNew(page) || meta->magic != BLOOM_INDEX_MAGIC ||
		meta->version != BLOOM_INDEX_VERSION)
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
			status = bf_segment_plan(&layout->header, i, &planned);
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
	*result = decoded;
	memcpy(last_checked.header, meta->header, BF_HEADER_SIZE);
	last_checked.layout = decoded;
	last_checked.valid = true;
}

/* The filter's header and segments, from the metapage. */
static void
ReadMeta(Relation index, IndexLayout *layout)
{
	Buffer		buffer = ReadBuffer(index, BLOOM_INDEX_METAPAGE);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	DecodeMeta(index, BufferGetPage(buffer), layout);
	UnlockReleaseBuffer(buffer);
}

static const BloomIndexSegment *
LastSegment(const IndexLayout *layout)
{
	return &layout->segments[layout->header.nsegments - 1];
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

/* Bytes of the index as a bloom value (bloom_index_filter). */
static size_t
IndexValueLength(const IndexLayout *layout)
{
	size_t		len = BF_HEADER_SIZE;

	if (!bf_is_chain(&layout->header))
		return bf_value_bytes(layout->header.nblocks);
	for (uint32 i = 0; i < layout->header.nsegments; i++)
		len += BF_SEGMENT_HEADER_SIZE + (size_t) layout->segments[i].nblocks * BF_BLOCK_BYTES;
	return len;
}

/* What the last VACUUM recorded (RecordDeadKeys). */
static void
ReadDeadKeys(Relation index, bool *vacuumed, uint64 *dead)
{
	Buffer		buffer = ReadBuffer(index, BLOOM_INDEX_METAPAGE);

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	*vacuumed = PageMeta(BufferGetPage(buffer))->vacuumed != 0;
	*dead = PageMeta(BufferGetPage(buffer))->dead_at_vacuum;
	UnlockReleaseBuffer(buffer);
}

/* Which page, and which block of it, a hash falls in within a segment. */
static void
BlockOfHash(const BloomIndexSegment *segment, uint64 hash, BlockNumber *page, uint32 *slot)
{
	uint32		block = bf_block_of(hash, segment->nblocks);

	*page = segment->first_page + block / BLOCKS_PER_PAGE;
	*slot = block % BLOCKS_PER_PAGE;
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
static KeyType *
IndexKeyType(Relation index, KeyType *key, MemoryContext mcxt)
{
	Form_pg_attribute column = TupleDescAttr(RelationGetDescr(index), 0);

	memset(key, 0, sizeof(*key));
	return KeyTypeForColumn(key, column->atttypid, index->rd_indcollation[0],
							ExtensionNamespace(index), mcxt);
}

/* ---------------------------------------------------------------------
 * Build, insert, vacuum
 * ---------------------------------------------------------------------
 */

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

static void
BuildCallback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *state_ptr)
{
	BuildState *state = (BuildState *) state_ptr;

	if (isnull[0])
		return;
	state->pending[state->npending++] =
		KeyHash(state->key, values[0], state->header.seed, state->header.version);
	if (state->npending == lengthof(state->pending))
		AddPending(state);
	state->added++;
}

static int
OptionGrowth(Relation index)
{
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;

	return options != NULL ? options->growth : DEFAULT_INDEX_GROWTH;
}

static double
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
static Bloom *
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
	KeyKindIntoHeader(header, key);
	BloomWriteHeader(bloom, header);
	return bloom;
}

static IndexBuildResult *
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
	WriteIndex(index, MAIN_FORKNUM, state.bloom);
	pfree(state.bloom);

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = (double) state.added;
	return result;
}

/* The init fork of an unlogged index: an empty filter of its options' size. */
static void
bloomindex_buildempty(Relation index)
{
	BfHeader	header;
	KeyType		key;

	WriteIndex(index, INIT_FORKNUM,
			   EmptyIndexFilter(NULL, index, IndexKeyType(index, &key, CurrentMemoryContext),
								&header));
}

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

static XLogRecPtr
LogInsert(Buffer buffer, Page page, uint32 slot, const uint8 *block_before,
		  const BloomIndexOpaque *opaque_before)
{
	/* at worst every byte its own fragment */
	char		delta[(FRAGMENT_HEADER + 1) * (BF_BLOCK_BYTES + sizeof(BloomIndexOpaque))];
	char	   *ptr = delta;
	Size		block = (Size) (PageBlocks(page) - (uint8 *) page) + (Size) slot * BF_BLOCK_BYTES;
	Size		opaque = (Size) ((char *) PageOpaque(page) - (char *) page);

	ptr = AppendChangedFragments(ptr, page, block, block_before, BF_BLOCK_BYTES);
	ptr = AppendChangedFragments(ptr, page, opaque, (const uint8 *) opaque_before,
								 sizeof(BloomIndexOpaque));
	XLogBeginInsert();
	XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
	XLogRegisterBufData(0, delta, ptr - delta);
	return XLogInsert(RM_GENERIC_ID, 0);
}

/*
 * Keys this backend has added to bloomfilter indexes: a copy of an index
 * made before one of them lacks it (see ProbeView).
 */
static uint64 own_index_writes;

/*
 * What inserts keep in the index's relcache entry (rd_amcache): the key
 * type and the metapage.  Setting them up takes catalog lookups and a
 * metapage read, several times the cost of the insert itself, and single-
 * row INSERTs would pay it per row; the relcache entry lasts until the
 * index changes (REINDEX, ALTER INDEX), which resets rd_amcache.  A new
 * segment does not reset it: an insert that finds its cached last segment
 * full rereads the metapage (GrowIfFull), and until then keys going to an
 * older segment are still found, as probes test every segment.
 */
typedef struct InsertCache
{
	KeyType		key;
	IndexLayout layout;
	bool		cannot_grow;	/* the chain is as long as it can be */
	bool		near_full;		/* a page of the last segment held its share */
} InsertCache;

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
		if (bf_chain_next(&layout->header, IndexValueLength(layout), &next, &new_len) != BF_OK)
			cache->cannot_grow = true;
		else if (SegmentIsFull(index, layout))
			AppendSegment(index, layout, &next);
	}
	UnlockRelationForExtension(index, ExclusiveLock);
}

/*
 * Whether one of the first count segments may hold the hash, asking the
 * newest first: a chain's last segment is its largest and holds most keys.
 */
static bool
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

/*
 * Sets the key's bits in its one block of the last segment.  The buffer
 * lock lasts for the bit update only; no lock is held to the end of the
 * transaction.  In a chain, as in a chained value, a key the chain may
 * hold already takes no room (no change, no WAL, no count): otherwise
 * updates that rewrite old rows would fill the last segment with keys the
 * older ones have.
 */
static bool
bloomindex_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
				  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
				  IndexInfo *indexInfo)
{
	InsertCache *cache;
	const BloomIndexSegment *segment;
	BlockNumber pageno;
	uint32		slot;
	uint64		hash;
	uint64		page_count;
	Buffer		buffer;
	Page		page;
	uint8	   *block;
	uint8		block_before[BF_BLOCK_BYTES];
	BloomIndexOpaque opaque_before;
	bool		growth_checked = false;

	if (isnull[0])
		return false;
	own_index_writes++;

	/*
	 * Hashing may look up the catalogs (an encoding conversion, a type's
	 * hash function), and an invalidation met there would free rd_amcache
	 * under us: the cache is taken out of the relcache entry meanwhile.  It
	 * lives in rd_indexcxt, which a reload of an open index keeps.
	 */
	cache = GetInsertCache(index);
	index->rd_amcache = NULL;
	hash = KeyHash(&cache->key, values[0], cache->layout.header.seed,
				   cache->layout.header.version);
	index->rd_amcache = cache;
	if (cache->near_full)
	{
		uint32		had = cache->layout.header.nsegments;

		ReadMeta(index, &cache->layout);
		cache->near_full = cache->layout.header.nsegments == had;
	}

	for (;;)
	{
		uint32		had = cache->layout.header.nsegments;

		segment = LastSegment(&cache->layout);
		if (SegmentsHold(index, &cache->layout, had - 1, hash))
			return false;
		BlockOfHash(segment, hash, &pageno, &slot);
		buffer = ReadBuffer(index, pageno);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buffer);
		block = PageBlocks(page) + (Size) slot * BF_BLOCK_BYTES;
		if (bf_is_chain(&cache->layout.header) && bf_block_test(block, hash, segment->k))
		{
			UnlockReleaseBuffer(buffer);
			return false;
		}
		if (growth_checked || !GrowthCheckDue(cache, segment, PageOpaque(page)->inserted))
			break;
		UnlockReleaseBuffer(buffer);
		GrowIfFull(index, cache);
		/* a segment that is not full after all takes the key */
		growth_checked = cache->layout.header.nsegments == had;
		cache->near_full = growth_checked && !cache->cannot_grow;
	}

	memcpy(block_before, block, BF_BLOCK_BYTES);
	opaque_before = *PageOpaque(page);
	START_CRIT_SECTION();
	bf_block_add(block, hash, segment->k);
	page_count = ++PageOpaque(page)->inserted;
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(index))
	{
		/* PageSetLSN evaluates its argument twice before PostgreSQL 16 */
		XLogRecPtr	lsn = LogInsert(buffer, page, slot, block_before, &opaque_before);

		PageSetLSN(page, lsn);
	}
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);

	if (SegmentMayBeFull(cache, segment, page_count))
		cache->near_full = !cache->cannot_grow;
	return false;
}

/* Keys cannot leave a Bloom filter: vacuum only reports the index's size. */
static IndexBulkDeleteResult *
bloomindex_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					  IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
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

static IndexBulkDeleteResult *
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
/* ---------------------------------------------------------------------
 * SQL functions: who may read an index, and which indexes answer
 * ---------------------------------------------------------------------
 */

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
static Relation
OpenCheckedIndex(Oid indexoid)
{
	Relation	index = index_open(indexoid, AccessShareLock);

	CheckIsBloomfilterIndex(index);
	CheckIndexIsComplete(index);
	return index;
}

/*
 * Opens a bloomfilter index, or a partitioned one, for a caller who may
 * read it.  The table is locked first, as a query locks it, and both locks
 * stay to the end of the transaction: a DROP INDEX or REINDEX INDEX
 * CONCURRENTLY waits for lockers of the table before it stops inserts
 * reaching the index, so it waits for this transaction's probes too.
 */
static Relation
OpenIndexForReading(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index",
						get_rel_name(indexoid) ? get_rel_name(indexoid) : "?")));
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
static List *
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

/* ---------------------------------------------------------------------
 * SQL functions: copies of an index, tied to a view of the data
 * ---------------------------------------------------------------------
 */

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
static Bloom *
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

			if (bf_segment_plan(&header, i, &segment) != BF_OK)
				elog(ERROR, "bloomfilter index segment %u has no plan", i);
			segment.bits = len + BF_SEGMENT_HEADER_SIZE;
			bf_chain_append(BloomData(bloom), &header, len, &segment);
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

typedef struct IndexCopy
{
	Oid			indexoid;
	uint64		view;
	uint64		probes;			/* under view, through the pages */
	Bloom	   *bloom;			/* NULL until the probes pay for it */
	BfHeader	header;
	struct IndexCopy *next;
} IndexCopy;

static MemoryContext copies_context;
static IndexCopy *copies;

/* Transactions this backend has ended: a call site's checks last one. */
static uint64 ended_transactions;

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
static uint64
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
static IndexCopy *
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

/* Copies the index once the probes under the copy's view pay for it. */
static void
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

/* ---------------------------------------------------------------------
 * SQL functions: probes
 * ---------------------------------------------------------------------
 */

/*
 * How a probe's argument becomes a key of the index's column, as
 * "column = argument" would compare them: as it is where its kind is the
 * column's (an int4 against a bigint index); through an implicit cast
 * (numeric to float8); a string through the column type's input function,
 * as a quoted literal is read ('{"a":1}' against a jsonb index).  Where
 * none applies the argument is hashed as it is, and the kind check
 * refuses it.
 */
typedef enum ArgConversion
{
	ARG_AS_IS,
	ARG_CAST,					/* cast function */
	ARG_RELABEL,				/* binary-compatible: the column's hashing */
	ARG_VIA_TEXT				/* the argument's output, the column's input */
} ArgConversion;

/* What a call site of bloom_index_contains keeps. */
typedef struct ProbeSite
{
	Oid			indexoid;
	bool		checked;		/* the checks and leaves below hold ... */
	Oid			user;			/* ... for this user, */
	uint64		transaction;	/* in this transaction (ended_transactions), */
	CommandId	command;		/* this command of it, */
	uint64		invalidations;	/* and with no catalog change since */
	List	   *leaves;			/* in fn_mcxt */
	PgStat_TableStatus **leaf_stats;	/* each leaf's pending statistics */
	KeyType		arg;			/* the argument's type */
	KeyType		column;			/* the index key's type */
	ArgConversion conversion;
	FmgrInfo	cast;
	int			cast_nargs;
	FmgrInfo	output;
	FmgrInfo	input;
	Oid			input_ioparam;
} ProbeSite;

/* Sets up how the site's argument becomes a key of the index's column. */
static void
PlanArgConversion(ProbeSite *site, FunctionCallInfo fcinfo, Relation index)
{
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	Oid			argtype = site->arg.basetype;
	Oid			coltype;
	Oid			funcid;
	char		category;
	bool		preferred;

	IndexKeyType(index, &site->column, mcxt);
	coltype = site->column.basetype;
	site->conversion = ARG_AS_IS;
	if (site->arg.kind == site->column.kind && site->arg.tag == site->column.tag)
		return;
	switch (find_coercion_pathway(coltype, argtype, COERCION_IMPLICIT, &funcid))
	{
		case COERCION_PATH_FUNC:
			site->conversion = ARG_CAST;
			fmgr_info_cxt(funcid, &site->cast, mcxt);
			site->cast_nargs = get_func_nargs(funcid);
			return;
		case COERCION_PATH_RELABELTYPE:
			site->conversion = ARG_RELABEL;
			return;
		case COERCION_PATH_COERCEVIAIO:
			site->conversion = ARG_VIA_TEXT;
			break;
		default:
			get_type_category_preferred(argtype, &category, &preferred);
			if (category != TYPCATEGORY_STRING)
				return;
			site->conversion = ARG_VIA_TEXT;
			break;
	}
	{
		Oid			output;
		Oid			input;
		bool		varlena;

		getTypeOutputInfo(argtype, &output, &varlena);
		getTypeInputInfo(coltype, &input, &site->input_ioparam);
		fmgr_info_cxt(output, &site->output, mcxt);
		fmgr_info_cxt(input, &site->input, mcxt);
	}
}

/* The argument as a key of the index's column, and the type that hashes it. */
static Datum
ArgAsKey(ProbeSite *site, Datum value, const KeyType **key)
{
	*key = &site->column;
	switch (site->conversion)
	{
		case ARG_AS_IS:
			*key = &site->arg;
			return value;
		case ARG_RELABEL:
			return value;
		case ARG_CAST:
			if (site->cast_nargs == 1)
				return FunctionCall1(&site->cast, value);
			return FunctionCall3(&site->cast, value, Int32GetDatum(-1), BoolGetDatum(false));
		case ARG_VIA_TEXT:
			return InputFunctionCall(&site->input, OutputFunctionCall(&site->output, value),
									 site->input_ioparam, -1);
	}
	return value;
}

/*
 * Whether the site's checks still hold: the same index, user, transaction
 * and command, and no catalog change processed since (a GRANT, a policy, an
 * ATTACH, an index's state), which the caller has just taken in.
 */
static bool
ProbeSiteIsCurrent(const ProbeSite *site, Oid indexoid)
{
	return site->checked &&
		site->indexoid == indexoid &&
		site->user == GetUserId() &&
		site->transaction == ended_transactions &&
		site->command == GetCurrentCommandId(false) &&
		site->invalidations == SharedInvalidMessageCounter;
}

/*
 * The pending statistics of each leaf, where probes count as scans; NULL
 * where statistics are not collected.  The entries live until the
 * statistics are reported, which happens between transactions only, so a
 * site, which lasts one command, may keep pointers to them.
 */
static PgStat_TableStatus **
LeafStatistics(List *leaves, MemoryContext mcxt)
{
	PgStat_TableStatus **stats = MemoryContextAllocZero(mcxt, sizeof(PgStat_TableStatus *) *
														Max(list_length(leaves), 1));
	int			i = 0;
	ListCell   *cell;

	foreach(cell, leaves)
	{
		Relation	leaf = index_open(lfirst_oid(cell), NoLock);

		if (pgstat_should_count_relation(leaf))
			stats[i] = leaf->pgstat_info;
		index_close(leaf, NoLock);
		i++;
	}
	return stats;
}

/*
 * A probe of a leaf counts as one scan of it in pg_stat_user_indexes, and
 * a "maybe present" as one entry read (idx_tup_read), as a btree lookup
 * that finds the key would.  No heap row is fetched.
 */
static inline void
CountProbe(PgStat_TableStatus *stats, bool present)
{
	if (stats == NULL)
		return;
#if PG_VERSION_NUM >= 160000
	stats->counts.numscans++;
	stats->counts.tuples_returned += present;
#else
	stats->t_counts.t_numscans++;
	stats->t_counts.t_tuples_returned += present;
#endif
}

/*
 * Checks the caller's rights and the index's state, and lists the indexes
 * that answer; the locks taken stay to the end of the transaction.
 */
static void
PrepareProbeSite(ProbeSite *site, FunctionCallInfo fcinfo, Oid indexoid)
{
	Relation	index;
	List	   *leaves;
	MemoryContext old;

	site->checked = false;
	index = OpenIndexForReading(indexoid);

	/*
	 * Types are set up again too: an ALTER TYPE changes a composite's
	 * hashing, and the index's key kind check must see the type as it is.
	 */
	memset(&site->arg, 0, sizeof(site->arg));
	KeyTypeForArg(&site->arg, fcinfo, 1);
	PlanArgConversion(site, fcinfo, index);
	site->indexoid = indexoid;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	leaves = LeafIndexes(index);
	MemoryContextSwitchTo(old);
	list_free(site->leaves);
	site->leaves = leaves;
	if (site->leaf_stats != NULL)
		pfree(site->leaf_stats);
	site->leaf_stats = LeafStatistics(leaves, fcinfo->flinfo->fn_mcxt);
	index_close(index, NoLock);
	site->user = GetUserId();
	site->transaction = ended_transactions;
	site->command = GetCurrentCommandId(false);
	site->invalidations = SharedInvalidMessageCounter;
	site->checked = true;
}

/*
 * Refuses an index whose key type hashes differently now than at its build:
 * a composite key whose attributes changed (ALTER TYPE ... ADD, DROP or
 * ALTER ATTRIBUTE), which PostgreSQL allows without rebuilding the index.
 * The key tag records the type's shape (keykind.c).
 */
static void
CheckKeyTypeUnchanged(Oid indexoid, const BfHeader *header, const KeyType *column)
{
	if (header->key_kind == BF_KIND_OTHER && column->kind == BF_KIND_OTHER &&
		header->key_tag != column->tag)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" holds keys of type %s as the type was at the index's build",
						get_rel_name(indexoid), format_type_be_qualified(column->typid)),
				 errdetail("The type has been altered since (its attributes or its name), and its values hash differently now."),
				 errhint("Rebuild the index with REINDEX INDEX CONCURRENTLY.")));
}

/* Whether one index (not a partitioned one) may hold the key. */
static bool
IndexMayHold(Oid indexoid, uint64 view, const KeyType *column, const KeyType *key, Datum value)
{
	IndexCopy  *copy = CopyUnderView(indexoid, view);
	Relation	index;
	IndexLayout layout;
	uint64		hash;
	bool		present;

	if (copy != NULL && copy->bloom != NULL)
	{
		CheckKeyTypeUnchanged(indexoid, &copy->header, column);
		CheckKeyKind(&copy->header, key);
		hash = KeyHash(key, value, copy->header.seed, copy->header.version);
		return bf_filter_test(BloomData(copy->bloom), &copy->header, hash);
	}
	index = OpenCheckedIndex(indexoid);
	ReadMeta(index, &layout);
	CheckKeyTypeUnchanged(indexoid, &layout.header, column);
	CheckKeyKind(&layout.header, key);
	hash = KeyHash(key, value, layout.header.seed, layout.header.version);
	CopyIfWorthIt(copy, index, &layout);
	present = SegmentsHold(index, &layout, layout.header.nsegments, hash);
	index_close(index, NoLock);
	return present;
}

PG_FUNCTION_INFO_V1(bloom_index_contains);
/* bloom_index_contains(index, value): false if no row has the key. */
Datum
bloom_index_contains(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ProbeSite  *site = (ProbeSite *) fcinfo->flinfo->fn_extra;
	uint64		view = CurrentViewId();
	const KeyType *key;
	Datum		value;
	ListCell   *cell;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ProbeSite));
		fcinfo->flinfo->fn_extra = site;
	}
	/* what a lock taken anew would take in: other sessions' catalog changes */
	AcceptInvalidationMessages();
	if (!ProbeSiteIsCurrent(site, indexoid))
		PrepareProbeSite(site, fcinfo, indexoid);
	value = ArgAsKey(site, PG_GETARG_DATUM(1), &key);
	foreach(cell, site->leaves)
	{
		bool		present = IndexMayHold(lfirst_oid(cell), view, &site->column, key, value);

		CountProbe(site->leaf_stats[foreach_current_index(cell)], present);
		if (present)
			PG_RETURN_BOOL(true);
	}
	PG_RETURN_BOOL(false);
}

/* ---------------------------------------------------------------------
 * SQL functions: snapshot, info, verify
 * ---------------------------------------------------------------------
 */

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

PG_FUNCTION_INFO_V1(bloom_index_filter);
/*
 * bloom_index_filter(index): the index as a bloom value, same answers; of
 * a partitioned index, the union of its partitions'.
 */
Datum
bloom_index_filter(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
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
	index_close(index, NoLock);
	PG_RETURN_POINTER(bloom);
}

/* What bloom_index_info adds up over the indexes of a partitioned one. */
typedef struct IndexTotals
{
	uint64		capacity;
	uint64		inserted;
	uint64		bits;
	uint64		bits_set;
	double		none_fpr;		/* chance that no index answers "maybe" */
	int64		segments;
	int64		bytes;
	bool		vacuumed;
	uint64		dead;
} IndexTotals;

static void
AddIndexTotals(IndexTotals *totals, Oid leafoid)
{
	Relation	leaf = OpenCheckedIndex(leafoid);
	Bloom	   *bloom = IndexSnapshot(leaf);
	BfHeader	header;
	BloomEstimate e;
	bool		vacuumed;
	uint64		dead;

	BloomReadHeader(bloom, &header);
	BloomEstimates(bloom, &header, &e);
	ReadDeadKeys(leaf, &vacuumed, &dead);
	index_close(leaf, NoLock);

	totals->capacity = bf_count_add(totals->capacity, e.capacity);
	totals->inserted = bf_count_add(totals->inserted, header.inserted);
	totals->bits += e.bits;
	totals->bits_set += e.bits_set;
	totals->none_fpr *= 1.0 - e.fpr;
	totals->segments += header.nsegments;
	totals->bytes += BloomDataLen(bloom);
	totals->vacuumed = totals->vacuumed && vacuumed;
	totals->dead = bf_count_add(totals->dead, dead);
	pfree(bloom);
}

PG_FUNCTION_INFO_V1(bloom_index_info);
/*
 * bloom_index_info(index): size, fill and estimates, and rows deleted
 * since; of a partitioned index, over its partitions' indexes.
 */
Datum
bloom_index_info(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
	IndexTotals totals = {0};
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {0};
	ListCell   *cell;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "bloom_index_info must return a record");
	totals.none_fpr = 1.0;
	totals.vacuumed = true;
	foreach(cell, LeafIndexes(index))
		AddIndexTotals(&totals, lfirst_oid(cell));

	/* capacity: of the segments there are, as bloom_info reports it */
	values[0] = Int64GetDatum((int64) totals.capacity);
	values[1] = Float8GetDatum(OptionFpr(index));
	values[2] = Int64GetDatum((int64) totals.inserted);
	values[3] = Float8GetDatum(totals.bits > 0 ? (double) totals.bits_set / (double) totals.bits : 0.0);
	values[4] = Float8GetDatum(1.0 - totals.none_fpr);
	values[5] = Int32GetDatum((int32) totals.segments);
	values[6] = Int64GetDatum(totals.bytes);
	/* unknown until a VACUUM has counted the live rows */
	values[7] = Int64GetDatum((int64) totals.dead);
	nulls[7] = !totals.vacuumed;
	index_close(index, NoLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

typedef struct VerifyState
{
	KeyType    *key;
	BfHeader	header;
	const uint8 *value;
	int64		checked;
	int64		missing;
} VerifyState;

static void
VerifyCallback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state_ptr)
{
	VerifyState *state = (VerifyState *) state_ptr;

	if (isnull[0] || !tupleIsAlive)
		return;
	state->checked++;
	if (!bf_filter_test(state->value, &state->header,
						KeyHash(state->key, values[0], state->header.seed, state->header.version)))
		state->missing++;
}

/*
 * Checks one index against the rows snapshot sees, adding to *state's
 * counts.  The index's expressions and predicate are user code: they run
 * as the table's owner, in a security-restricted operation with its own
 * GUC nest level, as REINDEX and amcheck run them.
 */
static void
VerifyLeaf(Oid leafoid, Snapshot snapshot, VerifyState *state)
{
	Relation	index = OpenCheckedIndex(leafoid);
	Relation	heap = table_open(index->rd_index->indrelid, AccessShareLock);
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	KeyType		key;
	Bloom	   *bloom;
	IndexInfo  *indexInfo;
	TableScanDesc scan;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(heap->rd_rel->relowner,
						   save_sec_context | SECURITY_RESTRICTED_OPERATION);
	save_nestlevel = NewGUCNestLevel();
#if PG_VERSION_NUM >= 170000
	RestrictSearchPath();
#endif

	bloom = IndexSnapshot(index);
	BloomReadHeader(bloom, &state->header);
	state->value = BloomData(bloom);
	state->key = IndexKeyType(index, &key, CurrentMemoryContext);
	CheckKeyTypeUnchanged(RelationGetRelid(index), &state->header, state->key);
	/* an MVCC scan: the build scan must not expect every row not yet dead */
	indexInfo = BuildIndexInfo(index);
	indexInfo->ii_Concurrent = true;
	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, false);
	table_index_build_scan(heap, index, indexInfo, true, false,
						   VerifyCallback, state, scan);

	AtEOXact_GUC(false, save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	pfree(bloom);
	table_close(heap, AccessShareLock);
	index_close(index, NoLock);
}

PG_FUNCTION_INFO_V1(bloom_index_verify);
/*
 * bloom_index_verify(index): checks that the key of every live row (its
 * expression, under its predicate) is in the filter, as amcheck does for
 * btree: an ERROR (XX002) naming how many are missing, else the count.
 * A partitioned index: each partition's index.
 */
Datum
bloom_index_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index = OpenIndexForReading(indexoid);
	VerifyState state = {0};
	Snapshot	snapshot;
	ListCell   *cell;

	/*
	 * The rows to check are those of a snapshot taken before any index is
	 * copied: every row it sees committed, so its key reached the index
	 * before the copy.  (A scan of every row not yet dead, as an index
	 * build does, would take rows still being inserted, whose keys may not
	 * be in the index yet.)
	 */
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	foreach(cell, LeafIndexes(index))
		VerifyLeaf(lfirst_oid(cell), snapshot, &state);
	UnregisterSnapshot(snapshot);
	index_close(index, NoLock);
	if (state.missing > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bloomfilter index \"%s\" misses " INT64_FORMAT " of the " INT64_FORMAT " live keys",
						get_rel_name(indexoid), state.missing, state.checked)));
	PG_RETURN_INT64(state.checked);
}
