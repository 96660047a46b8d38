/*-------------------------------------------------------------------------
 *
 * pyfilter.h
 *	  What the two files of the compiled module _bloomfilter share: turning
 *	  the client library's errors into the Python module's exceptions
 *	  (_bloomfilter.c) and turning Python keys into the library's typed
 *	  calls (pykeys.c).
 *
 * Every function here returns with a Python exception set when it fails,
 * so that the type's methods only pass failures on.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFPY_PYFILTER_H
#define BFPY_PYFILTER_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>

#include "bloomfilter.h"

/* ---- _bloomfilter.c ---- */

/*
 * Raises the exception class bloomfilter.py registered for err->code
 * (KindError for BFC_ERR_KIND, ...) with err's message; returns -1.
 */
extern int	bfpy_raise(const bfc_error *err);

/* ---- pykeys.c ---- */

/* Looks up the key types that have no C API (uuid.UUID, decimal.Decimal). */
extern int	bfpy_keys_init(void);

/*
 * One key, dispatched by its Python type to the library's typed probe (1
 * or 0) or add (0); -1 with an exception for a key of no supported type, of
 * another kind than the filter's, or that is not a value of its kind.
 */
extern int	bfpy_key(bfc_filter *filter, PyObject *key, bool adding);

/*
 * The answers for every key of keys (any iterable; a buffer of int64 or
 * float64 items is read in place) into a new buffer of 1s and 0s that the
 * caller frees with PyMem_Free; NULL with an exception on failure.
 */
extern uint8_t *bfpy_probe_many(bfc_filter *filter, PyObject *keys, Py_ssize_t *count);

/* Adds every key of keys; 0, or -1 with an exception. */
extern int	bfpy_add_many(bfc_filter *filter, PyObject *keys);

#endif							/* BFPY_PYFILTER_H */
