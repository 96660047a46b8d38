'use strict';
// errors.js: the package's errors, one class per code of the C client
// library (client/bloomfilter.h, enum bfc_code), all BloomFilterError.
// `code` is the C name ('BFC_ERR_KIND'), Node's way of naming an error's
// kind; `errno` the C value.

const CODES = Object.freeze({
  BFC_OK: 0,
  BFC_ERR_INVALID: 1,
  BFC_ERR_KIND: 2,
  BFC_ERR_UNSUPPORTED: 3,
  BFC_ERR_KEY: 4,
  BFC_ERR_PARAM: 5,
  BFC_ERR_TOO_LARGE: 6,
  BFC_ERR_INCOMPATIBLE: 7,
  BFC_ERR_NOMEM: 8,
  BFC_ERR_MISMATCH: 9,
});

const NAMES = Object.fromEntries(Object.entries(CODES).map(([name, n]) => [n, name]));

class BloomFilterError extends Error {
  constructor(message, code = 'BFC_ERR_PARAM') {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.errno = CODES[code];
  }
}

/** Bytes or text that are not a valid bloom value or delta (the server refuses them too). */
class InvalidFilterError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_INVALID'); }
}

/** A key of another kind than the filter holds, or a value that is no key. */
class KindError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_KIND'); }
}

/** A key the client cannot hash for this filter: kind "other", or a non-ASCII
 * text key for a version 1 filter of an unknown encoding. */
class UnsupportedKeyError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_UNSUPPORTED'); }
}

/** A key that is not a value of its kind (uuid('nope'), an invalid Date). */
class KeySyntaxError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_KEY'); }
}

/** A bad capacity, rate, growth factor or kind. */
class ParameterError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_PARAM'); }
}

/** A filter that would exceed the size a bloom value may have. */
class TooLargeError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_TOO_LARGE'); }
}

/** A union of filters with different parameters or kinds. */
class IncompatibleFiltersError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_INCOMPATIBLE'); }
}

/** The WebAssembly memory (at most 4 GB) could not hold a filter. */
class OutOfMemoryError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_NOMEM'); }
}

/** The database LiveFilter syncs from lacks the functions for following an
 * index (no bloomfilter extension, or one older than 1.1): the message says
 * what to run; `cause` is node-postgres's error. */
class ExtensionError extends BloomFilterError {
  constructor(message, cause) {
    super(message, 'BFC_ERR_PARAM');
    this.cause = cause;
  }
}

/** A delta of another filter than the copy it was applied to (another
 * build of the index, or another index): load a new snapshot. */
class DeltaMismatchError extends BloomFilterError {
  constructor(message) { super(message, 'BFC_ERR_MISMATCH'); }
}

const BY_CODE = {
  BFC_ERR_INVALID: InvalidFilterError,
  BFC_ERR_KIND: KindError,
  BFC_ERR_UNSUPPORTED: UnsupportedKeyError,
  BFC_ERR_KEY: KeySyntaxError,
  BFC_ERR_PARAM: ParameterError,
  BFC_ERR_TOO_LARGE: TooLargeError,
  BFC_ERR_INCOMPATIBLE: IncompatibleFiltersError,
  BFC_ERR_NOMEM: OutOfMemoryError,
  BFC_ERR_MISMATCH: DeltaMismatchError,
};

/** The error of a C code (a number) and message. */
function errorOf(errno, message) {
  const code = NAMES[errno];
  const Class = BY_CODE[code];
  return Class ? new Class(message) : new BloomFilterError(message, code);
}

module.exports = {
  CODES,
  errorOf,
  BloomFilterError,
  InvalidFilterError,
  KindError,
  UnsupportedKeyError,
  KeySyntaxError,
  ParameterError,
  TooLargeError,
  IncompatibleFiltersError,
  OutOfMemoryError,
  DeltaMismatchError,
  ExtensionError,
};
