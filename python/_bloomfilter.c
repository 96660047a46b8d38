/*-------------------------------------------------------------------------
 *
 * _bloomfilter.c
 *	  The compiled module under bloomfilter.py: the type _bloomfilter.Filter,
 *	  a bfc_filter of the client library (client/filter.c) held by a Python
 *	  object, with its probes, adds, batches, unions, deltas and forms, and
 *	  the mapping of the library's errors onto bloomfilter.py's exceptions.
 *
 * bloomfilter.Filter subclasses this type: its probes (contains, `in`,
 * contains_many) are these C methods themselves, not Python functions
 * calling them, so a probe costs one method call.  What is not hot stays
 * in Python: the argument checks of the constructors, __eq__, __repr__.
 * Keys are turned into the library's typed calls in pykeys.c.
 *
 * The module is built from the library's own sources (setup.py), linked in
 * statically: no shared library to find at run time.  INTERFACE numbers
 * what bloomfilter.py expects of this module; bloomfilter.py refuses a
 * module built from other sources (a stale in-place build) by it.
 *
 * The GIL stays held in every call: the library's calls are short, and a
 * filter must not be probed while another thread adds to it (an add may
 * move a growing filter's bytes), which the GIL then rules out.
 *
 *-------------------------------------------------------------------------
 */
#include "pyfilter.h"

#include <string.h>

/* Bumped whenever bloomfilter.py and this module change what they expect of each other. */
#define BFPY_INTERFACE 1

typedef struct
{
	PyObject_HEAD
	bfc_filter *filter;
} FilterObject;

/* bfc_code -> the exception class, registered by bloomfilter.py (set_error_classes). */
static PyObject *error_classes;

static PyTypeObject FilterType;

/* ---- errors ---- */

int
bfpy_raise(const bfc_error *err)
{
	PyObject   *code = PyLong_FromLong((long) err->code);
	PyObject   *message;
	PyObject   *class = NULL;
	PyObject   *error;

	if (code == NULL)
		return -1;
	/* a message quoting a bad key may end inside a UTF-8 sequence it cut */
	message = PyUnicode_DecodeUTF8(err->message, strnlen(err->message, sizeof(err->message)),
								   "replace");
	if (message == NULL)
	{
		Py_DECREF(code);
		return -1;
	}
	if (error_classes != NULL)
		class = PyDict_GetItemWithError(error_classes, code);
	if (class == NULL && !PyErr_Occurred())
		class = err->code == BFC_ERR_NOMEM ? PyExc_MemoryError : PyExc_RuntimeError;
	if (class != NULL)
	{
		error = PyObject_CallFunctionObjArgs(class, message, code, NULL);
		if (error != NULL)
		{
			PyErr_SetObject((PyObject *) Py_TYPE(error), error);
			Py_DECREF(error);
		}
	}
	Py_DECREF(message);
	Py_DECREF(code);
	return -1;
}

static PyObject *
set_error_classes(PyObject *module, PyObject *classes)
{
	(void) module;
	if (!PyDict_Check(classes))
		return PyErr_Format(PyExc_TypeError, "set_error_classes takes a dict");
	Py_INCREF(classes);
	Py_XSETREF(error_classes, classes);
	Py_RETURN_NONE;
}

/* ---- making and freeing ---- */

/* A new object of type holding filter, or NULL (filter freed) on failure. */
static PyObject *
wrap_filter(PyTypeObject *type, bfc_filter *filter, const bfc_error *err)
{
	FilterObject *self;

	if (filter == NULL)
		return bfpy_raise(err), NULL;
	self = (FilterObject *) type->tp_alloc(type, 0);
	if (self == NULL)
	{
		bfc_free(filter);
		return NULL;
	}
	self->filter = filter;
	return (PyObject *) self;
}

static PyObject *
Filter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	(void) type;
	(void) args;
	(void) kwargs;
	return PyErr_Format(PyExc_TypeError, "make a Filter with Filter.empty, Filter.from_bytes, "
						"Filter.from_text or Filter.load");
}

static void
Filter_dealloc(FilterObject *self)
{
	bfc_free(self->filter);
	Py_TYPE(self)->tp_free((PyObject *) self);
}

/* The forms _from_form reads, by number. */
enum
{
	FORM_BYTES,
	FORM_TEXT,
	FORM_ANY
};

static PyObject *
Filter_from_form(PyTypeObject *type, PyObject *args)
{
	int			form;
	Py_buffer	data;
	bfc_error	err;
	bfc_filter *filter;

	if (!PyArg_ParseTuple(args, "iy*:_from_form", &form, &data))
		return NULL;
	if (form == FORM_BYTES)
		filter = bfc_from_bytes(data.buf, data.len, &err);
	else if (form == FORM_TEXT)
		filter = bfc_from_text(data.buf, data.len, &err);
	else
		filter = bfc_load(data.buf, data.len, &err);
	PyBuffer_Release(&data);
	return wrap_filter(type, filter, &err);
}

static PyObject *
Filter_create(PyTypeObject *type, PyObject *args)
{
	int			kind;
	unsigned long long capacity;
	double		fpr;
	int			growth;
	bfc_error	err;
	bfc_filter *filter;

	if (!PyArg_ParseTuple(args, "iKdi:_create", &kind, &capacity, &fpr, &growth))
		return NULL;
	if (growth == 0)
		filter = bfc_create((bfc_kind) kind, capacity, fpr, &err);
	else
		filter = bfc_create_growing((bfc_kind) kind, capacity, fpr, growth, &err);
	return wrap_filter(type, filter, &err);
}

static PyObject *
Filter_copy(FilterObject *self, PyObject *unused)
{
	bfc_error	err;

	(void) unused;
	return wrap_filter(Py_TYPE(self), bfc_copy(self->filter, &err), &err);
}

static PyObject *
Filter_set_v1_utf8(FilterObject *self, PyObject *flag)
{
	int			truth = PyObject_IsTrue(flag);

	if (truth < 0)
		return NULL;
	bfc_set_v1_utf8(self->filter, truth);
	Py_RETURN_NONE;
}

/* ---- keys ---- */

static PyObject *
Filter_contains(FilterObject *self, PyObject *key)
{
	int			found = bfpy_key(self->filter, key, false);

	return found < 0 ? NULL : PyBool_FromLong(found);
}

static int
Filter_sq_contains(FilterObject *self, PyObject *key)
{
	return bfpy_key(self->filter, key, false);
}

static PyObject *
Filter_add(FilterObject *self, PyObject *key)
{
	if (bfpy_key(self->filter, key, true) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* _call(key, contains): 1 or 0 for a probe, 0 for an add; LiveFilter's probe. */
static PyObject *
Filter_call(FilterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	int			contains;
	int			result;

	if (nargs != 2)
		return PyErr_Format(PyExc_TypeError, "_call takes a key and a flag");
	if ((contains = PyObject_IsTrue(args[1])) < 0)
		return NULL;
	result = bfpy_key(self->filter, args[0], !contains);
	return result < 0 ? NULL : PyLong_FromLong(result);
}

/* The key spelled as text: probe, or add. */
static PyObject *
str_key(FilterObject *self, PyObject *text, bool adding)
{
	Py_ssize_t	len;
	const char *data;
	bfc_error	err;
	int			result;

	if (!PyUnicode_Check(text))
		return PyErr_Format(PyExc_TypeError, "a key spelled as text is a str, not %s",
							Py_TYPE(text)->tp_name);
	if ((data = PyUnicode_AsUTF8AndSize(text, &len)) == NULL)
		return NULL;
	result = adding ? bfc_add_str(self->filter, data, len, &err)
		: bfc_contains_str(self->filter, data, len, &err);
	if (result < 0)
		return bfpy_raise(&err), NULL;
	if (adding)
		Py_RETURN_NONE;
	return PyBool_FromLong(result == 1);
}

static PyObject *
Filter_contains_str(FilterObject *self, PyObject *text)
{
	return str_key(self, text, false);
}

static PyObject *
Filter_add_str(FilterObject *self, PyObject *text)
{
	return str_key(self, text, true);
}

static PyObject *
Filter_contains_many(FilterObject *self, PyObject *keys)
{
	Py_ssize_t	n = 0;
	uint8_t    *found = bfpy_probe_many(self->filter, keys, &n);
	PyObject   *answers;

	if (found == NULL)
		return NULL;
	if ((answers = PyList_New(n)) != NULL)
		for (Py_ssize_t i = 0; i < n; i++)
		{
			PyObject   *answer = found[i] ? Py_True : Py_False;

			Py_INCREF(answer);
			PyList_SET_ITEM(answers, i, answer);
		}
	PyMem_Free(found);
	return answers;
}

/* contains_many's answers as a bytearray of 1s and 0s: LiveFilter ORs two of them. */
static PyObject *
Filter_probe_many(FilterObject *self, PyObject *keys)
{
	Py_ssize_t	n = 0;
	uint8_t    *found = bfpy_probe_many(self->filter, keys, &n);
	PyObject   *answers;

	if (found == NULL)
		return NULL;
	answers = PyByteArray_FromStringAndSize((const char *) found, n);
	PyMem_Free(found);
	return answers;
}

static PyObject *
Filter_add_many(FilterObject *self, PyObject *keys)
{
	if (bfpy_add_many(self->filter, keys) < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* ---- combining ---- */

static PyObject *
Filter_update(FilterObject *self, PyObject *other)
{
	bfc_error	err;

	if (!PyObject_TypeCheck(other, &FilterType))
		return PyErr_Format(PyExc_TypeError, "a union takes a bloomfilter.Filter, not %s",
							Py_TYPE(other)->tp_name);
	if (bfc_union(self->filter, ((FilterObject *) other)->filter, &err) < 0)
		return bfpy_raise(&err), NULL;
	Py_INCREF(self);
	return (PyObject *) self;
}

static PyObject *
Filter_apply_changes(FilterObject *self, PyObject *delta)
{
	Py_buffer	data;
	bfc_error	err;
	int			status;

	if (PyObject_GetBuffer(delta, &data, PyBUF_SIMPLE) < 0)
		return NULL;
	status = bfc_apply_changes(self->filter, data.buf, data.len, &err);
	PyBuffer_Release(&data);
	if (status < 0)
		return bfpy_raise(&err), NULL;
	Py_INCREF(self);
	return (PyObject *) self;
}

/* ---- serialising and inspecting ---- */

static PyObject *
Filter_to_bytes(FilterObject *self, PyObject *unused)
{
	size_t		len;
	const uint8_t *bytes = bfc_bytes(self->filter, &len);

	(void) unused;
	return PyBytes_FromStringAndSize((const char *) bytes, (Py_ssize_t) len);
}

static PyObject *
Filter_to_text(FilterObject *self, PyObject *unused)
{
	char	   *text = PyMem_Malloc(bfc_text_size(self->filter));
	size_t		len;
	PyObject   *result;

	(void) unused;
	if (text == NULL)
		return PyErr_NoMemory();
	len = bfc_write_text(self->filter, text);
	result = PyUnicode_DecodeASCII(text, (Py_ssize_t) len, NULL);
	PyMem_Free(text);
	return result;
}

static PyObject *
Filter_kind_number(FilterObject *self, PyObject *unused)
{
	(void) unused;
	return PyLong_FromLong((long) bfc_filter_kind(self->filter));
}

/* info's fields that bfc_info leaves out or spells otherwise: NULL, segments, growth. */
static int
add_info_extras(PyObject *info, const bfc_info *fields, const bfc_filter *filter)
{
	int			growth = bfc_growth(filter);
	PyObject   *segments = PyLong_FromLong(bfc_segments(filter));
	PyObject   *growth_value = growth ? PyLong_FromLong(growth) : Py_None;
	int			status = -1;

	if (growth == 0)
		Py_INCREF(Py_None);

	if (segments != NULL && growth_value != NULL &&
		(fields->key_environment[0] != '\0' ||
		 PyDict_SetItemString(info, "key_environment", Py_None) == 0) &&
		PyDict_SetItemString(info, "segments", segments) == 0 &&
		PyDict_SetItemString(info, "growth", growth_value) == 0)
		status = 0;
	Py_XDECREF(segments);
	Py_XDECREF(growth_value);
	return status;
}

static PyObject *
Filter_info(FilterObject *self, PyObject *unused)
{
	bfc_info	fields;
	PyObject   *info;

	(void) unused;
	bfc_get_info(self->filter, &fields);
	info = Py_BuildValue("{s:i,s:s,s:L,s:L,s:i,s:L,s:d,s:L,s:L,s:d,s:d,s:d,s:s,s:L,s:s,s:O}",
						 "format_version", fields.format_version,
						 "layout", fields.layout,
						 "bits", (long long) fields.bits,
						 "bytes", (long long) fields.bytes,
						 "hashes", fields.hashes,
						 "capacity", (long long) fields.capacity,
						 "target_fpr", fields.target_fpr,
						 "inserted", (long long) fields.inserted,
						 "bits_set", (long long) fields.bits_set,
						 "fill_ratio", fields.fill_ratio,
						 "estimated_distinct", fields.estimated_distinct,
						 "estimated_fpr", fields.estimated_fpr,
						 "key_kind", fields.key_kind,
						 "seed", (long long) fields.seed,
						 "key_environment", fields.key_environment,
						 "over_capacity", fields.over_capacity ? Py_True : Py_False);
	if (info != NULL && add_info_extras(info, &fields, self->filter) < 0)
		Py_CLEAR(info);
	return info;
}

/* ---- the type ---- */

PyDoc_STRVAR(contains_doc,
			 "contains(key)\n\n"
			 "False if ``key`` was certainly never added; True if it may have\n"
			 "been (the same answer ``bloom_contains`` gives in the server).");
PyDoc_STRVAR(add_doc,
			 "add(key)\n\nAdds ``key``; the filter takes the key's kind if it had none.");
PyDoc_STRVAR(contains_str_doc,
			 "contains_str(text)\n\n"
			 "The key spelled as text, read as the server's input function for\n"
			 "the filter's kind would read it: \"0.50\" or \"5e-1\" for a number\n"
			 "filter, a uuid in either case with or without braces, \"yes\" for a\n"
			 "boolean, \"\\\\x00ff\" for bytea, ISO 8601 for dates and timestamps\n"
			 "(see the README for what is refused).  For keys that arrive as\n"
			 "strings.  A filter with no kind yet answers False.");
PyDoc_STRVAR(add_str_doc,
			 "add_str(text)\n\n"
			 "Adds the key spelled as text, read as :meth:`contains_str` reads\n"
			 "it; the filter needs a kind (from :meth:`empty` or a first key).");
PyDoc_STRVAR(contains_many_doc,
			 "contains_many(keys)\n\n"
			 "``[self.contains(k) for k in keys]``, in one call into the\n"
			 "library for a list of ints (or of floats) and for a buffer of\n"
			 "int64 or float64 items (``array('q')``, a numpy int64 array),\n"
			 "read in place.");
PyDoc_STRVAR(add_many_doc,
			 "add_many(keys)\n\n"
			 "Adds every key of ``keys``, in one call for a list of ints or a\n"
			 "buffer of int64 items.");
PyDoc_STRVAR(update_doc,
			 "update(other)\n\nAdds the keys of ``other`` to this filter (an in-place union).");
PyDoc_STRVAR(apply_changes_doc,
			 "apply_changes(delta)\n\n"
			 "Applies a delta of the ``bloomfilter`` index this filter is a copy\n"
			 "of: ``delta`` from ``bloom_index_changes(index, since,\n"
			 "since_timeline, since_build)``, to a copy loaded from\n"
			 "``bloom_index_snapshot(index)`` and brought up to ``since``.  The\n"
			 "filter then holds every key the index held at the delta's ``upto``\n"
			 "(a growing filter takes the index's new segments).\n\n"
			 "Applied whole or not at all: a damaged delta raises\n"
			 ":class:`InvalidFilterError`, one of another filter (the index was\n"
			 "rebuilt, or it is another index's) :class:`DeltaMismatchError`, and\n"
			 "the filter is then unchanged.  :class:`LiveFilter` does this for\n"
			 "you.");
PyDoc_STRVAR(to_bytes_doc,
			 "to_bytes()\n\nThe binary form, for ``%s::bytea::bloom`` or a bytea column.");
PyDoc_STRVAR(to_text_doc,
			 "to_text()\n\nThe text form, ``bloom:`` and base64, as the server prints it.");
PyDoc_STRVAR(copy_doc, "copy()\n\nAn independent copy.");
PyDoc_STRVAR(info_doc,
			 "info()\n\n"
			 "The fields of the server's ``bloom_info(filter)``, as a dict:\n"
			 "for a growing filter, layout \"chained\", bits and capacity summed\n"
			 "over its segments and hashes its last segment's; ``segments`` (1\n"
			 "for a filter of fixed size) and ``growth`` (None for one).");

static PyMethodDef Filter_methods[] = {
	{"_from_form", (PyCFunction) Filter_from_form, METH_VARARGS | METH_CLASS, NULL},
	{"_create", (PyCFunction) Filter_create, METH_VARARGS | METH_CLASS, NULL},
	{"_set_v1_utf8", (PyCFunction) Filter_set_v1_utf8, METH_O, NULL},
	{"_call", (PyCFunction) (void (*) (void)) Filter_call, METH_FASTCALL, NULL},
	{"_probe_many", (PyCFunction) Filter_probe_many, METH_O, NULL},
	{"_kind_number", (PyCFunction) Filter_kind_number, METH_NOARGS, NULL},
	{"copy", (PyCFunction) Filter_copy, METH_NOARGS, copy_doc},
	{"contains", (PyCFunction) Filter_contains, METH_O, contains_doc},
	{"add", (PyCFunction) Filter_add, METH_O, add_doc},
	{"contains_str", (PyCFunction) Filter_contains_str, METH_O, contains_str_doc},
	{"add_str", (PyCFunction) Filter_add_str, METH_O, add_str_doc},
	{"contains_many", (PyCFunction) Filter_contains_many, METH_O, contains_many_doc},
	{"add_many", (PyCFunction) Filter_add_many, METH_O, add_many_doc},
	{"update", (PyCFunction) Filter_update, METH_O, update_doc},
	{"apply_changes", (PyCFunction) Filter_apply_changes, METH_O, apply_changes_doc},
	{"to_bytes", (PyCFunction) Filter_to_bytes, METH_NOARGS, to_bytes_doc},
	{"to_text", (PyCFunction) Filter_to_text, METH_NOARGS, to_text_doc},
	{"info", (PyCFunction) Filter_info, METH_NOARGS, info_doc},
	{NULL, NULL, 0, NULL}
};

static PySequenceMethods Filter_as_sequence = {
	.sq_contains = (objobjproc) Filter_sq_contains,
};

static PyTypeObject FilterType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "_bloomfilter.Filter",
	.tp_doc = "A bloom filter of the client library: the base of bloomfilter.Filter.",
	.tp_basicsize = sizeof(FilterObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_new = Filter_new,
	.tp_dealloc = (destructor) Filter_dealloc,
	.tp_methods = Filter_methods,
	.tp_as_sequence = &Filter_as_sequence,
};

/* ---- the module ---- */

static PyMethodDef module_methods[] = {
	{"set_error_classes", set_error_classes, METH_O,
	"Registers the exception class to raise for each of the library's error codes."},
	{NULL, NULL, 0, NULL}
};

static struct PyModuleDef module_definition = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_bloomfilter",
	.m_doc = "The compiled half of the bloomfilter module: import bloomfilter instead.",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__bloomfilter(void)
{
	PyObject   *module;

	if (bfpy_keys_init() < 0 || PyType_Ready(&FilterType) < 0)
		return NULL;
	if ((module = PyModule_Create(&module_definition)) == NULL)
		return NULL;
	Py_INCREF(&FilterType);
	if (PyModule_AddObject(module, "Filter", (PyObject *) &FilterType) < 0 ||
		PyModule_AddIntConstant(module, "INTERFACE", BFPY_INTERFACE) < 0 ||
		PyModule_AddStringConstant(module, "LIBRARY_VERSION", BFC_VERSION) < 0)
	{
		Py_DECREF(&FilterType);
		Py_DECREF(module);
		return NULL;
	}
	return module;
}
