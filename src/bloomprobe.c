/*-------------------------------------------------------------------------
 *
 * bloomprobe.c
 *	  BloomReader: how the probe cache (probecache.c) and the Bloom Filter
 *	  Scan read a bloom value: its header, its key check and test (whole,
 *	  or as hash, prefetch and test), the expanded form read in place, and
 *	  the probe of a stored filter that reads only its header and the one
 *	  block a value maps to.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"

#include "bloomexpanded.h"
#include "probecache.h"

static void
BloomProbeReadHeader(struct varlena *filter, void *header)
{
	BloomReadHeader(filter, (BfHeader *) header);
}

static void
BloomProbeCheckKey(const void *header, const KeyType *key)
{
	BloomCheckKey((const BfHeader *) header, key);
}

static bool
BloomProbeTest(struct varlena *filter, const void *header, const KeyType *key, Datum value)
{
	return BloomTestValue(filter, (const BfHeader *) header, key, value);
}

/*
 * Two slice reads, of the header and of one block.  A chain's segments
 * could only be placed with the whole value: that is left to a detoast.
 */
static bool
BloomProbeSlices(struct varlena *raw, Size value_bytes, const KeyType *key, Datum value,
				 bool *result)
{
	struct varlena *slice;
	BfHeader	header;
	BfStatus	status;
	uint64		hash;
	uint32		block;

	slice = detoast_attr_slice(raw, 0, BF_HEADER_SIZE);
	status = bf_read_header(BloomData(slice), BloomDataLen(slice), &header);
	pfree(slice);
	if (status == BF_OK && bf_is_chain(&header))
		return false;
	if (status == BF_OK && value_bytes != bf_value_bytes(header.nblocks))
		status = BF_ERR_LENGTH;
	if (status != BF_OK)
		ReportCorruptValue(status);

	BloomCheckKey(&header, key);
	if (header.identity.kind == BF_KIND_NONE)
	{
		*result = false;
		return true;
	}
	hash = KeyHash(key, value, header.seed, header.version);
	block = bf_block_of(hash, header.nblocks);
	slice = detoast_attr_slice(raw, BF_HEADER_SIZE + (int32) block * BF_BLOCK_BYTES,
							   BF_BLOCK_BYTES);
	if (BloomDataLen(slice) != BF_BLOCK_BYTES)
		elog(ERROR, "short slice of a stored bloom value");
	*result = bf_block_test(BloomData(slice), hash, header.k);
	pfree(slice);
	return true;
}

static uint64
BloomProbeHash(const void *header, const KeyType *key, Datum value)
{
	return BloomHashValue((const BfHeader *) header, key, value);
}

static void
BloomProbePrefetch(struct varlena *filter, const void *header, uint64 hash)
{
	bf_filter_prefetch(BloomData(filter), (const BfHeader *) header, hash);
}

static bool
BloomProbeTestHash(struct varlena *filter, const void *header, uint64 hash)
{
	return BloomTestHash(filter, (const BfHeader *) header, hash);
}

const FilterReader BloomReader = {
	.header_size = sizeof(BfHeader),
	.raw_header_size = BF_HEADER_SIZE,
	.read_header = BloomProbeReadHeader,
	.check_key = BloomProbeCheckKey,
	.test = BloomProbeTest,
	.in_place = ExpandedBloomFlat,
	.probe_slices = BloomProbeSlices,
	.hash = BloomProbeHash,
	.prefetch = BloomProbePrefetch,
	.test_hash = BloomProbeTestHash,
};
