/*-------------------------------------------------------------------------
 *
 * typmod.c
 *	  The type modifiers of bloom and qfilter columns: parsing them, their
 *	  encoding in one int32, printing them, and the check a value passes to
 *	  be stored in such a column (the types' length-coercion casts).
 *
 * Encoding (bits from the lowest): growth - 1 or 0 (4), the rate's
 * exponent e (4) and mantissa m (5), fpr = m / 10^e, the capacity's
 * exponent (4) and mantissa (13), capacity = m * 10^e.  30 bits: every
 * modifier is positive, as PostgreSQL requires.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "bloomvalue.h"
#include "typmod.h"

#define GROWTH_BITS 4
#define FPR_EXP_BITS 4
#define FPR_MANT_BITS 5
#define CAP_EXP_BITS 4
#define CAP_MANT_BITS 13

#define MAX_EXP 15
#define MAX_FPR_MANT ((1 << FPR_MANT_BITS) - 1)
#define MAX_CAP_MANT ((1 << CAP_MANT_BITS) - 1)

/* Powers of ten up to 10^15, each exact in a double. */
static double
PowerOfTen(int e)
{
	double		p = 1.0;

	for (int i = 0; i < e; i++)
		p *= 10.0;
	return p;
}

static double
ParameterValue(const char *text, const char *typname, const char *what)
{
	char	   *end;
	double		value;

	errno = 0;
	value = strtod(text, &end);
	if (end == text || *end != '\0' || errno != 0 || !isfinite(value))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s \"%s\" in type modifier of %s", what, text, typname)));
	return value;
}

/* capacity = m * 10^e with m of at most 13 bits, or ERROR. */
static void
EncodeCapacity(double value, const char *text, const char *typname, uint32 *m, uint32 *e)
{
	uint64		mantissa;

	if (value < 1 || value != floor(value) || value > 1e18)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity in type modifier of %s must be a positive integer, not \"%s\"",
						typname, text)));
	mantissa = (uint64) value;
	*e = 0;
	while (mantissa % 10 == 0 && *e < MAX_EXP)
	{
		mantissa /= 10;
		(*e)++;
	}
	if (mantissa > MAX_CAP_MANT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity %s has too many significant digits for a type modifier of %s",
						text, typname),
				 errdetail("A capacity in a type modifier is at most %d followed by zeros, such as 1000000 or 1500.",
						   MAX_CAP_MANT)));
	*m = (uint32) mantissa;
}

/* fpr = m / 10^e with m of at most 5 bits, as its literal gives it, or ERROR. */
static void
EncodeRate(double value, const char *text, const char *typname, uint32 *m, uint32 *e)
{
	for (uint32 exp = 1; exp <= MAX_EXP && value > 0 && value < 1; exp++)
	{
		double		scale = PowerOfTen((int) exp);
		double		mantissa = rint(value * scale);

		if (mantissa >= 1 && mantissa <= MAX_FPR_MANT && mantissa / scale == value)
		{
			*m = (uint32) mantissa;
			*e = exp;
			return;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("false-positive rate %s cannot be a type modifier of %s", text, typname),
			 errdetail("A rate in a type modifier is a decimal between 0 and 1 of at most two significant digits below %d, such as 0.01, 0.025 or 0.001.",
					   MAX_FPR_MANT + 1)));
}

int32
FilterTypmodIn(ArrayType *parameters, const char *typname, bool takes_growth,
			   FilterTypmod *decoded)
{
	Datum	   *texts;
	int			n;
	uint32		cap_m,
				cap_e,
				fpr_m,
				fpr_e,
				growth = 0;
	int32		typmod;

	deconstruct_array(parameters, CSTRINGOID, -2, false, TYPALIGN_CHAR, &texts, NULL, &n);
	if (n < 2 || n > (takes_growth ? 3 : 2))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("type modifier of %s must be (capacity, fpr%s)", typname,
						takes_growth ? "[, growth]" : "")));
	EncodeCapacity(ParameterValue(DatumGetCString(texts[0]), typname, "capacity"),
				   DatumGetCString(texts[0]), typname, &cap_m, &cap_e);
	EncodeRate(ParameterValue(DatumGetCString(texts[1]), typname, "false-positive rate"),
			   DatumGetCString(texts[1]), typname, &fpr_m, &fpr_e);
	if (n == 3)
	{
		double		g = ParameterValue(DatumGetCString(texts[2]), typname, "growth");

		if (g < 2 || g > (1 << GROWTH_BITS) || g != floor(g))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("growth in type modifier of %s must be an integer from 2 to %d, not \"%s\"",
							typname, 1 << GROWTH_BITS, DatumGetCString(texts[2]))));
		growth = (uint32) g - 1;
	}
	typmod = (int32) (growth |
					  fpr_e << GROWTH_BITS |
					  fpr_m << (GROWTH_BITS + FPR_EXP_BITS) |
					  cap_e << (GROWTH_BITS + FPR_EXP_BITS + FPR_MANT_BITS) |
					  cap_m << (GROWTH_BITS + FPR_EXP_BITS + FPR_MANT_BITS + CAP_EXP_BITS));
	FilterTypmodDecode(typmod, decoded);
	return typmod;
}

void
FilterTypmodDecode(int32 typmod, FilterTypmod *decoded)
{
	uint32		bits = (uint32) typmod;
	uint32		growth = bits & ((1 << GROWTH_BITS) - 1);
	uint32		fpr_e = (bits >> GROWTH_BITS) & ((1 << FPR_EXP_BITS) - 1);
	uint32		fpr_m = (bits >> (GROWTH_BITS + FPR_EXP_BITS)) & MAX_FPR_MANT;
	uint32		cap_e = (bits >> (GROWTH_BITS + FPR_EXP_BITS + FPR_MANT_BITS)) &
		((1 << CAP_EXP_BITS) - 1);
	uint32		cap_m = bits >> (GROWTH_BITS + FPR_EXP_BITS + FPR_MANT_BITS + CAP_EXP_BITS);

	decoded->capacity = (int64) cap_m * (int64) PowerOfTen((int) cap_e);
	/* a correctly rounded quotient of exact values: the literal's double */
	decoded->fpr = (double) fpr_m / PowerOfTen((int) fpr_e);
	decoded->growth = growth == 0 ? 0 : (int32) growth + 1;
}

/* The rate's decimal digits, from its mantissa and exponent. */
static char *
RateText(int32 typmod)
{
	uint32		bits = (uint32) typmod;
	uint32		fpr_e = (bits >> GROWTH_BITS) & ((1 << FPR_EXP_BITS) - 1);
	uint32		fpr_m = (bits >> (GROWTH_BITS + FPR_EXP_BITS)) & MAX_FPR_MANT;
	char		digits[MAX_EXP + 3];

	snprintf(digits, sizeof(digits), "%0*u", (int) fpr_e, fpr_m);
	return psprintf("0.%s", digits);
}

int32
InputFunctionTypmod(FunctionCallInfo fcinfo)
{
	return PG_NARGS() >= 3 && !PG_ARGISNULL(2) ? PG_GETARG_INT32(2) : -1;
}

char *
FilterTypmodOut(int32 typmod)
{
	FilterTypmod decoded;

	if (typmod < 0)
		return pstrdup("");
	FilterTypmodDecode(typmod, &decoded);
	if (decoded.growth != 0)
		return psprintf("(" INT64_FORMAT ",%s,%d)", decoded.capacity, RateText(typmod),
						decoded.growth);
	return psprintf("(" INT64_FORMAT ",%s)", decoded.capacity, RateText(typmod));
}

bool
FilterFitsTypmod(int32 typmod, const char *typname, uint64 capacity, double fpr,
				 int32 growth, Node *escontext)
{
	FilterTypmod want;

	if (typmod < 0)
		return true;
	FilterTypmodDecode(typmod, &want);
	if ((uint64) want.capacity == capacity && want.fpr == fpr && want.growth == growth)
		return true;
	report_input_error(escontext,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s of capacity " UINT64_FORMAT ", false-positive rate %g%s is not a value of type %s%s",
					typname, capacity, fpr,
					growth != 0 ? psprintf(", growth %d", growth) : "",
					typname, FilterTypmodOut(typmod)),
			 errhint("Build it with %s_empty%s or %s_agg(value, %s, which size it for the column.",
					 typname, FilterTypmodOut(typmod), typname, FilterTypmodOut(typmod) + 1)));
	return false;
}
