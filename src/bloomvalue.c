/*-------------------------------------------------------------------------
 *
 * bloomvalue.c
 *	  Helpers on bloom values shared by every glue file: allocation,
 *	  header access, the one validation path for bytes from outside, sizing
 *	  with its user-facing errors, adding and testing one value, and the one
 *	  routine that combines two filters.
 *
 * This is where the core's BfStatus codes become ereports: the core neither
 * allocates nor throws, so every value it works on is made here, and every
 * failure it reports is raised here with the SQLSTATE the caller's path
 * needs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/base64.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "utils/array.h"
#include "utils/regproc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "mb/pg_wchar.h"

#include "bloomvalue.h"
#include "largevalue.h"
#include "sizing.h"

/* A new, empty filter with the given header, in the current context. */
static void
CheckInterruptsBetweenSlices(void *context)
{
	CHECK_FOR_INTERRUPTS();
}

const BfHooks InterruptibleSlices = {NULL, CheckInterruptsBetweenSlices, NULL};

/*
 * The one memo the glue lends the core (sizing.h): a backend runs one
 * thread, and a parallel worker is a process of its own.  Zeroed static
 * storage is an empty memo, whose slots' pages are touched only once used.
 */
BfSizingMemo BackendSizingMemo;

TupleDesc
ResultRowDesc(FunctionCallInfo fcinfo)
{
	TupleDesc	desc;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "function %s must return a row type",
			 format_procedure(fcinfo->flinfo->fn_oid));
	return desc;
}

Bloom *
BloomAlloc(BfHeader *header)
{
	size_t		len = bf_value_bytes(header->nblocks);
	Bloom	   *bloom = (Bloom *) PallocLarge(VARHDRSZ + len);

	SET_VARSIZE(bloom, VARHDRSZ + len);
	bf_init(BloomData(bloom), header, &InterruptibleSlices);
	return bloom;
}

/*
 * A value already in the database (or made in this query) with a bad
 * header or length: every input path validated it in full, so this is
 * on-disk corruption.
 */
void
ReportCorruptValue(BfStatus status)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("bloom value is corrupted"),
			 errdetail("%s.", bf_status_message(status))));
}

/*
 * Decodes the header of a value already in the database.  Input paths
 * validated it in full, so a failure here means on-disk corruption.
 */
void
BloomReadHeader(Bloom *bloom, BfHeader *header)
{
	BfStatus	status = bf_read_header(BloomData(bloom), BloomDataLen(bloom),
										header);

	if (status == BF_OK)
		status = bf_check_segments(BloomData(bloom), BloomDataLen(bloom), header);
	if (status != BF_OK)
		ReportCorruptValue(status);
}

/* Seals the value after the glue changed its bits or header (bloomvalue.h). */
void
BloomWriteHeader(Bloom *bloom, BfHeader *header)
{
	bf_seal(BloomData(bloom), BloomDataLen(bloom), header);
}

void
BloomSeal(Bloom *bloom)
{
	BfHeader	header;

	BloomReadHeader(bloom, &header);
	BloomWriteHeader(bloom, &header);
}

#ifdef USE_ASSERT_CHECKING
Bloom *
BloomAssertSealed(Bloom *bloom)
{
	BfHeader	header;

	if (bloom != NULL && !VARATT_IS_EXTERNAL(bloom) && !VARATT_IS_COMPRESSED(bloom))
		Assert(bf_validate(BloomData(bloom), BloomDataLen(bloom), &header,
						   &BackendSizingMemo) == BF_OK);
	return bloom;
}
#endif

/*
 * The glue's single entry to the core's validator, used by text input,
 * binary receive, the bytea cast and aggregate deserialisation.  message is
 * the primary error message, followed by the start of shown (the text input)
 * if given; the detail says what is wrong.  Formatted only on failure.  Returns NULL
 * after a soft error.
 */
Bloom *
BloomFromBytes(const uint8 *bytes, size_t len, int sqlstate,
			   Node *escontext, const char *message, const char *shown)
{
	BfHeader	header;
	BfStatus	status;
	Bloom	   *bloom;

	/* bytes whose header fails are refused before room is made for them */
	status = len > BF_MAX_VALUE_BYTES ? BF_ERR_TOO_LARGE
		: bf_read_header(bytes, len, &header);
	if (status == BF_OK)
	{
		/* the copy is made in the pass that checks the body */
		bloom = (Bloom *) palloc(VARHDRSZ + len);
		SET_VARSIZE(bloom, VARHDRSZ + len);
		status = bf_validate_copy(BloomData(bloom), bytes, len, &header, &BackendSizingMemo);
		if (status == BF_OK)
			return bloom;
		pfree(bloom);
	}
	if (shown != NULL)
		report_input_error(escontext,
						   (errcode(sqlstate),
							errmsg_internal("%s: \"%.40s%s\"", message, shown,
											strlen(shown) > 40 ? "..." : ""),
							errdetail("%s.", bf_status_message(status))));
	else
		report_input_error(escontext,
						   (errcode(sqlstate),
							errmsg_internal("%s", message),
							errdetail("%s.", bf_status_message(status))));
	return NULL;
}

/* The binary side of common/base64.h: uint8 from PostgreSQL 18 on. */
#if PG_VERSION_NUM >= 180000
typedef uint8 Base64Byte;
#else
typedef char Base64Byte;
#endif

/*
 * Base64 sizes, computed in size_t: pg_b64_enc_len and pg_b64_dec_len work
 * in int and overflow for values over 512 MB.
 */
static size_t
Base64EncodedLength(size_t bytes)
{
	return (bytes + 2) / 3 * 4;
}

static size_t
Base64DecodedRoom(size_t encoded)
{
	return encoded / 4 * 3 + 3;
}

uint8 *
DecodeTextForm(const char *input, const char *prefix, const char *type_name,
			   Node *escontext, size_t *len)
{
	size_t		input_len = strlen(input);
	size_t		prefix_len = strlen(prefix);
	int			encoded_len;
	Base64Byte *decoded;
	int			decoded_len;

	if (input_len < prefix_len || strncmp(input, prefix, prefix_len) != 0)
	{
		report_input_error(escontext,
						   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type %s: \"%.40s%s\"",
								   type_name, input, input_len > 40 ? "..." : ""),
							errdetail("A %s value starts with \"%s\".", type_name, prefix)));
		return NULL;
	}
	if (input_len - prefix_len > Base64EncodedLength(BF_MAX_VALUE_BYTES))
	{
		report_input_error(escontext,
						   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type %s: \"%.40s...\"",
								   type_name, input),
							errdetail("The value is longer than any %s value.", type_name)));
		return NULL;
	}

	encoded_len = (int) (input_len - prefix_len);
	decoded = palloc(Base64DecodedRoom(encoded_len));
	decoded_len = pg_b64_decode(input + prefix_len, encoded_len, decoded,
								(int) Base64DecodedRoom(encoded_len));
	if (decoded_len < 0)
	{
		pfree(decoded);
		report_input_error(escontext,
						   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
							errmsg("invalid input syntax for type %s: \"%.40s%s\"",
								   type_name, input, input_len > 40 ? "..." : ""),
							errdetail("The text after \"%s\" is not valid base64.", prefix)));
		return NULL;
	}
	*len = (size_t) decoded_len;
	return (uint8 *) decoded;
}

char *
EncodeTextForm(const uint8 *bytes, size_t len, const char *prefix, const char *type_name)
{
	size_t		prefix_len = strlen(prefix);
	size_t		encoded_max = prefix_len + Base64EncodedLength(len) + 1;
	char	   *text;
	int			encoded_len;

	if (encoded_max > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s value of %zu bytes is too large for text output", type_name, len),
				 errhint("Use binary COPY or a cast to bytea.")));

	text = palloc(encoded_max);
	memcpy(text, prefix, prefix_len);
	encoded_len = pg_b64_encode((const Base64Byte *) bytes, (int) len, text + prefix_len,
								(int) (encoded_max - prefix_len));
	if (encoded_len < 0)
		elog(ERROR, "could not encode %s value as base64", type_name);
	text[prefix_len + encoded_len] = '\0';
	return text;
}

/* Raises the error for a failed bf_size_for. */
static void
ReportSizingError(BfStatus status, int64 capacity, double fpr,
					const BfSizing *sizing)
{
	if (status == BF_ERR_CAPACITY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter capacity must be at least 1"),
				 errdetail("Capacity was " INT64_FORMAT ".", capacity)));
	if (status == BF_ERR_FPR)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter false-positive rate must be greater than 0 and at most 0.5"),
				 errdetail("The rate was %g.", fpr)));

	/*
	 * A parameter outside what the filter can be, like the range above: no
	 * capacity and no split of the values reaches it, so it is not a size
	 * limit (54000), whose hint would say to split them.
	 */
	if (status == BF_ERR_FPR_UNREACHABLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter false-positive rate %g is below what the layout supports",
						fpr),
				 errdetail("The lowest supported rate is %g: values are told apart by a 64-bit hash, so an absent value is reported present with probability at least 2^-64 per value in the filter.",
						   BF_MIN_FPR),
				 errhint("Use a false-positive rate of at least %g.", BF_MIN_FPR)));
	if (sizing->hash_limited)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloom filter cannot hold " INT64_FORMAT " values at false-positive rate %g",
						capacity, fpr),
				 errdetail("At that rate at most " UINT64_FORMAT " values fit: values are told apart by a 64-bit hash, and each value in the filter makes an absent one look present with probability 2^-64.",
						   sizing->max_capacity),
				 errhint("Use a higher false-positive rate, or split the values over several filters.")));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bloom filter cannot hold " INT64_FORMAT " values at false-positive rate %g",
					capacity, fpr),
			 errdetail("At that rate at most " UINT64_FORMAT " values fit in the largest bloom filter, of %zu bytes (a larger one could not be dumped and restored).",
					   sizing->max_capacity, BF_MAX_VALUE_BYTES),
			 errhint("Use a higher false-positive rate, or split the values over several filters.")));
}

/*
 * Sizes a filter for (capacity, fpr), raising the user-facing error on bad
 * parameters.  Every constructor goes through here.
 */
void
SizeFilter(int64 capacity, double fpr, BfHeader *header)
{
	BfSizing	sizing;
	BfStatus	status;

	status = capacity < 1 ? BF_ERR_CAPACITY
		: bf_size_for((uint64) capacity, fpr, &sizing, &BackendSizingMemo);
	if (status != BF_OK)
		ReportSizingError(status, capacity, fpr, &sizing);
	bf_fixed_header((uint64) capacity, fpr, &sizing, header);
}

/*
 * The core's hooks (BfHooks) in a backend: a value grows in its own memory
 * context, and a loop over a large filter's bits answers a cancel between
 * slices.  context is the Bloom ** holding the value (*NULL: a new one),
 * repointed at once, so that it stays valid should a later step fail.
 */
static uint8_t *
ResizeBloom(void *context, uint8_t *value, size_t new_len)
{
	Bloom	  **bloom = (Bloom **) context;
	Bloom	   *resized = *bloom != NULL ? repalloc(*bloom, VARHDRSZ + new_len)
		: palloc(VARHDRSZ + new_len);

	SET_VARSIZE(resized, VARHDRSZ + new_len);
	*bloom = resized;
	return BloomData(resized);
}


/*
 * A new, empty chain (bloom_empty with a growth factor): its first
 * segment, planned for (capacity, fpr / 2).
 */
void
CheckFilterParameters(int64 capacity, double fpr, int32 growth)
{
	BfHeader	unused;
	BfHeader	chain;
	BfSegment	first;
	size_t		len;

	if (growth != 0 && (growth < BF_MIN_GROWTH || growth > BF_MAX_GROWTH))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloom filter growth factor must be between %d and %d",
						BF_MIN_GROWTH, BF_MAX_GROWTH),
				 errdetail("The growth factor was %d; 0 makes a filter of fixed size.",
						   growth)));
	SizeFilter(capacity, fpr, &unused);	/* the parameters' own errors */
	if (growth == 0)
		return;
	SizeFilter(capacity, fpr * 0.5, &unused);	/* the first segment's */

	/*
	 * A first segment of the largest size leaves no room for its
	 * descriptor: the chain is refused as a filter of that size would be.
	 */
	if (bf_chain_header((uint64) capacity, fpr, (uint8) growth, &chain) == BF_OK &&
		bf_chain_next(&chain, BF_HEADER_SIZE, &first, &len,
					  &BackendSizingMemo) == BF_ERR_TOO_LARGE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloom filter cannot hold " INT64_FORMAT " values at false-positive rate %g",
						capacity, fpr),
				 errdetail("The first segment of a growing filter, sized for them at rate %g, would be larger with its %d-byte descriptor than the largest bloom filter, of %zu bytes (a larger one could not be dumped and restored).",
						   fpr * 0.5, BF_SEGMENT_HEADER_SIZE, BF_MAX_VALUE_BYTES),
				 errhint("Use a higher false-positive rate, or split the values over several filters.")));
}

Bloom *
BloomAllocChain(int64 capacity, double fpr, int32 growth)
{
	Bloom	   *bloom = NULL;
	BfHooks		hooks = {ResizeBloom, CheckInterruptsBetweenSlices, &bloom};
	BfHeader	header;
	uint8	   *value;
	size_t		len;
	BfStatus	status;

	CheckFilterParameters(capacity, fpr, growth);
	status = bf_chain_create((uint64) capacity, fpr, (uint8) growth, &value, &len,
							 &header, &BackendSizingMemo, &hooks);
	if (status != BF_OK)
		elog(ERROR, "bloom chain parameters rejected after sizing: %s",
			 bf_status_message(status));
	return bloom;
}

/*
 * Adds hashes to *bloom, a filter the caller owns, with the key kind
 * already in the header.  A chain grows when its last segment is full:
 * *bloom then moves (repalloc'd in its own memory context), and is
 * repointed at each step, so that it stays valid should a later one fail.
 */
void
BloomAddHashes(Bloom **bloom, BfHeader *header, const uint64 *hashes, size_t n)
{
	BfHooks		hooks = {ResizeBloom, CheckInterruptsBetweenSlices, bloom};
	uint8	   *value = BloomData(*bloom);
	size_t		len = BloomDataLen(*bloom);
	BfStatus	status;

	status = bf_filter_add_growing(&value, &len, header, hashes, n, &BackendSizingMemo,
								   &hooks);
	if (status != BF_OK)
		elog(ERROR, "bloom chain asked to grow and could not: %s", bf_status_message(status));
}

void
BloomCheckKey(const BfHeader *header, const KeyType *key)
{
	CheckKeyIdentity(&header->identity, bf_records_environment(header), key);
}

void
BloomKeyIntoHeader(BfHeader *header, const KeyType *key)
{
	header->identity = KeyIdentityOf(key, bf_records_environment(header));
}

/* Adds one value to a filter the caller owns; see BloomAddHashes. */
void
BloomAddValue(Bloom **bloom, BfHeader *header, const KeyType *key, Datum value)
{
	uint64		hash = KeyHash(key, value, header->seed, header->version);

	BloomKeyIntoHeader(header, key);
	BloomAddHashes(bloom, header, &hash, 1);
}

/* Whether the value may have been added. */
bool
BloomTestValue(Bloom *bloom, const BfHeader *header, const KeyType *key,
				 Datum value)
{
	return BloomTestHash(bloom, header, BloomHashValue(header, key, value));
}

AggState *
CallingAggNode(FunctionCallInfo fcinfo)
{
	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return NULL;
	return (AggState *) fcinfo->context;
}

MemoryContext
AggregateMemoryContext(FunctionCallInfo fcinfo, const char *name)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s can only be called by an aggregate", name)));
	return aggcontext;
}

/* The whole value's estimates, over its segments (bf_estimate). */
void
BloomEstimates(Bloom *bloom, const BfHeader *header, BfEstimate *estimate)
{
	bf_estimate(BloomData(bloom), header, estimate, &InterruptibleSlices);
}

double
BloomEstimatedFpr(Bloom *bloom, const BfHeader *header)
{
	BfEstimate	estimate;

	BloomEstimates(bloom, header, &estimate);
	return estimate.fpr;
}

/*
 * The first segment that has taken more than its capacity, if any: in a
 * chain only the last one takes values, as long as the chain can grow, but
 * a union fills segments side by side.
 */
static bool
SegmentOverCapacity(Bloom *bloom, const BfHeader *header, BfSegment *segment)
{
	bf_segment_first(BloomData(bloom), header, segment);
	do
	{
		if (segment->inserted > segment->capacity)
			return true;
	} while (bf_segment_next(BloomData(bloom), header, segment));
	return false;
}

static bool
ChainCanGrow(Bloom *bloom, const BfHeader *header)
{
	BfSegment	next;
	size_t		new_len;

	return bf_chain_next(header, BloomDataLen(bloom), &next, &new_len,
						 &BackendSizingMemo) == BF_OK;
}

/*
 * Loads per block up to which bf_blocked_fpr is a usable bound; far beyond
 * any sizing, its Poisson weights underflow.  Past it, the bits decide.
 */
#define COUNT_BOUND_MAX_LOAD 256.0

/*
 * Warns, once per statement, that a filter has had so many values added
 * that its false-positive rate passed OVERFILL_RATE_FACTOR times its
 * target: it still finds every value added, but answers "maybe" so often
 * that it stops saving work.  Cheap when the filter is not near that: the
 * rate its inserted count implies (an upper bound, as duplicates count) is
 * checked before its bits are; and within a statement the bits are looked
 * at again only after the count has grown by a tenth.
 */
bool
OverfillCheckDue(OverfillThrottle *throttle, uint64 count)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();

	if (throttle->warned_statement == statement ||
		(throttle->checked_statement == statement &&
		 count < throttle->checked_count + throttle->checked_count / 10))
		return false;
	throttle->checked_statement = statement;
	throttle->checked_count = count;
	return true;
}

void
OverfillWarned(OverfillThrottle *throttle)
{
	throttle->warned_statement = GetCurrentStatementStartTimestamp();
}

void
WarnIfOverfilled(Bloom *bloom, const BfHeader *header)
{
	static OverfillThrottle throttle;
	BfSegment	full;
	double		load;
	double		rate;

	if (!SegmentOverCapacity(bloom, header, &full))
		return;
	load = (double) full.inserted / full.nblocks;
	if (!bf_is_chain(header) && load < COUNT_BOUND_MAX_LOAD &&
		bf_blocked_fpr(load, header->k) <= OVERFILL_RATE_FACTOR * header->fpr)
		return;
	if (!OverfillCheckDue(&throttle, header->inserted))
		return;
	rate = BloomEstimatedFpr(bloom, header);
	if (rate <= OVERFILL_RATE_FACTOR * header->fpr)
		return;
	OverfillWarned(&throttle);
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("bloom filter is overfilled: its false-positive rate is %.3g, %.1f times its target of %g",
					rate, rate / header->fpr, header->fpr),
			 bf_is_chain(header)
			 ? errdetail("Its segment %u was sized for " UINT64_FORMAT " values and has taken " UINT64_FORMAT "; %s.",
						 full.index + 1, full.capacity, full.inserted,
						 ChainCanGrow(bloom, header)
						 ? "a union combines growing filters segment by segment and does not grow them"
						 : "the chain cannot grow further")
			 : errdetail("It was sized for " UINT64_FORMAT " values and has had " UINT64_FORMAT " added.",
						 header->capacity, header->inserted),
			 errhint("Rebuild it with a larger capacity; bloom_agg(value) sizes a filter for what it holds.")));
}

static void
DescribeParameters(StringInfo out, const BfHeader *h)
{
	char	   *environment = KeyEnvironmentName(&h->identity);

	if (bf_is_chain(h))
		appendStringInfo(out, "(capacity " UINT64_FORMAT ", fpr %g, growth %d, segments %u"
						 ", seed " UINT64_FORMAT ", layout %d, key kind %s",
						 h->capacity, h->fpr, h->growth, h->nsegments, h->seed,
						 h->layout, KeyKindName(h->identity.kind));
	else
		appendStringInfo(out, "(capacity " UINT64_FORMAT ", fpr %g, bits " UINT64_FORMAT
					 ", k %d, seed " UINT64_FORMAT ", layout %d, key kind %s",
					 h->capacity, h->fpr, (uint64) h->nblocks * BF_BLOCK_BITS,
					 h->k, h->seed, h->layout, KeyKindName(h->identity.kind));
	if (environment != NULL)
		appendStringInfo(out, ", %s", environment);
	appendStringInfoChar(out, ')');
}

/* Raises the error for filters that cannot be combined. */
static void
CheckCompatible(const BfHeader *a, const BfHeader *b, const char *operation)
{
	StringInfoData detail;

	if (bf_compatible(a, b))
		return;
	if (!bf_same_hashing(a->version, b->version))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cannot compute the %s of bloom filters of format versions %d and %d",
						operation, a->version, b->version),
				 errdetail("Version 2 hashes strings as UTF-8 and fractional numerics by their digits; version 1 did not."),
				 errhint("Rebuild the version 1 filter: new filters are version 2.")));
	initStringInfo(&detail);
	appendStringInfoString(&detail, "First filter ");
	DescribeParameters(&detail, a);
	appendStringInfoString(&detail, ", second filter ");
	DescribeParameters(&detail, b);
	appendStringInfoChar(&detail, '.');
	if (!bf_key_identity_compatible(&a->identity, &b->identity))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cannot compute the %s of bloom filters of different kinds of values",
						operation),
				 errdetail_internal("%s", detail.data),
				 errhint("Combine filters of one key kind, built for one type in one encoding and locale.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("cannot compute the %s of bloom filters with different parameters",
					operation),
			 errdetail_internal("%s", detail.data),
			 errhint("Build every filter that will be combined with the same capacity, false-positive rate and growth factor.")));
}

/*
 * A value's segments may be in different segments of another, so
 * intersecting chains segment by segment could drop values both hold.
 */
static void
CheckIntersectable(const BfHeader *a, const BfHeader *b)
{
	if (bf_is_chain(a) || bf_is_chain(b))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot compute the intersection of growing bloom filters"),
				 errdetail("A value may sit in different segments of the two filters."),
				 errhint("Intersect filters of fixed size (bloom_empty or bloom_agg without a growth factor).")));
}

/* Raises the error for chains whose segments differ in size. */
static void
CheckSegmentsAlike(Bloom *a, const BfHeader *ah, Bloom *b, const BfHeader *bh)
{
	BfSegment	sa;
	BfSegment	sb;

	if (!bf_segments_alike(BloomData(a), ah, BloomData(b), bh, &sa, &sb))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("cannot compute the union of bloom filters whose segments differ in size"),
				 errdetail("Segment %u has %u blocks and %d hashes in one, %u blocks and %d hashes in the other.",
						   sa.index + 1, sa.nblocks, sa.k, sb.nblocks, sb.k),
				 errhint("Rebuild both filters with this version of the extension.")));
}

/*
 * Combines src into dst (which the caller owns) in place; the one routine
 * behind the functions, operators and aggregates.  Returns dst, which a
 * union with a longer chain moves (repalloc'd in dst's memory context).
 */
Bloom *
BloomCombineInto(Bloom *dst, Bloom *src, bool is_union, bool warn_overfilled)
{
	BfHooks		hooks = {ResizeBloom, CheckInterruptsBetweenSlices, &dst};
	BfHeader	d;
	BfHeader	s;
	uint8	   *value = BloomData(dst);
	size_t		len = BloomDataLen(dst);
	BfStatus	status;

	BloomReadHeader(dst, &d);
	BloomReadHeader(src, &s);
	if (!is_union)
		CheckIntersectable(&d, &s);
	CheckCompatible(&d, &s, is_union ? "union" : "intersection");

	if (is_union)
	{
		CheckSegmentsAlike(dst, &d, src, &s);
		status = bf_union_into(&value, &len, &d, BloomData(src), BloomDataLen(src), &s,
							   &hooks);
	}
	else
		status = bf_intersect_into(value, &d, BloomData(src), &s, &hooks);
	if (status != BF_OK)
		elog(ERROR, "bloom filters checked as compatible could not be combined: %s",
			 bf_status_message(status));
	if (is_union && warn_overfilled)
		WarnIfOverfilled(dst, &d);
	return dst;
}
