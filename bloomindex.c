/*-------------------------------------------------------------------------
 *
 * bloomindex.c
 *	  The bloomfilter index access method: a Bloom filter of one key column
 *	  that PostgreSQL keeps current on every insert, WAL-logged (generic
 *	  WAL), and the SQL functions that probe, snapshot and describe it.
 *
 * The index is one bloom filter in the core's blocked layout, cut into
 * pages: page 0 is the metapage (the filter's header, as bloom.h writes
 * it), and each later page holds the next BLOCKS_PER_PAGE 64-byte blocks.
 * A key's hash picks one block (bf_block_of), so an insert locks and logs
 * one page, and writers of other pages never wait on it; its WAL record is
 * that block and the page's insert counter (LogInsert).  The snapshot
 * (bloom_index_filter) is the header followed by the blocks in order: a
 * bloom value with the same bits, which gives the same answers.
 *
 * The planner never uses the index for scans: it has no scan functions, so
 * no path can be built on it.  Probes go through bloom_index_contains.
 *
 * Not yet: growth by segments past the capacity (the filter overfills, as
 * a stored bloom value does), and a faster path for probes from large scans
 * (each probe reads the metapage and one page through the buffer manager).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "access/htup_details.h"
#include "access/xact.h"

#include "bloomvalue.h"
#include "keykind.h"

#define BLOOM_INDEX_MAGIC		0x424C4958	/* "BLIX" */
#define BLOOM_INDEX_VERSION		1
#define BLOOM_INDEX_METAPAGE	0

/* What the metapage holds after its page header. */
typedef struct BloomIndexMeta
{
	uint32		magic;
	uint32		version;
	uint8		header[BF_HEADER_SIZE]; /* inserted = keys added by the build */
	uint32		vacuumed;		/* a VACUUM has counted the live rows since */
	uint32		unused;
	uint64		dead_at_vacuum; /* keys added minus live rows, at that VACUUM */
} BloomIndexMeta;

/* The special space of every page: keys added there since the build. */
typedef struct BloomIndexOpaque
{
	uint64		inserted;
} BloomIndexOpaque;

#define BLOCKS_PER_PAGE \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(BloomIndexOpaque))) / BF_BLOCK_BYTES)

/* Options: WITH (capacity = ..., fpr = ...). */
typedef struct BloomIndexOptions
{
	int32		vl_len_;
	int			capacity;		/* 0: from the table's size */
	double		fpr;
} BloomIndexOptions;

static relopt_kind bloom_index_relopt_kind;
static relopt_parse_elt bloom_index_relopt_tab[2];

/* The smallest capacity a build from the table's size picks. */
#define MIN_AUTO_CAPACITY 1000

void		BloomIndexDefineOptions(void);

void
BloomIndexDefineOptions(void)
{
	bloom_index_relopt_kind = add_reloption_kind();
	add_int_reloption(bloom_index_relopt_kind, "capacity",
					  "Keys the filter is sized for (0: the table's rows at build)",
					  0, 0, INT_MAX, AccessExclusiveLock);
	add_real_reloption(bloom_index_relopt_kind, "fpr",
					   "Target false-positive rate",
					   BLOOM_DEFAULT_FPR, 1e-18, 0.5, AccessExclusiveLock);
	bloom_index_relopt_tab[0].optname = "capacity";
	bloom_index_relopt_tab[0].opttype = RELOPT_TYPE_INT;
	bloom_index_relopt_tab[0].offset = offsetof(BloomIndexOptions, capacity);
	bloom_index_relopt_tab[1].optname = "fpr";
	bloom_index_relopt_tab[1].opttype = RELOPT_TYPE_REAL;
	bloom_index_relopt_tab[1].offset = offsetof(BloomIndexOptions, fpr);
}

static bytea *
bloomindex_options(Datum reloptions, bool validate)
{
	return (bytea *) build_reloptions(reloptions, validate, bloom_index_relopt_kind,
									  sizeof(BloomIndexOptions), bloom_index_relopt_tab,
									  lengthof(bloom_index_relopt_tab));
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

/* Writes the metapage and the bit pages of a new index, WAL-logged whole. */
static void
WriteIndex(Relation index, ForkNumber fork, const BfHeader *header, const uint8 *bits)
{
	uint32		npages = (header->nblocks + BLOCKS_PER_PAGE - 1) / BLOCKS_PER_PAGE;

	for (uint32 p = 0; p <= npages; p++)
	{
		Buffer		buffer = NewBuffer(index, fork);
		GenericXLogState *state;
		Page		page;

		if (BufferGetBlockNumber(buffer) != p)
			elog(ERROR, "bloomfilter index page %u was created as block %u",
				 p, BufferGetBlockNumber(buffer));
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
		if (p == BLOOM_INDEX_METAPAGE)
		{
			InitPage(page, sizeof(BloomIndexMeta));
			PageMeta(page)->magic = BLOOM_INDEX_MAGIC;
			PageMeta(page)->version = BLOOM_INDEX_VERSION;
			bf_write_header(PageMeta(page)->header, header);
		}
		else
		{
			uint32		first = (p - 1) * BLOCKS_PER_PAGE;
			uint32		count = Min(BLOCKS_PER_PAGE, header->nblocks - first);

			InitPage(page, (Size) count * BF_BLOCK_BYTES);
			if (bits != NULL)
				memcpy(PageBlocks(page), bits + (Size) first * BF_BLOCK_BYTES,
					   (Size) count * BF_BLOCK_BYTES);
		}
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buffer);
	}
}

/* The filter's header, from the metapage; a bad one is corruption. */
static void
ReadMeta(Relation index, BfHeader *header)
{
	Buffer		buffer = ReadBuffer(index, BLOOM_INDEX_METAPAGE);
	Page		page;
	BfStatus	status;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page) || PageMeta(page)->magic != BLOOM_INDEX_MAGIC ||
		PageMeta(page)->version != BLOOM_INDEX_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a valid bloomfilter index",
						RelationGetRelationName(index))));
	status = bf_read_header(PageMeta(page)->header, BF_HEADER_SIZE, header);
	UnlockReleaseBuffer(buffer);
	if (status != BF_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" has a corrupted metapage", RelationGetRelationName(index)),
				 errdetail("%s.", bf_status_message(status))));
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

/* Which page, and which block of it, a hash falls in. */
static void
BlockOfHash(const BfHeader *header, uint64 hash, BlockNumber *page, uint32 *slot)
{
	uint32		block = bf_block_of(hash, header->nblocks);

	*page = 1 + block / BLOCKS_PER_PAGE;
	*slot = block % BLOCKS_PER_PAGE;
}

/* Keys added since the build: the sum of the pages' counters. */
static uint64
InsertedSinceBuild(Relation index, const BfHeader *header)
{
	uint32		npages = (header->nblocks + BLOCKS_PER_PAGE - 1) / BLOCKS_PER_PAGE;
	uint64		inserted = 0;

	for (BlockNumber p = 1; p <= npages; p++)
	{
		Buffer		buffer = ReadBuffer(index, p);

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		inserted += PageOpaque(BufferGetPage(buffer))->inserted;
		UnlockReleaseBuffer(buffer);
	}
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
	BfHeader	header;
	uint8	   *bits;
	uint64		added;
} BuildState;

static void
BuildCallback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *state_ptr)
{
	BuildState *state = (BuildState *) state_ptr;
	uint64		hash;

	if (isnull[0])
		return;
	hash = KeyHash(state->key, values[0], state->header.seed, state->header.version);
	bf_add_hashes(state->bits, state->header.nblocks, state->header.k, &hash, 1);
	state->added++;
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
	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	return Max((int64) tuples, MIN_AUTO_CAPACITY);
}

static double
BuildFpr(Relation index)
{
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;

	return options != NULL ? options->fpr : BLOOM_DEFAULT_FPR;
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
	SizeFilter(BuildCapacity(heap, index), BuildFpr(index), &state.header);
	KeyKindIntoHeader(&state.header, state.key);
	state.bits = palloc_extended((Size) state.header.nblocks * BF_BLOCK_BYTES, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	state.added = 0;

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   BuildCallback, &state, NULL);
	state.header.inserted = state.added;
	WriteIndex(index, MAIN_FORKNUM, &state.header, state.bits);
	pfree(state.bits);

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
	BloomIndexOptions *options = (BloomIndexOptions *) index->rd_options;

	SizeFilter(options != NULL && options->capacity > 0 ? options->capacity : MIN_AUTO_CAPACITY,
			   BuildFpr(index), &header);
	KeyKindIntoHeader(&header, IndexKeyType(index, &key, CurrentMemoryContext));
	WriteIndex(index, INIT_FORKNUM, &header, NULL);
}

/*
 * Sets the key's bits in its one block.  The buffer lock lasts for the bit
 * update only; no lock is held to the end of the transaction.
 */
/*
 * The WAL record of an insert: a generic WAL record (RM_GENERIC_ID, replayed
 * by the server's generic_redo) with the two fragments that changed, the
 * key's 64-byte block and the page's insert counter, each as generic_xlog.c
 * lays fragments out: offset, length, bytes.  GenericXLogFinish would find
 * the same two fragments by comparing the whole 8 kB page before and after,
 * which took most of an insert's time.  The first change of a page after a
 * checkpoint carries its full image, as with GenericXLog.
 */
static XLogRecPtr
LogInsert(Buffer buffer, Page page, uint32 slot)
{
	char		delta[2 * (2 * sizeof(OffsetNumber)) + BF_BLOCK_BYTES + sizeof(BloomIndexOpaque)];
	char	   *ptr = delta;
	const char *fragments[2];
	OffsetNumber offsets[2];
	OffsetNumber lengths[2] = {BF_BLOCK_BYTES, sizeof(BloomIndexOpaque)};

	fragments[0] = (const char *) PageBlocks(page) + (Size) slot * BF_BLOCK_BYTES;
	fragments[1] = (const char *) PageOpaque(page);
	for (int i = 0; i < 2; i++)
	{
		offsets[i] = (OffsetNumber) (fragments[i] - (const char *) page);
		memcpy(ptr, &offsets[i], sizeof(OffsetNumber));
		ptr += sizeof(OffsetNumber);
		memcpy(ptr, &lengths[i], sizeof(OffsetNumber));
		ptr += sizeof(OffsetNumber);
		memcpy(ptr, fragments[i], lengths[i]);
		ptr += lengths[i];
	}
	XLogBeginInsert();
	XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
	XLogRegisterBufData(0, delta, ptr - delta);
	return XLogInsert(RM_GENERIC_ID, 0);
}

/*
 * What inserts keep in the index's relcache entry (rd_amcache): the key
 * type and the filter's header.  Setting them up takes catalog lookups and
 * a metapage read, several times the cost of the insert itself, and single-
 * row INSERTs would pay it per row; the relcache entry lasts until the
 * index changes (REINDEX, ALTER INDEX), which resets rd_amcache.
 */
typedef struct InsertCache
{
	KeyType		key;
	BfHeader	header;
} InsertCache;

static bool
bloomindex_insert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
				  Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
				  IndexInfo *indexInfo)
{
	InsertCache *cache = (InsertCache *) index->rd_amcache;
	BlockNumber pageno;
	uint32		slot;
	uint64		hash;
	Buffer		buffer;
	Page		page;

	if (isnull[0])
		return false;
	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(index->rd_indexcxt, sizeof(InsertCache));
		IndexKeyType(index, &cache->key, index->rd_indexcxt);
		ReadMeta(index, &cache->header);
		index->rd_amcache = cache;
	}
	hash = KeyHash(&cache->key, values[0], cache->header.seed, cache->header.version);
	BlockOfHash(&cache->header, hash, &pageno, &slot);

	buffer = ReadBuffer(index, pageno);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	START_CRIT_SECTION();
	bf_block_add(PageBlocks(page) + (Size) slot * BF_BLOCK_BYTES, hash, cache->header.k);
	PageOpaque(page)->inserted++;
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(index))
	{
		/* PageSetLSN evaluates its argument twice before PostgreSQL 16 */
		XLogRecPtr	lsn = LogInsert(buffer, page, slot);

		PageSetLSN(page, lsn);
	}
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);
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
	BfHeader	header;
	uint64		added;
	Buffer		buffer;
	GenericXLogState *state;
	Page		page;

	ReadMeta(index, &header);
	added = bf_count_add(header.inserted, InsertedSinceBuild(index, &header));
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
 * SQL functions
 * ---------------------------------------------------------------------
 */

/*
 * Opens a bloomfilter index for reading, after checking that the caller
 * may read its table: nothing about a table the caller cannot SELECT from
 * may leak through the index.
 */
static Relation
OpenIndexForReading(Oid indexoid)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", get_rel_name(indexoid) ? get_rel_name(indexoid) : "?")));
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(heapoid)),
				 errdetail("Reading a bloomfilter index needs SELECT on its table.")));
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_indam == NULL || index->rd_indam->aminsert != bloomindex_insert)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not a bloomfilter index", RelationGetRelationName(index))));
	return index;
}

/* The index as a bloom value: its header, then its blocks in order. */
static Bloom *
IndexSnapshot(Relation index)
{
	BfHeader	header;
	Bloom	   *bloom;
	uint32		npages;
	uint8	   *bits;

	ReadMeta(index, &header);
	npages = (header.nblocks + BLOCKS_PER_PAGE - 1) / BLOCKS_PER_PAGE;
	header.inserted = bf_count_add(header.inserted, InsertedSinceBuild(index, &header));
	bloom = BloomAlloc(&header);
	bits = bf_bits(BloomData(bloom));
	for (BlockNumber p = 1; p <= npages; p++)
	{
		uint32		first = (p - 1) * BLOCKS_PER_PAGE;
		uint32		count = Min(BLOCKS_PER_PAGE, header.nblocks - first);
		Buffer		buffer = ReadBuffer(index, p);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		memcpy(bits + (Size) first * BF_BLOCK_BYTES, PageBlocks(BufferGetPage(buffer)),
			   (Size) count * BF_BLOCK_BYTES);
		UnlockReleaseBuffer(buffer);
	}
	return bloom;
}

/*
 * What a call site of bloom_index_contains keeps.  A scan that probes many
 * rows reads the whole index into memory once, as a probe of a stored
 * bloom value detoasts it once: after as many probes as the index has
 * pages, copying it costs less than going on through the buffer manager.
 * The copy serves the rest of the command only, the view MVCC gives it: a
 * later command, or a later transaction of a procedure, reads the index
 * anew, and sees the keys inserted since.
 */
typedef struct IndexProbeCache
{
	KeyType		key;
	Oid			indexoid;
	TimestampTz xact_start;		/* the command the counts and copy belong to */
	TimestampTz statement_start;
	CommandId	command;
	uint64		probes;
	Bloom	   *copy;
	BfHeader	header;			/* the copy's */
} IndexProbeCache;

static bool
SameCommand(const IndexProbeCache *cache)
{
	return cache->xact_start == GetCurrentTransactionStartTimestamp() &&
		cache->statement_start == GetCurrentStatementStartTimestamp() &&
		cache->command == GetCurrentCommandId(false);
}

static void
StartCommand(IndexProbeCache *cache, Oid indexoid)
{
	if (cache->copy != NULL)
		pfree(cache->copy);
	cache->copy = NULL;
	cache->probes = 0;
	cache->indexoid = indexoid;
	cache->xact_start = GetCurrentTransactionStartTimestamp();
	cache->statement_start = GetCurrentStatementStartTimestamp();
	cache->command = GetCurrentCommandId(false);
}

PG_FUNCTION_INFO_V1(bloom_index_contains);
/* bloom_index_contains(index, value): false if no row has the key. */
Datum
bloom_index_contains(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	IndexProbeCache *cache = (IndexProbeCache *) fcinfo->flinfo->fn_extra;
	KeyType    *key;
	Relation	index;
	BfHeader	header;
	BlockNumber pageno;
	uint32		slot;
	uint64		hash;
	Buffer		buffer;
	bool		present;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(IndexProbeCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	key = KeyTypeForArg(&cache->key, fcinfo, 1);
	if (cache->indexoid != indexoid || !SameCommand(cache))
		StartCommand(cache, indexoid);
	if (cache->copy != NULL)
	{
		hash = KeyHash(key, PG_GETARG_DATUM(1), cache->header.seed, cache->header.version);
		PG_RETURN_BOOL(bf_test_hash(bf_bits(BloomData(cache->copy)), cache->header.nblocks,
									cache->header.k, hash));
	}

	/* the lock stays to the end of the transaction, as a scan's would */
	index = OpenIndexForReading(indexoid);
	ReadMeta(index, &header);
	CheckKeyKind(&header, key);
	if (++cache->probes > header.nblocks / BLOCKS_PER_PAGE + 1)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		cache->copy = IndexSnapshot(index);
		MemoryContextSwitchTo(old);
		BloomReadHeader(cache->copy, &cache->header);
	}
	hash = KeyHash(key, PG_GETARG_DATUM(1), header.seed, header.version);
	BlockOfHash(&header, hash, &pageno, &slot);
	buffer = ReadBuffer(index, pageno);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	present = bf_block_test(PageBlocks(BufferGetPage(buffer)) + (Size) slot * BF_BLOCK_BYTES,
							hash, header.k);
	UnlockReleaseBuffer(buffer);
	index_close(index, NoLock);
	PG_RETURN_BOOL(present);
}

PG_FUNCTION_INFO_V1(bloom_index_filter);
/* bloom_index_filter(index): the index as a bloom value, same answers. */
Datum
bloom_index_filter(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
	Bloom	   *bloom = IndexSnapshot(index);

	index_close(index, AccessShareLock);
	PG_RETURN_POINTER(bloom);
}

PG_FUNCTION_INFO_V1(bloom_index_info);
/* bloom_index_info(index): size, fill and estimates, and rows deleted since. */
Datum
bloom_index_info(PG_FUNCTION_ARGS)
{
	Relation	index = OpenIndexForReading(PG_GETARG_OID(0));
	BfHeader	header;
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {0};
	Bloom	   *bloom;
	uint64		bits_set;
	bool		vacuumed;
	uint64		dead;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "bloom_index_info must return a record");
	bloom = IndexSnapshot(index);
	BloomReadHeader(bloom, &header);
	bits_set = 0;
	{
		BloomEstimate e;

		BloomEstimates(bloom, &header, &e);
		bits_set = e.bits_set;
	}
	ReadDeadKeys(index, &vacuumed, &dead);
	index_close(index, AccessShareLock);

	values[0] = Int64GetDatum((int64) header.capacity);
	values[1] = Float8GetDatum(header.fpr);
	values[2] = Int64GetDatum((int64) header.inserted);
	values[3] = Float8GetDatum((double) bits_set / ((double) header.nblocks * BF_BLOCK_BITS));
	values[4] = Float8GetDatum(BloomEstimatedFpr(bloom, &header));
	values[5] = Int32GetDatum(1);
	values[6] = Int64GetDatum((int64) ((Size) header.nblocks * BF_BLOCK_BYTES + BF_HEADER_SIZE));
	/* unknown until a VACUUM has counted the live rows */
	values[7] = Int64GetDatum((int64) dead);
	nulls[7] = !vacuumed;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

typedef struct VerifyState
{
	KeyType    *key;
	BfHeader	header;
	const uint8 *bits;
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
	if (!bf_test_hash(state->bits, state->header.nblocks, state->header.k,
					  KeyHash(state->key, values[0], state->header.seed, state->header.version)))
		state->missing++;
}

PG_FUNCTION_INFO_V1(bloom_index_verify);
/*
 * bloom_index_verify(index): checks that the key of every live row (its
 * expression, under its predicate) is in the filter, as amcheck does for
 * btree: an ERROR (XX002) naming how many are missing, else the count.
 */
Datum
bloom_index_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Relation	index = OpenIndexForReading(indexoid);
	Relation	heap;
	IndexInfo  *indexInfo;
	VerifyState state;
	KeyType		key;
	Bloom	   *bloom = IndexSnapshot(index);

	BloomReadHeader(bloom, &state.header);
	state.bits = bf_bits(BloomData(bloom));
	state.key = IndexKeyType(index, &key, CurrentMemoryContext);
	state.checked = 0;
	state.missing = 0;
	heap = table_open(index->rd_index->indrelid, AccessShareLock);
	indexInfo = BuildIndexInfo(index);
	table_index_build_scan(heap, index, indexInfo, true, false, VerifyCallback, &state, NULL);
	table_close(heap, AccessShareLock);
	index_close(index, AccessShareLock);
	if (state.missing > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bloomfilter index \"%s\" misses " INT64_FORMAT " of the " INT64_FORMAT " live keys",
						get_rel_name(indexoid), state.missing, state.checked)));
	PG_RETURN_INT64(state.checked);
}
