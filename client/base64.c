/*-------------------------------------------------------------------------
 *
 * base64.c
 *	  The base64 codec of the client library, for the text form of a
 *	  filter.  The server uses PostgreSQL's own (src/common/base64.c); the
 *	  client cannot link that, so this one is written to accept exactly
 *	  the same inputs, quirks included, since a text value the client
 *	  loads must be one the server would load too:
 *	    - no blanks or line breaks anywhere, and nothing outside the
 *	      alphabet (no URL-safe variant);
 *	    - every group of four characters is complete (padding is not
 *	      optional);
 *	    - "=" is allowed only as the third or fourth character of a group,
 *	      the first time; it then fixes how many bytes every later group
 *	      yields (1 or 2), and later "=" count as "A".  Nothing canonical
 *	      is required of the bits a short group leaves over.
 *	  test/client checks this against the server's text input on damaged
 *	  and quirky strings.
 *
 *-------------------------------------------------------------------------
 */
#include "base64.h"

static const char alphabet[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
bfc_base64_encode(const uint8_t *bytes, size_t len, char *out)
{
	size_t		i = 0;

	for (; i + 3 <= len; i += 3)
	{
		uint32_t	group = (uint32_t) bytes[i] << 16 | (uint32_t) bytes[i + 1] << 8 | bytes[i + 2];

		*out++ = alphabet[group >> 18];
		*out++ = alphabet[(group >> 12) & 63];
		*out++ = alphabet[(group >> 6) & 63];
		*out++ = alphabet[group & 63];
	}
	if (i < len)
	{
		uint32_t	group = (uint32_t) bytes[i] << 16 |
			(i + 1 < len ? (uint32_t) bytes[i + 1] << 8 : 0);

		*out++ = alphabet[group >> 18];
		*out++ = alphabet[(group >> 12) & 63];
		*out++ = i + 1 < len ? alphabet[(group >> 6) & 63] : '=';
		*out++ = '=';
	}
}

/* The value of a base64 character, or -1. */
static int
sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int64_t
bfc_base64_decode(const char *text, size_t len, uint8_t *out)
{
	uint8_t    *start = out;
	uint32_t	group = 0;
	int			in_group = 0;	/* characters of the current group */
	int			yield = 3;		/* bytes per group; 1 or 2 after an "=" */

	for (size_t i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) text[i];
		int			value;

		if (c == '=')
		{
			if (yield == 3)
			{
				if (in_group == 2)
					yield = 1;
				else if (in_group == 3)
					yield = 2;
				else
					return -1;
			}
			value = 0;
		}
		else if ((value = sextet(c)) < 0)
			return -1;
		group = group << 6 | (uint32_t) value;
		if (++in_group == 4)
		{
			*out++ = (uint8_t) (group >> 16);
			if (yield >= 2)
				*out++ = (uint8_t) (group >> 8);
			if (yield == 3)
				*out++ = (uint8_t) group;
			group = 0;
			in_group = 0;
		}
	}
	if (in_group != 0)
		return -1;
	return out - start;
}
