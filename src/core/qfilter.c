/*-------------------------------------------------------------------------
 *
 * qfilter.c
 *	  The pure core of qfilter: a rank-select quotient filter of
 *	  fingerprints (Pandey, Bender, Johnson, Patro, SIGMOD 2017), with the
 *	  format, sizing, growth and validator described in qfilter.h.
 *
 * Slots hold remainders; a fingerprint's run is the stretch of slots that
 * holds every fingerprint of one home slot (quotient).  Runs appear in
 * quotient order, each starting at its home slot or, if that is taken, right
 * after the previous run.  Two bit vectors describe them: occupieds (which
 * home slots have a run) and runends (where each run ends).  The k-th
 * occupied quotient owns the k-th runend, so a run's end is a rank in
 * occupieds followed by a select in runends.  Per 64-slot block an offset
 * (how far runs from earlier blocks spill into it) keeps both local.
 *
 * Copies of one fingerprint are copies of its remainder in its run: a count
 * is the number of copies, a remove deletes one.  This is the rank-select
 * quotient filter's multiset; the counting quotient filter's packing of
 * large counts into remainder slots is not used, so a key added n times
 * takes n slots.
 *
 *-------------------------------------------------------------------------
 */
#include "qfilter.h"
#include "bloom.h"

#include <math.h>
#include <string.h>

/* No run end in the slots searched: only a damaged value has that. */
#define QF_NO_SLOT	INT64_MIN

/* ---------------------------------------------------------------------
 * Slots and blocks
 * ---------------------------------------------------------------------
 */
static inline size_t
block_bytes(int r)
{
	return QF_BLOCK_FIXED + 8 * (size_t) r;
}

static inline uint64_t
home_slots(const QfHeader *h)
{
	return (uint64_t) h->home_blocks * QF_BLOCK_SLOTS;
}

static inline uint64_t
total_slots(const QfHeader *h)
{
	return (uint64_t) h->total_blocks * QF_BLOCK_SLOTS;
}

static inline uint8_t *
block_at(const uint8_t *value, const QfHeader *h, uint64_t block)
{
	return (uint8_t *) value + QF_HEADER_SIZE + block * block_bytes(h->r);
}

static inline uint64_t
occupieds(const uint8_t *value, const QfHeader *h, uint64_t block)
{
	return bf_load_le64(block_at(value, h, block));
}

static inline uint64_t
runends(const uint8_t *value, const QfHeader *h, uint64_t block)
{
	return bf_load_le64(block_at(value, h, block) + 8);
}

static inline uint32_t
block_offset(const uint8_t *value, const QfHeader *h, uint64_t block)
{
	return bf_load_le32(block_at(value, h, block) + 16);
}

static inline bool
is_occupied(const uint8_t *value, const QfHeader *h, uint64_t slot)
{
	return (occupieds(value, h, slot / 64) >> (slot % 64)) & 1;
}

static inline bool
is_runend(const uint8_t *value, const QfHeader *h, uint64_t slot)
{
	return (runends(value, h, slot / 64) >> (slot % 64)) & 1;
}

static inline void
set_bit_word(uint8_t *word, uint64_t slot, bool on)
{
	uint64_t	w = bf_load_le64(word);
	uint64_t	bit = UINT64_C(1) << (slot % 64);

	bf_store_le64(word, on ? (w | bit) : (w & ~bit));
}

static inline void
set_occupied(uint8_t *value, const QfHeader *h, uint64_t slot, bool on)
{
	set_bit_word(block_at(value, h, slot / 64), slot, on);
}

static inline void
set_runend(uint8_t *value, const QfHeader *h, uint64_t slot, bool on)
{
	set_bit_word(block_at(value, h, slot / 64) + 8, slot, on);
}

/*
 * Remainders are r-bit fields packed from bit 0 of the block's remainder
 * area; with r <= 57 a field and its shift fit one 8-byte read, which may
 * run into the next block or the tail padding, never past the value.
 */
static inline uint64_t
remainder_mask(int r)
{
	return r == 0 ? 0 : (~UINT64_C(0) >> (64 - r));
}

static inline uint64_t
get_remainder(const uint8_t *value, const QfHeader *h, uint64_t slot)
{
	uint64_t	bit = (slot % 64) * h->r;
	const uint8_t *p = block_at(value, h, slot / 64) + QF_BLOCK_FIXED + bit / 8;

	return (bf_load_le64(p) >> (bit % 8)) & remainder_mask(h->r);
}

static inline void
set_remainder(uint8_t *value, const QfHeader *h, uint64_t slot, uint64_t remainder)
{
	uint64_t	bit = (slot % 64) * h->r;
	uint8_t    *p = block_at(value, h, slot / 64) + QF_BLOCK_FIXED + bit / 8;
	uint64_t	mask = remainder_mask(h->r) << (bit % 8);

	bf_store_le64(p, (bf_load_le64(p) & ~mask) | (remainder << (bit % 8)));
}

/* Bits 0..j of a word. */
static inline uint64_t
mask_through(uint64_t j)
{
	return j == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (j + 1)) - 1;
}

/* Position of the n-th (from 1) set bit of a word that has at least n. */
static inline int
select_in_word(uint64_t word, int n)
{
	while (--n > 0)
		word &= word - 1;
	return __builtin_ctzll(word);
}

/* The n-th (from 1) run end at or after slot start, or QF_NO_SLOT. */
static BF_ALWAYS_INLINE int64_t
select_runend(const uint8_t *value, const QfHeader *h, uint64_t start, uint64_t n)
{
	uint64_t	block = start / 64;
	uint64_t	word;

	if (block >= h->total_blocks)
		return QF_NO_SLOT;
	word = runends(value, h, block) & ~(mask_through(start % 64) >> 1);
	for (;;)
	{
		uint64_t	here = (uint64_t) bf_popcount64(word);

		if (n <= here)
			return (int64_t) (block * 64 + select_in_word(word, (int) n));
		n -= here;
		if (++block >= h->total_blocks)
			return QF_NO_SLOT;
		word = runends(value, h, block);
	}
}

/*
 * The end of the last run whose home slot is at or before slot x: a slot
 * before x when no run covers x.  Runs of homes before x's block that spill
 * into it end before its start plus its offset; the d-th run end after
 * that belongs to the d-th occupied home of the block up to x.
 */
static BF_ALWAYS_INLINE int64_t
runend_upto(const uint8_t *value, const QfHeader *h, uint64_t x)
{
	uint64_t	block = x / 64;
	uint64_t	start = block * 64 + block_offset(value, h, block);
	uint64_t	homes = occupieds(value, h, block) & mask_through(x % 64);

	if (homes == 0)
		return (int64_t) start - 1;
	return select_runend(value, h, start, (uint64_t) bf_popcount64(homes));
}

/* The first slot at or after slot x that no run covers, or QF_NO_SLOT. */
static int64_t
first_empty_slot(const uint8_t *value, const QfHeader *h, uint64_t x)
{
	while (x < total_slots(h))
	{
		int64_t		end = runend_upto(value, h, x);

		if (end == QF_NO_SLOT)
			return QF_NO_SLOT;
		if (end < (int64_t) x)
			return (int64_t) x;
		x = (uint64_t) end + 1;
	}
	return QF_NO_SLOT;
}

/*
 * The offset a block must have: how many of its first slots runs of earlier
 * homes take.  Reads the previous block's offset, so blocks are redone in
 * increasing order.
 */
static uint32_t
offset_needed(const uint8_t *value, const QfHeader *h, uint64_t block)
{
	int64_t		end;

	if (block == 0)
		return 0;
	end = runend_upto(value, h, block * 64 - 1);
	return end >= (int64_t) (block * 64) ? (uint32_t) (end - (int64_t) block * 64 + 1) : 0;
}

/* Redoes the offsets of the blocks that start in (first, last]. */
static void
refresh_offsets(uint8_t *value, const QfHeader *h, uint64_t first, uint64_t last)
{
	for (uint64_t block = first / 64 + 1; block <= last / 64 && block < h->total_blocks; block++)
		bf_store_le32(block_at(value, h, block) + 16, offset_needed(value, h, block));
}

/* ---------------------------------------------------------------------
 * Sizing and the header
 * ---------------------------------------------------------------------
 */
const char *
qf_status_message(QfStatus status)
{
	switch (status)
	{
		case QF_OK:
			return "Valid";
		case QF_ERR_TRUNCATED:
			return "Value is shorter than the 64-byte header";
		case QF_ERR_MAGIC:
			return "Value does not start with the qfilter magic \"QF\"";
		case QF_ERR_VERSION:
			return "Unsupported format version (this build reads versions 1 and 2)";
		case QF_ERR_KIND:
			return "Unknown key kind or key tag";
		case QF_ERR_RESERVED:
			return "Reserved or environment header field is set where it must be zero";
		case QF_ERR_CHECKSUM:
			return "Header checksum does not match";
		case QF_ERR_SIZE:
			return "Block count or remainder width does not match the capacity and false-positive rate";
		case QF_ERR_LENGTH:
			return "Slot array length does not match the header";
		case QF_ERR_CAPACITY:
			return "Capacity must be at least 1";
		case QF_ERR_FPR:
			return "False-positive rate must be in (0, 0.5]";
		case QF_ERR_FPR_UNREACHABLE:
			return "False-positive rate is too low for this capacity (fingerprints are at most 63 bits)";
		case QF_ERR_TOO_LARGE:
			return "Value would be larger than a qfilter can be (750000000 bytes)";
		case QF_ERR_SLOTS:
			return "Slots are inconsistent (runs, offsets or remainders)";
		case QF_ERR_COUNT:
			return "Count does not match the slots in use";
		case QF_ERR_FULL:
			return "Filter has no free slot";
		case QF_ERR_LIMIT:
			return "Filter cannot grow: its fingerprints have no remainder bits left, or no larger size holds their runs";
		case QF_ERR_BODY_CHECKSUM:
			return "Checksum of the slots does not match: the value is damaged";
	}
	return "unknown status";
}

/*
 * Runs of the last home slots spill past them; the spare blocks give them
 * room.  Cluster lengths grow like the square root of the slot count near
 * full load, hence the same allowance as the reference implementation.
 */
static uint32_t
spare_blocks(uint32_t home_blocks)
{
	double		slots = 10.0 * sqrt((double) home_blocks * QF_BLOCK_SLOTS);

	return 2 + (uint32_t) (slots / QF_BLOCK_SLOTS);
}

size_t
qf_value_bytes(const QfHeader *header)
{
	return QF_HEADER_SIZE + (size_t) header->total_blocks * block_bytes(header->r) +
		QF_TAIL_PADDING;
}

/* Sets home and total blocks, refusing a value past the size cap. */
static QfStatus
set_blocks(QfHeader *header, uint64_t home_blocks, int r)
{
	uint64_t	total;

	if (home_blocks > UINT32_MAX)
		return QF_ERR_TOO_LARGE;
	total = home_blocks + spare_blocks((uint32_t) home_blocks);

	if (total > UINT32_MAX ||
		QF_HEADER_SIZE + total * block_bytes(r) + QF_TAIL_PADDING > BF_MAX_VALUE_BYTES)
		return QF_ERR_TOO_LARGE;
	header->home_blocks = (uint32_t) home_blocks;
	header->total_blocks = (uint32_t) total;
	header->r = (uint8_t) r;
	return QF_OK;
}

QfStatus
qf_size_for(uint64_t capacity, double fpr, QfHeader *header)
{
	double		home_blocks;
	double		universe;
	int			r = 0;

	if (capacity < 1)
		return QF_ERR_CAPACITY;
	if (!(fpr > 0.0 && fpr <= 0.5))
		return QF_ERR_FPR;
	home_blocks = ceil(ceil((double) capacity / QF_MAX_LOAD) / QF_BLOCK_SLOTS);
	if (home_blocks > UINT32_MAX)
		return QF_ERR_TOO_LARGE;

	/* fewest remainder bits that put the rate at capacity at the target */
	universe = home_blocks * QF_BLOCK_SLOTS;
	while ((double) capacity > fpr * universe)
	{
		universe *= 2;
		r++;
	}
	if (r > QF_MAX_R || universe > 0x1p63)
		return QF_ERR_FPR_UNREACHABLE;
	return set_blocks(header, (uint64_t) home_blocks, r);
}

/* The most fingerprints that fit the home slots at the highest load. */
static uint64_t
load_limit(const QfHeader *header)
{
	return (uint64_t) floor(QF_MAX_LOAD * (double) home_slots(header));
}

QfStatus
qf_grown_header(const QfHeader *header, QfHeader *grown)
{
	if (header->r == 0)
		return QF_ERR_LIMIT;
	*grown = *header;
	grown->count = 0;
	return set_blocks(grown, (uint64_t) header->home_blocks * 2, header->r - 1);
}

QfStatus
qf_header_for_count(const QfHeader *params, uint64_t count, QfHeader *sized)
{
	QfStatus	status;

	*sized = *params;
	sized->count = 0;
	status = qf_size_for(params->capacity, params->fpr, sized);
	while (status == QF_OK && count > load_limit(sized))
	{
		QfHeader	smaller = *sized;

		status = qf_grown_header(&smaller, sized);
	}
	return status;
}

/*
 * Version 1 covers bytes 0..55; version 2 also the body check at 60..63,
 * so that a damaged check is told from a damaged body.
 */
static uint32_t
header_checksum(const uint8_t *value, uint8_t version)
{
	uint8_t		covered[60];

	if (version == 1)
		return (uint32_t) bf_hash(value, 56, 0);
	memcpy(covered, value, 56);
	memcpy(covered + 56, value + 60, 4);
	return (uint32_t) bf_hash(covered, sizeof(covered), 0);
}

/* bloom's body sum (bloom.h) over everything after the header. */
static uint32_t
body_check(const uint8_t *value, const QfHeader *header)
{
	return bf_body_sum(value + QF_HEADER_SIZE, qf_value_bytes(header) - QF_HEADER_SIZE, 0);
}

/*
 * Every producer's last step, so no value leaves without its body check:
 * the slots move on every insert, so the check is the sum over the whole
 * value, computed here once per batch (a value is written once per call).
 */
void
qf_write_header(uint8_t *value, const QfHeader *header)
{
	QfHeader	finished = *header;

	finished.version = QF_FORMAT_VERSION;
	finished.body_check = body_check(value, header);
	qf_encode_header(value, &finished);
}

void
qf_encode_header(uint8_t *value, const QfHeader *header)
{
	memset(value, 0, QF_HEADER_SIZE);
	value[0] = QF_MAGIC_0;
	value[1] = QF_MAGIC_1;
	value[2] = header->version;
	value[3] = header->r;
	value[4] = header->identity.kind;
	value[5] = header->identity.env_encoding;
	bf_store_le32(value + 8, header->identity.tag);
	bf_store_le32(value + 12, header->identity.env_locale);
	bf_store_le64(value + 16, header->seed);
	bf_store_le64(value + 24, header->capacity);
	memcpy(value + 32, &header->fpr, 8);	/* IEEE 754, as bloom stores it */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	bf_store_le64(value + 32, bf_load_le64(value + 32));
#endif
	bf_store_le64(value + 40, header->count);
	bf_store_le32(value + 48, header->home_blocks);
	bf_store_le32(value + 52, header->total_blocks);
	if (header->version >= 2)
		bf_store_le32(value + 60, header->body_check);
	bf_store_le32(value + 56, header_checksum(value, header->version));
}

QfStatus
qf_read_header(const uint8_t *value, size_t len, QfHeader *header)
{
	QfHeader	base;
	QfStatus	status;
	uint32_t	home;
	int			r;

	memset(header, 0, sizeof(*header));
	if (len < QF_HEADER_SIZE)
		return QF_ERR_TRUNCATED;
	if (value[0] != QF_MAGIC_0 || value[1] != QF_MAGIC_1)
		return QF_ERR_MAGIC;
	if (value[2] < QF_FORMAT_VERSION_MIN || value[2] > QF_FORMAT_VERSION)
		return QF_ERR_VERSION;
	if (bf_load_le32(value + 56) != header_checksum(value, value[2]))
		return QF_ERR_CHECKSUM;
	header->version = value[2];
	header->r = value[3];
	header->identity.kind = value[4];
	header->identity.env_encoding = value[5];
	header->identity.tag = bf_load_le32(value + 8);
	header->identity.env_locale = bf_load_le32(value + 12);
	header->seed = bf_load_le64(value + 16);
	header->capacity = bf_load_le64(value + 24);
	{
		uint64_t	bits = bf_load_le64(value + 32);

		memcpy(&header->fpr, &bits, 8);
	}
	header->count = bf_load_le64(value + 40);
	header->home_blocks = bf_load_le32(value + 48);
	header->total_blocks = bf_load_le32(value + 52);
	header->body_check = header->version >= 2 ? bf_load_le32(value + 60) : 0;

	if (value[6] != 0 || value[7] != 0 ||
		(header->version == 1 && bf_load_le32(value + 60) != 0))
		return QF_ERR_RESERVED;
	/* the key identity follows bloom's rules, as a version 2 header's */
	if (!bf_key_identity_kind_valid(&header->identity))
		return QF_ERR_KIND;
	if (!bf_key_identity_environment_valid(&header->identity, true))
		return QF_ERR_RESERVED;

	/* the size must be the sizing's for (capacity, fpr), doubled g times */
	status = qf_size_for(header->capacity, header->fpr, &base);
	if (status != QF_OK)
		return status;
	for (home = base.home_blocks, r = base.r;
		 home < header->home_blocks && r > 0 && home <= UINT32_MAX / 2;
		 home *= 2, r--)
		;
	if (home != header->home_blocks || r != header->r ||
		header->total_blocks != header->home_blocks + spare_blocks(header->home_blocks))
		return QF_ERR_SIZE;
	if (len != qf_value_bytes(header))
		return QF_ERR_LENGTH;
	if (header->count > load_limit(header) ||
		(header->identity.kind == BF_KIND_NONE && header->count != 0))
		return QF_ERR_COUNT;
	return QF_OK;
}

void
qf_init(uint8_t *value, const QfHeader *header, const BfHooks *hooks)
{
	bf_zero(value, qf_value_bytes(header), hooks);
	qf_write_header(value, header);
}

bool
qf_compatible(const QfHeader *a, const QfHeader *b)
{
	return a->capacity == b->capacity &&
		a->fpr == b->fpr && a->seed == b->seed &&
		qf_universe(a) == qf_universe(b);
}


/* ---------------------------------------------------------------------
 * The validator: every invariant the operations rely on, in one pass.
 * ---------------------------------------------------------------------
 */

/* Checks blocks [from, to) have the offsets that runs ending at last_end give. */
static bool
offsets_match(const uint8_t *value, const QfHeader *h, uint64_t from, uint64_t to,
			  int64_t last_end)
{
	for (uint64_t block = from; block < to; block++)
	{
		int64_t		start = (int64_t) block * 64;
		uint32_t	want = last_end >= start ? (uint32_t) (last_end - start + 1) : 0;

		if (block_offset(value, h, block) != want)
			return false;
	}
	return true;
}

/* Unused slots in [from, to) hold nothing: no remainder, no run end. */
static bool
slots_empty(const uint8_t *value, const QfHeader *h, uint64_t from, uint64_t to)
{
	for (uint64_t s = from; s < to; s++)
		if (get_remainder(value, h, s) != 0 || is_runend(value, h, s))
			return false;
	return true;
}

/* One run: its end must be the next run end, its remainders in order. */
static bool
run_valid(const uint8_t *value, const QfHeader *h, uint64_t start, uint64_t end)
{
	for (uint64_t s = start; s < end; s++)
		if (is_runend(value, h, s) || get_remainder(value, h, s) > get_remainder(value, h, s + 1))
			return false;
	return is_runend(value, h, end);
}

static QfStatus
slots_valid(const uint8_t *value, const QfHeader *h)
{
	uint64_t	next_free = 0;	/* first slot after the previous run */
	int64_t		last_end = -1;
	uint64_t	blocks_checked = 0; /* offsets checked below this block */
	uint64_t	used = 0;

	for (uint64_t block = 0; block < h->total_blocks; block++)
	{
		uint64_t	homes = occupieds(value, h, block);

		if (block >= h->home_blocks && homes != 0)
			return QF_ERR_SLOTS;
		while (homes != 0)
		{
			uint64_t	q = block * 64 + (uint64_t) __builtin_ctzll(homes);
			uint64_t	start = q > next_free ? q : next_free;
			int64_t		end;

			homes &= homes - 1;
			/* offsets of blocks up to q's see runs of earlier homes only */
			if (!offsets_match(value, h, blocks_checked, q / 64 + 1, last_end))
				return QF_ERR_SLOTS;
			blocks_checked = q / 64 + 1;
			if (start >= total_slots(h) || !slots_empty(value, h, next_free, start))
				return QF_ERR_SLOTS;
			end = select_runend(value, h, start, 1);
			if (end == QF_NO_SLOT || !run_valid(value, h, start, (uint64_t) end))
				return QF_ERR_SLOTS;
			used += (uint64_t) end - start + 1;
			last_end = end;
			next_free = (uint64_t) end + 1;
		}
	}
	if (!offsets_match(value, h, blocks_checked, h->total_blocks, last_end) ||
		!slots_empty(value, h, next_free, total_slots(h)))
		return QF_ERR_SLOTS;
	if (used != h->count)
		return QF_ERR_COUNT;
	return QF_OK;
}

QfStatus
qf_validate(const uint8_t *value, size_t len, QfHeader *header)
{
	QfStatus	status = qf_read_header(value, len, header);

	if (status != QF_OK)
		return status;
	for (size_t i = len - QF_TAIL_PADDING; i < len; i++)
		if (value[i] != 0)
			return QF_ERR_RESERVED;
	if (header->version >= 2 && header->body_check != body_check(value, header))
		return QF_ERR_BODY_CHECKSUM;
	return slots_valid(value, header);
}

/* ---------------------------------------------------------------------
 * Operations
 * ---------------------------------------------------------------------
 */
QfStatus
qf_insert(uint8_t *value, QfHeader *h, uint64_t fingerprint)
{
	uint64_t	q = fingerprint >> h->r;
	uint64_t	remainder = fingerprint & remainder_mask(h->r);
	bool		new_run = !is_occupied(value, h, q);
	int64_t		end = runend_upto(value, h, q);
	uint64_t	pos;
	int64_t		empty;

	if (h->count >= load_limit(h))
		return QF_ERR_FULL;
	if (end == QF_NO_SLOT)
		return QF_ERR_SLOTS;

	if (new_run)
		pos = end < (int64_t) q ? q : (uint64_t) end + 1;
	else
	{
		/*
		 * After every copy of a remainder not above this one, found from
		 * the run's end: copies of one key then cost nothing to step over.
		 */
		uint64_t	s = (uint64_t) end;

		for (;;)
		{
			if (get_remainder(value, h, s) <= remainder)
			{
				pos = s + 1;
				break;
			}
			if (s == q || is_runend(value, h, s - 1))
			{
				pos = s;
				break;
			}
			s--;
		}
	}
	empty = first_empty_slot(value, h, pos);
	if (empty == QF_NO_SLOT)
		return QF_ERR_FULL;

	for (uint64_t s = (uint64_t) empty; s > pos; s--)
	{
		set_remainder(value, h, s, get_remainder(value, h, s - 1));
		set_runend(value, h, s, is_runend(value, h, s - 1));
	}
	set_remainder(value, h, pos, remainder);
	if (new_run)
	{
		set_occupied(value, h, q, true);
		set_runend(value, h, pos, true);
	}
	else if (pos == (uint64_t) end + 1)
	{
		/* the new copy ends the run */
		set_runend(value, h, pos - 1, false);
		set_runend(value, h, pos, true);
	}
	else
		set_runend(value, h, pos, false);
	refresh_offsets(value, h, q, (uint64_t) empty);
	h->count++;
	return QF_OK;
}

/* The slot of a copy of remainder in the run of q ending at end, or -1. */
static BF_ALWAYS_INLINE int64_t
find_in_run(const uint8_t *value, const QfHeader *h, uint64_t q, uint64_t end,
			uint64_t remainder)
{
	for (uint64_t s = end;; s--)
	{
		uint64_t	here = get_remainder(value, h, s);

		if (here == remainder)
			return (int64_t) s;
		if (here < remainder || s == q || is_runend(value, h, s - 1))
			return -1;
	}
}

bool
qf_contains(const uint8_t *value, const QfHeader *h, uint64_t fingerprint)
{
	uint64_t	q = fingerprint >> h->r;
	int64_t		end;

	if (!is_occupied(value, h, q))
		return false;
	end = runend_upto(value, h, q);
	if (end < (int64_t) q)
		return false;			/* damaged; validation would have said so */
	return find_in_run(value, h, q, (uint64_t) end, fingerprint & remainder_mask(h->r)) >= 0;
}

void
qf_prefetch(const uint8_t *value, const QfHeader *h, uint64_t fingerprint)
{
#if defined(__GNUC__) || defined(__clang__)
	uint64_t	q = fingerprint >> h->r;
	const uint8_t *block = block_at(value, h, q / 64);

	__builtin_prefetch(block);
	__builtin_prefetch(block + QF_BLOCK_FIXED + (q % 64) * h->r / 8);
#else
	(void) value;
	(void) h;
	(void) fingerprint;
#endif
}

uint64_t
qf_count(const uint8_t *value, const QfHeader *h, uint64_t fingerprint)
{
	uint64_t	q = fingerprint >> h->r;
	uint64_t	remainder = fingerprint & remainder_mask(h->r);
	int64_t		end;
	int64_t		s;
	uint64_t	count = 0;

	if (!is_occupied(value, h, q))
		return 0;
	end = runend_upto(value, h, q);
	if (end < (int64_t) q)
		return 0;
	s = find_in_run(value, h, q, (uint64_t) end, remainder);
	if (s < 0)
		return 0;
	/* copies are adjacent; find_in_run found the last one */
	for (;;)
	{
		count++;
		if ((uint64_t) s == q || is_runend(value, h, (uint64_t) s - 1) ||
			get_remainder(value, h, (uint64_t) s - 1) != remainder)
			return count;
		s--;
	}
}

/* The next occupied home slot at or after q, or home_slots(h). */
static uint64_t
next_home(const uint8_t *value, const QfHeader *h, uint64_t q)
{
	while (q < home_slots(h))
	{
		uint64_t	homes = occupieds(value, h, q / 64) & ~(mask_through(q % 64) >> 1);

		if (homes != 0)
			return q / 64 * 64 + (uint64_t) __builtin_ctzll(homes);
		q = (q / 64 + 1) * 64;
	}
	return home_slots(h);
}

/*
 * The last slot of the stretch that moves back one slot when a slot of the
 * run of q (ending at end) is freed: the rest of that run, and each
 * following run that sits after its home slot.
 */
static uint64_t
last_slot_to_move(const uint8_t *value, const QfHeader *h, uint64_t q, uint64_t end)
{
	uint64_t	last = end;

	/* a run moves if its home is at or before the slot it starts after */
	for (uint64_t home = next_home(value, h, q + 1); home <= last && home < home_slots(h);
		 home = next_home(value, h, home + 1))
	{
		int64_t		next_end = select_runend(value, h, last + 1, 1);

		if (next_end == QF_NO_SLOT)
			break;
		last = (uint64_t) next_end;
	}
	return last;
}

bool
qf_remove(uint8_t *value, QfHeader *h, uint64_t fingerprint)
{
	uint64_t	q = fingerprint >> h->r;
	int64_t		end;
	int64_t		found;
	bool		only;
	uint64_t	last;

	if (!is_occupied(value, h, q))
		return false;
	end = runend_upto(value, h, q);
	if (end < (int64_t) q)
		return false;
	found = find_in_run(value, h, q, (uint64_t) end, fingerprint & remainder_mask(h->r));
	if (found < 0)
		return false;
	/* the run's only slot: its end, and its start (its home or a run's end before) */
	only = (uint64_t) found == (uint64_t) end &&
		((uint64_t) found == q || is_runend(value, h, (uint64_t) found - 1));
	last = last_slot_to_move(value, h, q, (uint64_t) end);

	for (uint64_t s = (uint64_t) found; s < last; s++)
	{
		set_remainder(value, h, s, get_remainder(value, h, s + 1));
		set_runend(value, h, s, is_runend(value, h, s + 1));
	}
	set_remainder(value, h, last, 0);
	set_runend(value, h, last, false);
	if (only)
		set_occupied(value, h, q, false);	/* its only copy: the run is gone */
	else if ((uint64_t) found == (uint64_t) end)
		set_runend(value, h, (uint64_t) end - 1, true);
	refresh_offsets(value, h, q, last);
	h->count--;
	return true;
}

void
qf_cursor_start(QfCursor *cursor)
{
	memset(cursor, 0, sizeof(*cursor));
}

bool
qf_cursor_next(const uint8_t *value, const QfHeader *h, QfCursor *cursor,
			   uint64_t *fingerprint)
{
	if (!cursor->in_run || cursor->slot > cursor->run_end)
	{
		uint64_t	q = next_home(value, h, cursor->in_run ? cursor->quotient + 1 : cursor->quotient);
		uint64_t	start;
		int64_t		end;

		if (q >= home_slots(h))
			return false;
		start = cursor->in_run && cursor->run_end + 1 > q ? cursor->run_end + 1 : q;
		end = select_runend(value, h, start, 1);
		if (end == QF_NO_SLOT)
			return false;
		cursor->quotient = q;
		cursor->slot = start;
		cursor->run_end = (uint64_t) end;
		cursor->in_run = true;
	}
	*fingerprint = cursor->quotient << h->r | get_remainder(value, h, cursor->slot);
	cursor->slot++;
	return true;
}

/*
 * Appends fingerprints in increasing order to an empty filter: each goes to
 * the first free slot at or after its home, so nothing shifts, and the
 * offsets are set once at the end.  Bulk builds (aggregates, unions,
 * growing) go through here rather than qf_insert.
 */
void
qf_append_start(QfAppender *app)
{
	app->next_free = 0;
	app->last_home = 0;
	app->last_slot = -1;
}

QfStatus
qf_append(uint8_t *dst, QfHeader *h, QfAppender *app, uint64_t fingerprint)
{
	uint64_t	q = fingerprint >> h->r;
	uint64_t	slot;

	if (h->count >= load_limit(h))
		return QF_ERR_FULL;
	if (app->last_slot < 0 || q != app->last_home)
	{
		if (app->last_slot >= 0)
			set_runend(dst, h, (uint64_t) app->last_slot, true);
		set_occupied(dst, h, q, true);
		slot = q > app->next_free ? q : app->next_free;
	}
	else
		slot = app->next_free;
	if (slot >= total_slots(h))
		return QF_ERR_FULL;
	set_remainder(dst, h, slot, fingerprint & remainder_mask(h->r));
	app->last_slot = (int64_t) slot;
	app->last_home = q;
	app->next_free = slot + 1;
	h->count++;
	return QF_OK;
}

void
qf_append_finish(uint8_t *dst, const QfHeader *h, const QfAppender *app)
{
	if (app->last_slot >= 0)
	{
		set_runend(dst, h, (uint64_t) app->last_slot, true);
		refresh_offsets(dst, h, 0, total_slots(h) - 1);
	}
}

QfStatus
qf_build_sorted(uint8_t *dst, QfHeader *dst_header, const uint64_t *fingerprints, size_t n)
{
	QfAppender	app;

	if (dst_header->count != 0)
		return QF_ERR_COUNT;
	qf_append_start(&app);
	for (size_t i = 0; i < n; i++)
	{
		QfStatus	status = qf_append(dst, dst_header, &app, fingerprints[i]);

		if (status != QF_OK)
			return status;
	}
	qf_append_finish(dst, dst_header, &app);
	return QF_OK;
}

void
qf_merge_start(QfMerge *m, const uint8_t *a, const QfHeader *a_header,
			   const uint8_t *b, const QfHeader *b_header, bool clear_dst)
{
	memset(m, 0, sizeof(*m));
	qf_append_start(&m->app);
	m->phase = clear_dst ? QF_MERGE_CLEAR : QF_MERGE_APPEND;
	qf_cursor_start(&m->ca);
	qf_cursor_start(&m->cb);
	m->has_a = qf_cursor_next(a, a_header, &m->ca, &m->fa);
	m->has_b = b != NULL && qf_cursor_next(b, b_header, &m->cb, &m->fb);
}

/*
 * One step of a merge: clearing dst (64 bytes a unit of work), appending
 * the inputs' fingerprints in order (one a unit), then redoing the offsets
 * (a block a unit).  Each phase is resumable where it stopped.
 */
QfStatus
qf_merge_step(QfMerge *m, uint8_t *dst, QfHeader *dst_header, const uint8_t *a,
			  const QfHeader *a_header, const uint8_t *b, const QfHeader *b_header,
			  uint64_t budget, bool *done)
{
	*done = false;
	if (m->phase == QF_MERGE_CLEAR)
	{
		uint64_t	room = qf_value_bytes(dst_header) - m->progress;
		uint64_t	chunk = budget > room / 64 ? room : budget * 64;

		memset(dst + m->progress, 0, chunk);
		m->progress += chunk;
		if (chunk < room)
			return QF_OK;
		dst_header->count = 0;
		qf_write_header(dst, dst_header);
		m->phase = QF_MERGE_APPEND;
		return QF_OK;
	}
	if (m->phase == QF_MERGE_APPEND)
	{
		if (dst_header->count != 0 && m->app.last_slot < 0)
			return QF_ERR_COUNT;
		while ((m->has_a || m->has_b) && budget-- > 0)
		{
			bool		take_a = m->has_a && (!m->has_b || m->fa <= m->fb);
			QfStatus	status = qf_append(dst, dst_header, &m->app,
												   take_a ? m->fa : m->fb);

			if (status != QF_OK)
				return status;
			if (take_a)
				m->has_a = qf_cursor_next(a, a_header, &m->ca, &m->fa);
			else
				m->has_b = qf_cursor_next(b, b_header, &m->cb, &m->fb);
		}
		if (m->has_a || m->has_b)
			return QF_OK;
		if (m->app.last_slot < 0)
		{
			*done = true;
			return QF_OK;
		}
		set_runend(dst, dst_header, (uint64_t) m->app.last_slot, true);
		m->phase = QF_MERGE_OFFSETS;
		m->progress = 1;		/* block 0's offset is always 0 */
		return QF_OK;
	}
	{
		/* blocks [from, to), as refresh_offsets counts them from a slot */
		uint64_t	blocks = dst_header->total_blocks;
		uint64_t	from = m->progress;
		uint64_t	step = budget / 64 + 1;
		uint64_t	to = from >= blocks || step >= blocks - from ? blocks : from + step;

		if (from < to)
			refresh_offsets(dst, dst_header, (from - 1) * 64, (to - 1) * 64 + 63);
		m->progress = to;
		*done = to >= blocks;
		return QF_OK;
	}
}

QfStatus
qf_merge(uint8_t *dst, QfHeader *dst_header, const uint8_t *a, const QfHeader *a_header,
		 const uint8_t *b, const QfHeader *b_header)
{
	QfMerge		m;
	bool		done = false;

	if (dst_header->count != 0)
		return QF_ERR_COUNT;
	qf_merge_start(&m, a, a_header, b, b_header, false);
	while (!done)
	{
		QfStatus	status = qf_merge_step(&m, dst, dst_header, a, a_header, b, b_header,
										   UINT64_MAX / 2, &done);

		if (status != QF_OK)
			return status;
	}
	return QF_OK;
}

uint64_t
qf_distinct(const uint8_t *value, const QfHeader *header)
{
	QfCursor	cursor;
	uint64_t	fingerprint;
	uint64_t	previous = 0;
	uint64_t	distinct = 0;

	qf_cursor_start(&cursor);
	while (qf_cursor_next(value, header, &cursor, &fingerprint))
	{
		if (distinct == 0 || fingerprint != previous)
			distinct++;
		previous = fingerprint;
	}
	return distinct;
}

double
qf_estimated_fpr(const QfHeader *header, uint64_t distinct)
{
	/* a random fingerprint meets one of the distinct ones stored */
	return -expm1((double) distinct * log1p(-1.0 / (double) qf_universe(header)));
}

/*
 * Least-significant-digit radix sort, a byte per pass, skipping passes
 * where every key has the same byte: the aggregates sort millions of
 * hashes, several times faster than a comparison sort.  tmp has room for n.
 */
void
qf_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n)
{
	uint64_t   *from = keys;
	uint64_t   *to = tmp;

	for (int shift = 0; shift < 64; shift += 8)
	{
		size_t		count[256] = {0};
		size_t		sum = 0;

		for (size_t i = 0; i < n; i++)
			count[(from[i] >> shift) & 0xFF]++;
		if (n == 0 || count[(from[0] >> shift) & 0xFF] == n)
			continue;
		for (int b = 0; b < 256; b++)
		{
			size_t		c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xFF]++] = from[i];
		{
			uint64_t   *swap = from;

			from = to;
			to = swap;
		}
	}
	if (from != keys)
		memcpy(keys, from, n * sizeof(uint64_t));
}
