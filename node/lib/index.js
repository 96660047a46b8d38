'use strict';
// index.js: the package's entry point, @bloomfilter/client: Filter (a bloom
// value, over the extension's C core compiled to WebAssembly), the key
// wrappers, LiveFilter (a copy that follows a bloomfilter index through
// node-postgres) and the errors.  Exported as one object literal of plain
// names, which is what lets `import { Filter } from '@bloomfilter/client'`
// find them in this CommonJS module.

const { Filter, KINDS } = require('./filter');
const { LiveFilter } = require('./live');
const {
  Key, uuid, numeric, date, timestamp, timestamptz,
} = require('./keys');
const {
  CODES, BloomFilterError, InvalidFilterError, KindError, UnsupportedKeyError, KeySyntaxError,
  ParameterError, TooLargeError, IncompatibleFiltersError, OutOfMemoryError, DeltaMismatchError,
  ExtensionError,
} = require('./errors');

module.exports = {
  Filter,
  LiveFilter,
  KINDS,
  Key,
  uuid,
  numeric,
  date,
  timestamp,
  timestamptz,
  CODES,
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
