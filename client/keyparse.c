/*-------------------------------------------------------------------------
 *
 * keyparse.c
 *	  Keys spelled as text, read the way the server's input functions read
 *	  them, so that a key a script or a CLI user types is the value the
 *	  server would have hashed: numbers (numeric_in), floats (float8in),
 *	  booleans (boolin), uuids (uuid_in), bytea (byteain), and dates and
 *	  timestamps in ISO 8601.  Also version 1's text form of numbers.
 *
 * Exactness before coverage
 * -------------------------
 * A key read differently from the server would be a false negative, so
 * each reader accepts the syntax of PostgreSQL 15's input function, and
 * where that is not certain it refuses rather than guesses:
 *	- numbers: numeric_in's syntax, not PostgreSQL 16's additions
 *	  (1_000, 0x1F), which are refused;
 *	- floats: float8in's, through strtod in the C locale, whatever the
 *	  application's LC_NUMERIC;
 *	- dates and timestamps: ISO 8601 only (2024-05-01, 2024-05-01
 *	  12:30:00.25, with T or a blank), years 1 to 9999, at most 6
 *	  fractional digits (the server rounds more), no 24:00 or leap second;
 *	  a timestamptz needs an explicit UTC offset (Z, +05, +05:30, +0530),
 *	  since without one the server applies its TimeZone setting, and a
 *	  timestamp refuses one, which the server would silently ignore.
 *	  infinity, -infinity and epoch are read too.
 *
 * The canonical forms themselves are the core's (canonical.h): nothing
 * here hashes.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include "keyparse.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canonical.h"

void
bfc_fail(bfc_error *err, bfc_code code, const char *format, ...)
{
	va_list		args;

	if (err == NULL)
		return;
	err->code = code;
	va_start(args, format);
	vsnprintf(err->message, sizeof(err->message), format, args);
	va_end(args);
}

/* isspace() of the C locale, as the server's input functions use it. */
static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char
lower_ascii(char c)
{
	return c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
}

/* Whether s[0..len) starts with word, ignoring ASCII case. */
static bool
starts_with_ci(const char *s, size_t len, const char *word)
{
	size_t		n = strlen(word);

	if (len < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower_ascii(s[i]) != lower_ascii(word[i]))
			return false;
	return true;
}

static void
trim_spaces(const char **text, size_t *len)
{
	while (*len > 0 && is_space(**text))
	{
		(*text)++;
		(*len)--;
	}
	while (*len > 0 && is_space((*text)[*len - 1]))
		(*len)--;
}

/* At most this much of a bad key is quoted in an error. */
#define QUOTED 60

/* ---------------------------------------------------------------------
 * Numbers
 * ---------------------------------------------------------------------
 */

/* numeric's limits: an int16 weight, a display scale of at most 16383 */
#define NUMERIC_WEIGHT_LIMIT 32767
#define NUMERIC_DSCALE_LIMIT 16383

static int
number_syntax(const char *text, size_t len, bfc_error *err)
{
	bfc_fail(err, BFC_ERR_KEY, "invalid input syntax for type numeric: \"%.*s\"",
			 (int) (len > QUOTED ? QUOTED : len), text);
	return -1;
}

void
bfc_number_release(BfcNumber *number)
{
	free(number->heap);
	number->heap = NULL;
}

static int
number_special(const char *rest, size_t len, uint16_t sign, BfcNumber *out)
{
	for (size_t i = 0; i < len; i++)
		if (!is_space(rest[i]))
			return -1;
	out->sign = sign;
	out->weight = 0;
	out->ndigits = 0;
	out->digits = out->local;
	return 0;
}

static int
number_overflow(const char *text, size_t len, bfc_error *err)
{
	bfc_fail(err, BFC_ERR_KEY, "value overflows numeric format: \"%.*s\"",
			 (int) (len > QUOTED ? QUOTED : len), text);
	return -1;
}

/*
 * NaN and the infinities, spelled as numeric_in takes them, alone between
 * blanks: 1 and *out set when p starts with one, -1 if something follows
 * it, 0 when it is no such word.
 */
static int
number_special_word(const char *p, const char *end, BfcNumber *out)
{
	static const struct
	{
		const char *word;
		uint16_t	sign;
	}			specials[] = {
		/* in numeric_in's order: "Infinity" before its prefix "inf" */
		{"NaN", BF_NUMERIC_NAN}, {"Infinity", BF_NUMERIC_PINF},
		{"+Infinity", BF_NUMERIC_PINF}, {"-Infinity", BF_NUMERIC_NINF},
		{"inf", BF_NUMERIC_PINF}, {"+inf", BF_NUMERIC_PINF}, {"-inf", BF_NUMERIC_NINF},
	};

	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		if (starts_with_ci(p, end - p, specials[i].word))
		{
			size_t		n = strlen(specials[i].word);

			return number_special(p + n, end - p - n, specials[i].sign, out) == 0 ? 1 : -1;
		}
	return 0;
}

/* A number's spelling, read: its sign, digits and exponent. */
typedef struct NumberSpelling
{
	bool		negative;
	const char *first_digit;
	int64_t		int_digits;		/* before the point */
	int64_t		frac_digits;	/* after it */
	int64_t		exponent;
} NumberSpelling;

/*
 * The exponent after "e" at *p, as strtol reads it (blanks and a sign may
 * precede the digits): 0, -1 for no digits, -2 when it overflows.
 */
static int
read_exponent(const char **p, const char *end, int64_t *exponent)
{
	bool		negative = false;
	const char *digits;

	while (*p < end && is_space(**p))
		(*p)++;
	if (*p < end && (**p == '+' || **p == '-'))
		negative = *(*p)++ == '-';
	digits = *p;
	for (; *p < end && is_digit(**p); (*p)++)
		if (*exponent < INT_MAX)
			*exponent = *exponent * 10 + (**p - '0');
	if (*p == digits)
		return -1;
	if (*exponent >= INT_MAX / 2)
		return -2;
	if (negative)
		*exponent = -*exponent;
	return 0;
}

/*
 * Reads [p, end) after its leading blanks: a sign, digits with at most one
 * point, an exponent, trailing blanks.  0, -1 for bad syntax, -2 for an
 * exponent that overflows.
 */
static int
read_number_spelling(const char *p, const char *end, NumberSpelling *spelling)
{
	bool		seen_point = false;

	memset(spelling, 0, sizeof(*spelling));
	if (p < end && (*p == '+' || *p == '-'))
		spelling->negative = *p++ == '-';
	if (p < end && *p == '.')
	{
		seen_point = true;
		p++;
	}
	if (p >= end || !is_digit(*p))
		return -1;
	spelling->first_digit = p;
	for (; p < end; p++)
	{
		if (is_digit(*p))
		{
			if (seen_point)
				spelling->frac_digits++;
			else
				spelling->int_digits++;
		}
		else if (*p == '.' && !seen_point)
			seen_point = true;
		else
			break;
	}
	if (p < end && (*p == 'e' || *p == 'E'))
	{
		int			status;

		p++;
		status = read_exponent(&p, end, &spelling->exponent);
		if (status != 0)
			return status;
	}
	for (; p < end; p++)
		if (!is_space(*p))
			return -1;
	return 0;
}

/*
 * The decimal digits dec[lead..last) with the point after the first point
 * of them, as base-10000 digits in out (its own buffer, or the heap):
 * padded on the left so that the point falls between groups of 4.  0, -1
 * when the weight overflows numeric's, -2 out of memory.
 */
static int
decimal_to_groups(const char *dec, size_t lead, size_t last, int64_t point,
				  BfcNumber *out, int64_t *weight, size_t *ndigits)
{
	int64_t		pad = (4 - ((point % 4) + 4) % 4) % 4;

	*weight = (point + pad) / 4 - 1;
	*ndigits = (size_t) ((pad + (int64_t) (last - lead) + 3) / 4);
	if (*weight > NUMERIC_WEIGHT_LIMIT || *weight < -NUMERIC_WEIGHT_LIMIT - 1)
		return -1;
	if (*ndigits > sizeof(out->local) / sizeof(out->local[0]))
	{
		out->heap = malloc(*ndigits * sizeof(uint16_t));
		if (out->heap == NULL)
			return -2;
		out->digits = out->heap;
	}
	for (size_t g = 0; g < *ndigits; g++)
	{
		uint16_t	digit = 0;

		for (int j = 0; j < 4; j++)
		{
			int64_t		at = (int64_t) (g * 4 + j) - pad + (int64_t) lead;

			digit = (uint16_t) (digit * 10 +
								(at >= (int64_t) lead && at < (int64_t) last ? dec[at] : 0));
		}
		out->digits[g] = digit;
	}
	return 0;
}

/*
 * The spelling's digits as numeric's: the decimal digits without the
 * point, zeros at both ends dropped, then in groups (decimal_to_groups).
 * 0, -1 when the weight overflows, -2 out of memory.
 */
static int
spelling_to_digits(const NumberSpelling *spelling, BfcNumber *out, int64_t *weight,
				   size_t *ndigits)
{
	char		dec_local[64];
	size_t		total = (size_t) (spelling->int_digits + spelling->frac_digits);
	char	   *dec = total <= sizeof(dec_local) ? dec_local : malloc(total);
	int64_t		point = spelling->int_digits + spelling->exponent;
	size_t		ndec = 0;
	size_t		lead;
	size_t		last;
	int			status = 0;

	if (dec == NULL)
		return -2;
	for (const char *q = spelling->first_digit; ndec < total; q++)
		if (is_digit(*q))
			dec[ndec++] = (char) (*q - '0');
	for (lead = 0; lead < ndec && dec[lead] == 0; lead++)
		;
	for (last = ndec; last > lead && dec[last - 1] == 0; last--)
		;
	*weight = 0;
	*ndigits = 0;
	if (lead < last)
		status = decimal_to_groups(dec, lead, last, point - (int64_t) lead, out, weight,
								   ndigits);
	if (dec != dec_local)
		free(dec);
	return status;
}

/*
 * Reads a number as numeric_in does, into numeric's parts: the decimal
 * digits and the position of the decimal point (moved by the exponent)
 * give the base-10000 digits and their weight.
 */
int
bfc_parse_number(const char *text, size_t len, BfcNumber *out, bfc_error *err)
{
	const char *p = text;
	const char *end = text + len;
	NumberSpelling spelling;
	int64_t		dscale;
	int64_t		weight;
	size_t		ndigits;
	int			status;

	memset(out, 0, sizeof(*out));
	out->digits = out->local;
	while (p < end && is_space(*p))
		p++;
	status = number_special_word(p, end, out);
	if (status != 0)
		return status > 0 ? 0 : number_syntax(text, len, err);

	status = read_number_spelling(p, end, &spelling);
	if (status != 0)
		return status == -2 ? number_overflow(text, len, err) : number_syntax(text, len, err);
	status = spelling_to_digits(&spelling, out, &weight, &ndigits);
	if (status == -2)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (status != 0)
		return number_overflow(text, len, err);
	dscale = spelling.frac_digits - spelling.exponent;
	if (dscale > NUMERIC_DSCALE_LIMIT)
	{
		bfc_number_release(out);
		return number_overflow(text, len, err);
	}
	out->sign = (spelling.negative && ndigits > 0) ? BF_NUMERIC_NEG : BF_NUMERIC_POS;
	out->weight = (int) weight;
	out->ndigits = (int) ndigits;
	return 0;
}

/* Appends a base-10000 digit's 4 decimal digits, or fewer without zero padding. */
static char *
put_group(char *p, uint16_t digit, bool pad)
{
	char		group[5];
	int			n = 0;

	for (int i = 3; i >= 0; i--)
	{
		group[i] = (char) ('0' + digit % 10);
		digit /= 10;
	}
	if (!pad)
		while (n < 3 && group[n] == '0')
			n++;
	memcpy(p, group + n, 4 - n);
	return p + 4 - n;
}

int
bfc_hash_number_v1(const BfcNumber *number, uint64_t seed, uint64_t *hash,
				   bfc_error *err)
{
	int64_t		integer;
	int			int_groups;
	int			frac_groups;
	char	   *text;
	char	   *p;
	char	   *frac_start;
	char	   *frac_end;

	switch (number->sign)
	{
		case BF_NUMERIC_NAN:
			*hash = bf_hash("NaN", 3, seed);
			return 0;
		case BF_NUMERIC_PINF:
			*hash = bf_hash("Infinity", 8, seed);
			return 0;
		case BF_NUMERIC_NINF:
			*hash = bf_hash("-Infinity", 9, seed);
			return 0;
	}
	if (number->ndigits == 0)
	{
		*hash = bf_hash_int64(0, seed);
		return 0;
	}
	if (bf_numeric_int64(number->digits, number->ndigits, number->weight,
						 number->sign == BF_NUMERIC_NEG, &integer))
	{
		*hash = bf_hash_int64(integer, seed);
		return 0;
	}

	/* numeric_normalize: plain digits, no trailing fractional zeros */
	int_groups = number->weight >= 0 ? number->weight + 1 : 0;
	frac_groups = number->ndigits - 1 - number->weight;
	if (frac_groups < 0)
		frac_groups = 0;
	text = malloc(2 + 4 * (size_t) int_groups + 1 + 4 * (size_t) frac_groups + 1);
	if (text == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return -1;
	}
	p = text;
	if (number->sign == BF_NUMERIC_NEG)
		*p++ = '-';
	if (int_groups == 0)
		*p++ = '0';
	for (int i = 0; i < int_groups; i++)
		p = put_group(p, i < number->ndigits ? number->digits[i] : 0, i > 0);
	frac_start = p + 1;
	frac_end = frac_start;
	for (int position = -1; position >= -frac_groups; position--)
	{
		int			index = number->weight - position;

		frac_end = put_group(frac_end, index >= 0 && index < number->ndigits
							 ? number->digits[index] : 0, true);
	}
	while (frac_end > frac_start && frac_end[-1] == '0')
		frac_end--;
	if (frac_end > frac_start)
	{
		*p = '.';
		p = frac_end;
	}
	*hash = bf_hash(text, (size_t) (p - text), seed);
	free(text);
	return 0;
}

/* ---------------------------------------------------------------------
 * Floats
 * ---------------------------------------------------------------------
 */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void
make_c_locale(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t) 0);
}

static int
double_syntax(const char *text, size_t len, bfc_error *err)
{
	bfc_fail(err, BFC_ERR_KEY, "invalid input syntax for type double precision: \"%.*s\"",
			 (int) (len > QUOTED ? QUOTED : len), text);
	return -1;
}

int
bfc_parse_double(const char *text, size_t len, double *out, bfc_error *err)
{
	char		local[64];
	char	   *copy = len < sizeof(local) ? local : malloc(len + 1);
	char	   *num;
	char	   *endptr;
	double		value;
	int			status = 0;

	if (copy == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (memchr(text, '\0', len) != NULL)
	{
		status = double_syntax(text, len, err);
		goto done;
	}
	pthread_once(&c_locale_once, make_c_locale);

	num = copy;
	while (*num != '\0' && is_space(*num))
		num++;
	if (*num == '\0')
	{
		status = double_syntax(text, len, err);
		goto done;
	}
	errno = 0;
	value = c_locale != (locale_t) 0 ? strtod_l(num, &endptr, c_locale)
		: strtod(num, &endptr);
	if (endptr == num || errno != 0)
	{
		static const struct
		{
			const char *word;
			double		value;
		}			specials[] = {
			{"NaN", NAN}, {"Infinity", INFINITY}, {"+Infinity", INFINITY},
			{"-Infinity", -INFINITY}, {"inf", INFINITY}, {"+inf", INFINITY},
			{"-inf", -INFINITY},
		};
		int			saved = errno;
		bool		special = false;

		for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
			if (starts_with_ci(num, strlen(num), specials[i].word))
			{
				value = specials[i].value;
				endptr = num + strlen(specials[i].word);
				special = true;
				break;
			}
		if (!special && saved == ERANGE)
		{
			/* denormals are fine; zero or infinity means out of range */
			if (value == 0.0 || value >= HUGE_VAL || value <= -HUGE_VAL)
			{
				bfc_fail(err, BFC_ERR_KEY, "\"%.*s\" is out of range for type double precision",
						 (int) (len > QUOTED ? QUOTED : len), text);
				status = -1;
				goto done;
			}
		}
		else if (!special)
		{
			status = double_syntax(text, len, err);
			goto done;
		}
	}
	while (*endptr != '\0' && is_space(*endptr))
		endptr++;
	if (*endptr != '\0')
	{
		status = double_syntax(text, len, err);
		goto done;
	}
	*out = value;
done:
	if (copy != local)
		free(copy);
	return status;
}

/* ---------------------------------------------------------------------
 * Booleans and uuids
 * ---------------------------------------------------------------------
 */

/* Whether s[0..len) is a nonempty prefix of word, ignoring case. */
static bool
prefix_of_ci(const char *s, size_t len, const char *word)
{
	if (len == 0 || len > strlen(word))
		return false;
	for (size_t i = 0; i < len; i++)
		if (lower_ascii(s[i]) != word[i])
			return false;
	return true;
}

int
bfc_parse_bool(const char *text, size_t len, bool *out, bfc_error *err)
{
	const char *s = text;
	size_t		n = len;

	trim_spaces(&s, &n);
	if (n > 0)
	{
		switch (lower_ascii(s[0]))
		{
			case 't':
			case 'y':
				if (prefix_of_ci(s, n, s[0] == 't' || s[0] == 'T' ? "true" : "yes"))
				{
					*out = true;
					return 0;
				}
				break;
			case 'f':
			case 'n':
				if (prefix_of_ci(s, n, s[0] == 'f' || s[0] == 'F' ? "false" : "no"))
				{
					*out = false;
					return 0;
				}
				break;
			case 'o':
				/* "o" alone could be either */
				if (n >= 2 && prefix_of_ci(s, n, "on"))
				{
					*out = true;
					return 0;
				}
				if (n >= 2 && prefix_of_ci(s, n, "off"))
				{
					*out = false;
					return 0;
				}
				break;
			case '1':
			case '0':
				if (n == 1)
				{
					*out = s[0] == '1';
					return 0;
				}
				break;
		}
	}
	bfc_fail(err, BFC_ERR_KEY, "invalid input syntax for type boolean: \"%.*s\"",
			 (int) (len > QUOTED ? QUOTED : len), text);
	return -1;
}

int
bfc_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * uuid_in: 32 hex digits in either case, optionally in braces, with an
 * optional hyphen after any group of four.
 */
int
bfc_parse_uuid(const char *text, size_t len, uint8_t out[16], bfc_error *err)
{
	size_t		at = 0;
	bool		braces = false;

	if (len > 0 && text[0] == '{')
	{
		braces = true;
		at++;
	}
	for (int i = 0; i < 16; i++)
	{
		int			hi;
		int			lo;

		if (at + 2 > len || (hi = bfc_hex_digit(text[at])) < 0 ||
			(lo = bfc_hex_digit(text[at + 1])) < 0)
			goto syntax;
		out[i] = (uint8_t) (hi << 4 | lo);
		at += 2;
		if (at < len && text[at] == '-' && i % 2 == 1 && i < 15)
			at++;
	}
	if (braces)
	{
		if (at >= len || text[at] != '}')
			goto syntax;
		at++;
	}
	if (at != len)
		goto syntax;
	return 0;
syntax:
	bfc_fail(err, BFC_ERR_KEY, "invalid input syntax for type uuid: \"%.*s\"",
			 (int) (len > QUOTED ? QUOTED : len), text);
	return -1;
}

/* ---------------------------------------------------------------------
 * bytea
 * ---------------------------------------------------------------------
 */

int
bfc_parse_bytea(const char *text, size_t len, uint8_t **out, size_t *out_len,
				bfc_error *err)
{
	uint8_t    *bytes = malloc(len > 0 ? len : 1);
	size_t		n = 0;

	if (bytes == NULL)
	{
		bfc_fail(err, BFC_ERR_NOMEM, "out of memory");
		return -1;
	}
	if (len >= 2 && text[0] == '\\' && text[1] == 'x')
	{
		/* hex: pairs of digits, blanks allowed between pairs */
		for (size_t i = 2; i < len;)
		{
			int			hi;
			int			lo;

			if (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')
			{
				i++;
				continue;
			}
			if ((hi = bfc_hex_digit(text[i])) < 0)
			{
				bfc_fail(err, BFC_ERR_KEY, "invalid hexadecimal digit: \"%c\"", text[i]);
				goto fail;
			}
			if (i + 1 >= len)
			{
				bfc_fail(err, BFC_ERR_KEY, "invalid hexadecimal data: odd number of digits");
				goto fail;
			}
			if ((lo = bfc_hex_digit(text[i + 1])) < 0)
			{
				bfc_fail(err, BFC_ERR_KEY, "invalid hexadecimal digit: \"%c\"", text[i + 1]);
				goto fail;
			}
			bytes[n++] = (uint8_t) (hi << 4 | lo);
			i += 2;
		}
	}
	else
	{
		/* the escape format: \\ and \ooo, every other byte as it is */
		for (size_t i = 0; i < len;)
		{
			if (text[i] == '\0')
				goto escape_syntax;
			if (text[i] != '\\')
				bytes[n++] = (uint8_t) text[i++];
			else if (i + 3 < len && text[i + 1] >= '0' && text[i + 1] <= '3' &&
					 text[i + 2] >= '0' && text[i + 2] <= '7' &&
					 text[i + 3] >= '0' && text[i + 3] <= '7')
			{
				bytes[n++] = (uint8_t) ((text[i + 1] - '0') << 6 |
										(text[i + 2] - '0') << 3 | (text[i + 3] - '0'));
				i += 4;
			}
			else if (i + 1 < len && text[i + 1] == '\\')
			{
				bytes[n++] = '\\';
				i += 2;
			}
			else
				goto escape_syntax;
		}
	}
	*out = bytes;
	*out_len = n;
	return 0;
escape_syntax:
	bfc_fail(err, BFC_ERR_KEY, "invalid input syntax for type bytea");
fail:
	free(bytes);
	return -1;
}

/* ---------------------------------------------------------------------
 * Dates and timestamps
 * ---------------------------------------------------------------------
 */

#define USECS_PER_SEC INT64_C(1000000)
#define SECS_PER_DAY INT64_C(86400)
/* 1970-01-01 is day -10957 of PostgreSQL's epoch, 2000-01-01 */
#define UNIX_EPOCH_DAYS (-10957)

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t
days_from_civil(int64_t year, int month, int day)
{
	int64_t		era;
	int64_t		year_of_era;
	int64_t		day_of_year;
	int64_t		day_of_era;

	year -= month <= 2;
	era = (year >= 0 ? year : year - 399) / 400;
	year_of_era = year - era * 400;
	day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
	day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
	return era * 146097 + day_of_era - 719468;
}

static int
days_in_month(int year, int month)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* Reads exactly n digits at *p. */
static bool
read_digits(const char **p, const char *end, int n, int *value)
{
	*value = 0;
	for (int i = 0; i < n; i++)
	{
		if (*p >= end || !is_digit(**p))
			return false;
		*value = *value * 10 + (*(*p)++ - '0');
	}
	return true;
}

/* YYYY-MM-DD at *p, as days since 2000-01-01. */
static bool
read_iso_date(const char **p, const char *end, int64_t *days)
{
	int			year;
	int			month;
	int			day;

	if (!read_digits(p, end, 4, &year) || *p >= end || *(*p)++ != '-' ||
		!read_digits(p, end, 2, &month) || *p >= end || *(*p)++ != '-' ||
		!read_digits(p, end, 2, &day))
		return false;
	if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
		return false;
	*days = days_from_civil(year, month, day) - (-UNIX_EPOCH_DAYS);
	return true;
}

static int
datetime_refused(const char *type, const char *text, size_t len, bfc_error *err)
{
	bfc_fail(err, BFC_ERR_KEY,
			 "%s key \"%.*s\" is not in the ISO 8601 form the client reads exactly "
			 "(YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]%s, years 1 to 9999)",
			 type, (int) (len > QUOTED ? QUOTED : len), text,
			 strcmp(type, "timestamptz") == 0 ? " and a UTC offset (Z, +HH, +HH:MM)" : "");
	return -1;
}

int
bfc_parse_date(const char *text, size_t len, int32_t *out, bfc_error *err)
{
	const char *s = text;
	size_t		n = len;
	const char *p;
	int64_t		days;

	trim_spaces(&s, &n);
	if (n == 8 && starts_with_ci(s, n, "infinity"))
		*out = INT32_MAX;
	else if (n == 9 && starts_with_ci(s, n, "-infinity"))
		*out = INT32_MIN;
	else if (n == 5 && starts_with_ci(s, n, "epoch"))
		*out = UNIX_EPOCH_DAYS;
	else
	{
		p = s;
		if (!read_iso_date(&p, s + n, &days) || p != s + n)
			return datetime_refused("date", text, len, err);
		*out = (int32_t) days;
	}
	return 0;
}

/*
 * The time after a date's ' ' or 'T': HH:MM, then :SS and up to six digits
 * of fraction, into micros of the day; false when it is not one.
 */
static bool
read_time_of_day(const char **p, const char *end, int64_t *micros_of_day)
{
	int			hour;
	int			minute;
	int			second = 0;
	int64_t		micro = 0;

	if (!read_digits(p, end, 2, &hour) || *p >= end || *(*p)++ != ':' ||
		!read_digits(p, end, 2, &minute))
		return false;
	if (*p < end && **p == ':')
	{
		(*p)++;
		if (!read_digits(p, end, 2, &second))
			return false;
		if (*p < end && **p == '.')
		{
			int			ndigits = 0;

			(*p)++;
			while (*p < end && is_digit(**p) && ndigits < 7)
			{
				micro = micro * 10 + (*(*p)++ - '0');
				ndigits++;
			}
			if (ndigits == 0 || ndigits > 6)
				return false;
			for (; ndigits < 6; ndigits++)
				micro *= 10;
		}
	}
	if (hour > 23 || minute > 59 || second > 59)
		return false;
	*micros_of_day = ((int64_t) (hour * 60 + minute) * 60 + second) * USECS_PER_SEC + micro;
	return true;
}

/*
 * An offset after the time, if any: an optional blank, then Z (the end of
 * the text) or +HH, +HH:MM, +HHMM; *offset in seconds east of UTC.  False
 * when what follows the time is no offset.
 */
static bool
read_utc_offset(const char **p, const char *end, int64_t *offset, bool *has_offset)
{
	int			hours;
	int			minutes = 0;
	int			sign;

	if (**p == ' ')
		(*p)++;
	if (*p < end && (**p == 'Z' || **p == 'z') && *p + 1 == end)
	{
		(*p)++;
		*has_offset = true;
		return true;
	}
	if (*p >= end || (**p != '+' && **p != '-'))
		return true;			/* no offset: the caller sees what is left */
	sign = *(*p)++ == '-' ? -1 : 1;
	if (!read_digits(p, end, 2, &hours))
		return false;
	if (*p < end && **p == ':')
	{
		(*p)++;
		if (!read_digits(p, end, 2, &minutes))
			return false;
	}
	else if (*p < end && !read_digits(p, end, 2, &minutes))
		return false;
	if (hours > 15 || minutes > 59)
		return false;
	*offset = sign * ((int64_t) hours * 3600 + minutes * 60);
	*has_offset = true;
	return true;
}

int
bfc_parse_timestamp(const char *text, size_t len, bool with_zone, int64_t *out,
					bfc_error *err)
{
	const char *type = with_zone ? "timestamptz" : "timestamp";
	const char *s = text;
	size_t		n = len;
	const char *p;
	const char *end;
	int64_t		days;
	int64_t		micros_of_day = 0;
	int64_t		offset = 0;		/* seconds east of UTC */
	bool		has_offset = false;

	trim_spaces(&s, &n);
	end = s + n;
	if (n == 8 && starts_with_ci(s, n, "infinity"))
	{
		*out = INT64_MAX;
		return 0;
	}
	if (n == 9 && starts_with_ci(s, n, "-infinity"))
	{
		*out = INT64_MIN;
		return 0;
	}
	if (n == 5 && starts_with_ci(s, n, "epoch"))
	{
		*out = UNIX_EPOCH_DAYS * SECS_PER_DAY * USECS_PER_SEC;
		return 0;
	}

	p = s;
	if (!read_iso_date(&p, end, &days))
		return datetime_refused(type, text, len, err);
	if (p < end && (*p == ' ' || *p == 'T'))
	{
		p++;
		if (!read_time_of_day(&p, end, &micros_of_day) ||
			(p < end && !read_utc_offset(&p, end, &offset, &has_offset)))
			return datetime_refused(type, text, len, err);
	}
	if (p != end || has_offset != with_zone)
		return datetime_refused(type, text, len, err);
	*out = (days * SECS_PER_DAY - offset) * USECS_PER_SEC + micros_of_day;
	return 0;
}
