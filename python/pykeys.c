/*-------------------------------------------------------------------------
 *
 * pykeys.c
 *	  Python keys to the client library's typed calls, for the compiled
 *	  module _bloomfilter: one key (bfpy_key) and the batches
 *	  (bfpy_probe_many, bfpy_add_many).
 *
 * A key's Python type picks the server's key kind: bool -> boolean, int
 * and decimal.Decimal -> number, float -> float, str -> text, bytes-like
 * -> bytea, uuid.UUID -> uuid, datetime.date -> date, a naive
 * datetime.datetime -> timestamp and an aware one -> timestamptz.  The
 * kind check itself is the library's: a key of another kind than the
 * filter's is its BFC_ERR_KIND, raised as KindError, never an "absent".
 *
 * The hot cases come first and cost no Python call: an exact int that
 * fits int64 and an exact str (whose UTF-8 form Python caches).  Keys
 * that the library reads as text (ints beyond int64, Decimals) are
 * spelled as numeric_in reads them and parsed by the library's keyparse.c,
 * never here.
 *
 * Batches: a list of exact ints (or floats) and a buffer of int64 (or
 * float64) items go to the library's batch functions, which hash a block
 * of keys before probing them; anything else is taken key by key from a
 * tuple copy, since a key's own code (a tzinfo's utcoffset, say) may
 * change the list being read.
 *
 *-------------------------------------------------------------------------
 */
#include "pyfilter.h"

#include <datetime.h>
#include <string.h>

/* A library failure, its message in the bfc_error: raised by the caller. */
#define LIBRARY_FAILED (-1)
/* A Python exception already set. */
#define PYTHON_FAILED (-2)

static PyObject *uuid_type;
static PyObject *decimal_type;
static PyObject *epoch_naive;		/* datetime(2000, 1, 1) */
static PyObject *epoch_utc;			/* datetime(2000, 1, 1, tzinfo=utc) */
static PyObject *epoch_date;		/* date(2000, 1, 1) */

static PyObject *
type_from_module(const char *module_name, const char *type_name)
{
	PyObject   *module = PyImport_ImportModule(module_name);
	PyObject   *type;

	if (module == NULL)
		return NULL;
	type = PyObject_GetAttrString(module, type_name);
	Py_DECREF(module);
	return type;
}

int
bfpy_keys_init(void)
{
	PyDateTime_IMPORT;
	if (PyDateTimeAPI == NULL)
		return -1;
	uuid_type = type_from_module("uuid", "UUID");
	decimal_type = type_from_module("decimal", "Decimal");
	epoch_naive = PyDateTime_FromDateAndTime(2000, 1, 1, 0, 0, 0, 0);
	epoch_utc = PyDateTimeAPI->DateTime_FromDateAndTime(2000, 1, 1, 0, 0, 0, 0,
														PyDateTime_TimeZone_UTC,
														PyDateTimeAPI->DateTimeType);
	epoch_date = PyDate_FromDate(2000, 1, 1);
	if (uuid_type == NULL || decimal_type == NULL || epoch_naive == NULL ||
		epoch_utc == NULL || epoch_date == NULL)
		return -1;
	return 0;
}

/* ---- one key, by type ---- */

/* A number spelled as text (an int beyond int64, a Decimal), parsed by the library. */
static int
number_text_key(bfc_filter *filter, const char *text, Py_ssize_t len, bool adding,
				bfc_error *err)
{
	return adding ? bfc_add_str_as(filter, BFC_KIND_NUMBER, text, len, err)
		: bfc_contains_str_as(filter, BFC_KIND_NUMBER, text, len, err);
}

/* An object whose str() is the number's spelling (an int, a Decimal). */
static int
spelled_number_key(bfc_filter *filter, PyObject *number, bool adding, bfc_error *err)
{
	PyObject   *spelling = PyObject_Str(number);
	const char *text;
	Py_ssize_t	len;
	int			result;

	if (spelling == NULL)
		return PYTHON_FAILED;
	text = PyUnicode_AsUTF8AndSize(spelling, &len);
	result = text == NULL ? PYTHON_FAILED : number_text_key(filter, text, len, adding, err);
	Py_DECREF(spelling);
	return result;
}

static int
int_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	int			overflow;
	long long	value = PyLong_AsLongLongAndOverflow(key, &overflow);

	if (overflow != 0)
		return spelled_number_key(filter, key, adding, err);
	if (value == -1 && PyErr_Occurred())
		return PYTHON_FAILED;
	return adding ? bfc_add_int64(filter, value, err) : bfc_contains_int64(filter, value, err);
}

static int
text_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	Py_ssize_t	len;
	const char *text = PyUnicode_AsUTF8AndSize(key, &len);

	if (text == NULL)
		return PYTHON_FAILED;
	return adding ? bfc_add_text(filter, text, len, err)
		: bfc_contains_text(filter, text, len, err);
}

/* bytes, bytearray or memoryview: the bytes (a contiguous copy for the latter two). */
static int
bytea_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	PyObject   *data;
	int			result;

	if (PyBytes_Check(key))
	{
		Py_INCREF(key);
		data = key;
	}
	else
		data = PyBytes_FromObject(key);
	if (data == NULL)
		return PYTHON_FAILED;
	result = adding
		? bfc_add_bytea(filter, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), err)
		: bfc_contains_bytea(filter, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), err);
	Py_DECREF(data);
	return result;
}

static int
uuid_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	PyObject   *raw = PyObject_GetAttrString(key, "bytes");
	const uint8_t *bytes;
	int			result;

	if (raw == NULL)
		return PYTHON_FAILED;
	if (!PyBytes_Check(raw) || PyBytes_GET_SIZE(raw) != 16)
	{
		PyErr_SetString(PyExc_ValueError, "a uuid.UUID whose bytes are not 16 bytes");
		Py_DECREF(raw);
		return PYTHON_FAILED;
	}
	bytes = (const uint8_t *) PyBytes_AS_STRING(raw);
	result = adding ? bfc_add_uuid(filter, bytes, err) : bfc_contains_uuid(filter, bytes, err);
	Py_DECREF(raw);
	return result;
}

/* Calls key.NAME() and says whether it returned a true value; -1 on error. */
static int
method_is_true(PyObject *key, const char *name)
{
	PyObject   *answer = PyObject_CallMethod(key, name, NULL);
	int			truth;

	if (answer == NULL)
		return -1;
	truth = PyObject_IsTrue(answer);
	Py_DECREF(answer);
	return truth;
}

/* A Decimal as numeric_in reads it: NaN as "NaN"; a signaling NaN is no number. */
static int
decimal_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	int			snan = method_is_true(key, "is_snan");
	int			nan;

	if (snan < 0)
		return PYTHON_FAILED;
	if (snan)
	{
		err->code = BFC_ERR_KEY;
		snprintf(err->message, sizeof(err->message),
				 "a signaling NaN is not a number the server stores");
		return LIBRARY_FAILED;
	}
	nan = method_is_true(key, "is_nan");
	if (nan < 0)
		return PYTHON_FAILED;
	if (nan)
		return number_text_key(filter, "NaN", 3, adding, err);
	return spelled_number_key(filter, key, adding, err);
}

/* Microseconds of the timedelta later - earlier (exact: days stay within int64's reach). */
static int
microseconds_between(PyObject *later, PyObject *earlier, int64_t *microseconds)
{
	PyObject   *delta = PyNumber_Subtract(later, earlier);

	if (delta == NULL)
		return -1;
	if (!PyDelta_Check(delta))
	{
		PyErr_SetString(PyExc_TypeError, "a datetime key whose subtraction gives no timedelta");
		Py_DECREF(delta);
		return -1;
	}
	*microseconds = (int64_t) PyDateTime_DELTA_GET_DAYS(delta) * INT64_C(86400000000) +
		(int64_t) PyDateTime_DELTA_GET_SECONDS(delta) * INT64_C(1000000) +
		PyDateTime_DELTA_GET_MICROSECONDS(delta);
	Py_DECREF(delta);
	return 0;
}

/* Whether a datetime is aware (a tzinfo whose utcoffset is not None); -1 on error. */
static int
datetime_is_aware(PyObject *key)
{
	PyObject   *tzinfo = PyObject_GetAttrString(key, "tzinfo");
	PyObject   *offset;
	int			aware;

	if (tzinfo == NULL)
		return -1;
	aware = tzinfo != Py_None;
	Py_DECREF(tzinfo);
	if (!aware)
		return 0;
	offset = PyObject_CallMethod(key, "utcoffset", NULL);
	if (offset == NULL)
		return -1;
	aware = offset != Py_None;
	Py_DECREF(offset);
	return aware;
}

static int
datetime_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	int			aware = datetime_is_aware(key);
	bfc_kind	kind = aware ? BFC_KIND_TIMESTAMPTZ : BFC_KIND_TIMESTAMP;
	int64_t		microseconds;

	if (aware < 0 || microseconds_between(key, aware ? epoch_utc : epoch_naive,
										  &microseconds) < 0)
		return PYTHON_FAILED;
	return adding ? bfc_add_timestamp(filter, kind, microseconds, err)
		: bfc_contains_timestamp(filter, kind, microseconds, err);
}

static int
date_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	int64_t		microseconds;
	int32_t		days;

	if (microseconds_between(key, epoch_date, &microseconds) < 0)
		return PYTHON_FAILED;
	days = (int32_t) (microseconds / INT64_C(86400000000));
	return adding ? bfc_add_date(filter, days, err) : bfc_contains_date(filter, days, err);
}

/* isinstance(key, type) for the types without a C API; -1 on error. */
static int
is_instance(PyObject *key, PyObject *type)
{
	return Py_IS_TYPE(key, (PyTypeObject *) type) ? 1 : PyObject_IsInstance(key, type);
}

static int
unsupported_key(PyObject *key)
{
	PyErr_Format(PyExc_TypeError,
				 "bloomfilter keys are int, decimal.Decimal, float, str, bytes, uuid.UUID, bool, "
				 "datetime.date or datetime.datetime, not %s", Py_TYPE(key)->tp_name);
	return PYTHON_FAILED;
}

/* The types checked by isinstance, after the common ones. */
static int
rare_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	int			match;

	if ((match = is_instance(key, uuid_type)) != 0)
		return match < 0 ? PYTHON_FAILED : uuid_key(filter, key, adding, err);
	if ((match = is_instance(key, decimal_type)) != 0)
		return match < 0 ? PYTHON_FAILED : decimal_key(filter, key, adding, err);
	if (PyDateTime_Check(key))
		return datetime_key(filter, key, adding, err);
	if (PyDate_Check(key))
		return date_key(filter, key, adding, err);
	return unsupported_key(key);
}

/* One key by type: the library's answer, LIBRARY_FAILED or PYTHON_FAILED. */
static int
dispatch_key(bfc_filter *filter, PyObject *key, bool adding, bfc_error *err)
{
	/* the hot cases, exact types first: a bool is an int subclass, never exact */
	if (PyLong_CheckExact(key))
		return int_key(filter, key, adding, err);
	if (PyUnicode_CheckExact(key))
		return text_key(filter, key, adding, err);
	if (PyBool_Check(key))
		return adding ? bfc_add_bool(filter, key == Py_True, err)
			: bfc_contains_bool(filter, key == Py_True, err);
	if (PyLong_Check(key))
		return int_key(filter, key, adding, err);
	if (PyFloat_Check(key))
	{
		double		value = PyFloat_AS_DOUBLE(key);

		return adding ? bfc_add_double(filter, value, err)
			: bfc_contains_double(filter, value, err);
	}
	if (PyUnicode_Check(key))
		return text_key(filter, key, adding, err);
	if (PyBytes_Check(key) || PyByteArray_Check(key) || PyMemoryView_Check(key))
		return bytea_key(filter, key, adding, err);
	return rare_key(filter, key, adding, err);
}

int
bfpy_key(bfc_filter *filter, PyObject *key, bool adding)
{
	bfc_error	err;
	int			result = dispatch_key(filter, key, adding, &err);

	if (result == LIBRARY_FAILED)
		return bfpy_raise(&err);
	return result < 0 ? -1 : result;
}

/* ---- batches ---- */

typedef enum
{
	ITEMS_OTHER,				/* key by key */
	ITEMS_INT64,
	ITEMS_FLOAT64
} ItemType;

/* Keys as an array of int64 or float64, read in place from a buffer or packed from a list. */
typedef struct
{
	ItemType	items;
	const void *values;
	size_t		n;
	Py_buffer	view;			/* the buffer's, when has_view */
	bool		has_view;
	void	   *packed;			/* PyMem_Malloc'ed, when packed from a list */
} PackedKeys;

/* What a buffer's items are, by its struct format: native int64 or float64, or other. */
static ItemType
buffer_item_type(const Py_buffer *view)
{
	const char *format = view->format == NULL ? "B" : view->format;

	if (view->ndim > 1 || view->itemsize != 8)
		return ITEMS_OTHER;
	if (format[0] == '@' || format[0] == '=' ||
		(format[0] == '<' && PY_LITTLE_ENDIAN) || (format[0] == '>' && PY_BIG_ENDIAN))
		format++;
	if (strcmp(format, "q") == 0 || strcmp(format, "l") == 0)
		return ITEMS_INT64;
	if (strcmp(format, "d") == 0)
		return ITEMS_FLOAT64;
	return ITEMS_OTHER;
}

/*
 * A buffer of int64 or float64 items (array('q'), a numpy int64 array, a
 * memoryview of either), read in place.  bytes and bytearray are sequences
 * of small ints, read as such key by key; so is any buffer that is not
 * contiguous or holds other items.
 */
static void
pack_buffer(PyObject *keys, PackedKeys *packed)
{
	if (!PyObject_CheckBuffer(keys) || PyBytes_Check(keys) || PyByteArray_Check(keys))
		return;
	if (PyObject_GetBuffer(keys, &packed->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
	{
		PyErr_Clear();
		return;
	}
	packed->has_view = true;
	packed->items = buffer_item_type(&packed->view);
	packed->values = packed->view.buf;
	packed->n = (size_t) (packed->view.len / 8);
}

/* The list's items as int64, if all are exact ints within its range. */
static bool
pack_int64s(PyObject **items, Py_ssize_t n, int64_t *values)
{
	for (Py_ssize_t i = 0; i < n; i++)
	{
		int			overflow;

		if (!PyLong_CheckExact(items[i]))
			return false;
		values[i] = PyLong_AsLongLongAndOverflow(items[i], &overflow);
		if (overflow != 0)
			return false;
	}
	return true;
}

/* The list's items as float64, if all are exact floats. */
static bool
pack_float64s(PyObject **items, Py_ssize_t n, double *values)
{
	for (Py_ssize_t i = 0; i < n; i++)
	{
		if (!PyFloat_CheckExact(items[i]))
			return false;
		values[i] = PyFloat_AS_DOUBLE(items[i]);
	}
	return true;
}

/*
 * A list or tuple all of exact ints (or all of exact floats), copied into an
 * array; packing runs no Python code, so the list cannot change meanwhile.
 */
static int
pack_sequence(PyObject *keys, PackedKeys *packed)
{
	Py_ssize_t	n;
	PyObject  **items;

	if (!PyList_CheckExact(keys) && !PyTuple_CheckExact(keys))
		return 0;
	n = PySequence_Fast_GET_SIZE(keys);
	items = PySequence_Fast_ITEMS(keys);
	if (n == 0 || !(PyLong_CheckExact(items[0]) || PyFloat_CheckExact(items[0])))
		return 0;
	if ((packed->packed = PyMem_Malloc(n * sizeof(int64_t))) == NULL)
	{
		PyErr_NoMemory();
		return -1;
	}
	if (PyLong_CheckExact(items[0]) ? pack_int64s(items, n, packed->packed)
		: pack_float64s(items, n, packed->packed))
	{
		packed->items = PyLong_CheckExact(items[0]) ? ITEMS_INT64 : ITEMS_FLOAT64;
		packed->values = packed->packed;
		packed->n = (size_t) n;
	}
	return 0;
}

/* keys packed for a batch call, or left ITEMS_OTHER; -1 on error. */
static int
pack_keys(PyObject *keys, PackedKeys *packed)
{
	memset(packed, 0, sizeof(*packed));
	packed->items = ITEMS_OTHER;
	pack_buffer(keys, packed);
	if (packed->has_view)
		return 0;
	return pack_sequence(keys, packed);
}

static void
release_packed(PackedKeys *packed)
{
	if (packed->has_view)
		PyBuffer_Release(&packed->view);
	PyMem_Free(packed->packed);
}

/* Key by key, from a tuple copy of keys (a key's own code may change a list). */
static uint8_t *
probe_each(bfc_filter *filter, PyObject *keys, Py_ssize_t *count)
{
	PyObject   *tuple = PySequence_Tuple(keys);
	Py_ssize_t	n;
	uint8_t    *out;

	if (tuple == NULL)
		return NULL;
	n = PyTuple_GET_SIZE(tuple);
	if ((out = PyMem_Malloc(n ? n : 1)) == NULL)
	{
		Py_DECREF(tuple);
		PyErr_NoMemory();
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++)
	{
		int			found = bfpy_key(filter, PyTuple_GET_ITEM(tuple, i), false);

		if (found < 0)
		{
			PyMem_Free(out);
			Py_DECREF(tuple);
			return NULL;
		}
		out[i] = (uint8_t) found;
	}
	Py_DECREF(tuple);
	*count = n;
	return out;
}

/* One batch call of the library for packed keys. */
static uint8_t *
probe_packed(bfc_filter *filter, const PackedKeys *packed, Py_ssize_t *count)
{
	uint8_t    *out = PyMem_Malloc(packed->n ? packed->n : 1);
	bfc_error	err;
	int			status;

	if (out == NULL)
		return (uint8_t *) PyErr_NoMemory();
	status = packed->items == ITEMS_INT64
		? bfc_contains_int64_many(filter, packed->values, packed->n, out, &err)
		: bfc_contains_double_many(filter, packed->values, packed->n, out, &err);
	if (status < 0)
	{
		PyMem_Free(out);
		bfpy_raise(&err);
		return NULL;
	}
	*count = (Py_ssize_t) packed->n;
	return out;
}

uint8_t *
bfpy_probe_many(bfc_filter *filter, PyObject *keys, Py_ssize_t *count)
{
	PackedKeys	packed;
	uint8_t    *out;

	if (pack_keys(keys, &packed) < 0)
		return NULL;
	if (packed.items != ITEMS_OTHER)
		out = probe_packed(filter, &packed, count);
	else
		out = probe_each(filter, keys, count);
	release_packed(&packed);
	return out;
}

static int
add_each(bfc_filter *filter, PyObject *keys)
{
	PyObject   *tuple = PySequence_Tuple(keys);

	if (tuple == NULL)
		return -1;
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++)
		if (bfpy_key(filter, PyTuple_GET_ITEM(tuple, i), true) < 0)
		{
			Py_DECREF(tuple);
			return -1;
		}
	Py_DECREF(tuple);
	return 0;
}

int
bfpy_add_many(bfc_filter *filter, PyObject *keys)
{
	PackedKeys	packed;
	bfc_error	err;
	int			status;

	if (pack_keys(keys, &packed) < 0)
		return -1;
	/* the library has a batch add for int64 keys only */
	if (packed.items == ITEMS_INT64)
		status = bfc_add_int64_many(filter, packed.values, packed.n, &err) < 0
			? bfpy_raise(&err) : 0;
	else
		status = add_each(filter, keys);
	release_packed(&packed);
	return status;
}
