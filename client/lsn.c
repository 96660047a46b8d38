/*-------------------------------------------------------------------------
 *
 * lsn.c
 *	  WAL positions read and written as pg_lsn's text (lsn.h).
 *
 *-------------------------------------------------------------------------
 */
#include "lsn.h"

#include <inttypes.h>
#include <stdio.h>

#include "keyparse.h"

/* One group of 1 to 8 hex digits at *text, ending at stop; advances text. */
static bool
parse_hex_group(const char **text, char stop, uint32_t *value)
{
	const char *p = *text;
	int			digits = 0;

	*value = 0;
	while (*p != stop)
	{
		int			digit = bfc_hex_digit(*p);

		if (digit < 0 || ++digits > 8)
			return false;
		*value = (*value << 4) | (uint32_t) digit;
		p++;
	}
	*text = p;
	return digits > 0;
}

bool
bfc_lsn_parse(const char *text, uint64_t *lsn)
{
	uint32_t	high;
	uint32_t	low;

	if (text == NULL || !parse_hex_group(&text, '/', &high))
		return false;
	text++;						/* the slash */
	if (!parse_hex_group(&text, '\0', &low))
		return false;
	*lsn = ((uint64_t) high << 32) | low;
	return true;
}

void
bfc_lsn_format(uint64_t lsn, char *out)
{
	snprintf(out, BFC_LSN_TEXT_SIZE, "%" PRIX32 "/%" PRIX32, (uint32_t) (lsn >> 32),
			 (uint32_t) lsn);
}
