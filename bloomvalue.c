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

#include "lib/stringinfo.h"

#include "bloomvalue.h"

/* A new, empty filter with the given header, in the current context. */
Bloom *
BloomAlloc(const BfHeader *header)
{
	size_t		len = bf_value_bytes(header->nblocks);
	Bloom	   *bloom = (Bloom *) palloc(VARHDRSZ + len);

	SET_VARSIZE(bloom, VARHDRSZ + len);
	bf_init(BloomData(bloom), header);
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

	if (status == BF_OK && BloomDataLen(bloom) != bf_value_bytes(header->nblocks))
		status = BF_ERR_LENGTH;
	if (status != BF_OK)
		ReportCorruptValue(status);
}

/* Rewrites the header after the glue changed a field (kind, count). */
void
BloomWriteHeader(Bloom *bloom, const BfHeader *header)
{
	bf_write_header(BloomData(bloom), header);
}

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

	status = len > BF_MAX_VALUE_BYTES ? BF_ERR_TOO_LARGE
		: bf_validate(bytes, len, &header);
	if (status != BF_OK)
	{
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
	bloom = (Bloom *) palloc(VARHDRSZ + len);
	SET_VARSIZE(bloom, VARHDRSZ + len);
	memcpy(BloomData(bloom), bytes, len);
	return bloom;
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
		: bf_size_for((uint64) capacity, fpr, &sizing);
	if (status != BF_OK)
		ReportSizingError(status, capacity, fpr, &sizing);

	memset(header, 0, sizeof(*header));
	header->version = BF_FORMAT_VERSION;
	header->layout = BF_LAYOUT_BLOCKED512;
	header->k = sizing.k;
	header->key_kind = BF_KIND_NONE;
	header->nblocks = sizing.nblocks;
	header->capacity = (uint64) capacity;
	header->fpr = fpr;
}

/* Adds one value to a filter the caller owns, updating kind and count. */
void
BloomAddValue(Bloom *bloom, BfHeader *header, const KeyType *key, Datum value)
{
	uint64		hash = KeyHash(key, value, header->seed);

	bf_add_hashes(bf_bits(BloomData(bloom)), header->nblocks, header->k,
				  &hash, 1);
	header->key_kind = key->kind;
	header->key_tag = key->tag;
	header->inserted = bf_count_add(header->inserted, 1);
}

/* Whether the value may have been added. */
bool
BloomTestValue(Bloom *bloom, const BfHeader *header, const KeyType *key,
				 Datum value)
{
	if (header->key_kind == BF_KIND_NONE)
		return false;			/* nothing was ever added */
	return bf_test_hash(bf_bits(BloomData(bloom)), header->nblocks, header->k,
						KeyHash(key, value, header->seed));
}

static void
DescribeParameters(StringInfo out, const BfHeader *h)
{
	appendStringInfo(out, "(capacity " UINT64_FORMAT ", fpr %g, bits " UINT64_FORMAT
					 ", k %d, seed " UINT64_FORMAT ", layout %d, key kind %s)",
					 h->capacity, h->fpr, (uint64) h->nblocks * BF_BLOCK_BITS,
					 h->k, h->seed, h->layout, KeyKindName(h->key_kind));
}

/* Raises the error for filters that cannot be combined. */
static void
CheckCompatible(const BfHeader *a, const BfHeader *b, const char *operation)
{
	StringInfoData detail;

	if (bf_compatible(a, b))
		return;
	initStringInfo(&detail);
	appendStringInfoString(&detail, "First filter ");
	DescribeParameters(&detail, a);
	appendStringInfoString(&detail, ", second filter ");
	DescribeParameters(&detail, b);
	appendStringInfoChar(&detail, '.');
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("cannot compute the %s of bloom filters with different parameters",
					operation),
			 errdetail_internal("%s", detail.data),
			 errhint("Build every filter that will be combined with the same capacity and false-positive rate.")));
}

/*
 * Combines src into dst (which the caller owns) in place; the one routine
 * behind the functions, operators and aggregates.
 */
void
BloomCombineInto(Bloom *dst, Bloom *src, bool is_union)
{
	BfHeader	d;
	BfHeader	s;
	size_t		nbytes;

	BloomReadHeader(dst, &d);
	BloomReadHeader(src, &s);
	CheckCompatible(&d, &s, is_union ? "union" : "intersection");
	nbytes = (size_t) d.nblocks * BF_BLOCK_BYTES;

	if (is_union)
	{
		bf_union_bits(bf_bits(BloomData(dst)), bf_bits(BloomData(src)), nbytes);
		d.inserted = bf_count_add(d.inserted, s.inserted);
		if (d.key_kind == BF_KIND_NONE)
		{
			d.key_kind = s.key_kind;
			d.key_tag = s.key_tag;
		}
	}
	else
	{
		bf_intersect_bits(bf_bits(BloomData(dst)), bf_bits(BloomData(src)), nbytes);
		d.inserted = Min(d.inserted, s.inserted);
		if (s.key_kind == BF_KIND_NONE)
		{
			/* intersecting with an empty filter leaves nothing */
			d.key_kind = BF_KIND_NONE;
			d.key_tag = 0;
		}
	}
	BloomWriteHeader(dst, &d);
}
