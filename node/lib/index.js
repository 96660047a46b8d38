'use strict';
// index.js: the package's entry point, @bloomfilter/client: Filter (a bloom
// value, over the extension's C core compiled to WebAssembly), the key
// wrappers, LiveFilter (a copy that follows a bloomfilter index through
// node-postgres) and the errors.

const { Filter, KINDS } = require('./filter');
const { LiveFilter } = require('./live');
const keys = require('./keys');
const errors = require('./errors');

module.exports = {
  Filter,
  LiveFilter,
  KINDS,
  Key: keys.Key,
  uuid: keys.uuid,
  numeric: keys.numeric,
  date: keys.date,
  timestamp: keys.timestamp,
  timestamptz: keys.timestamptz,
  CODES: errors.CODES,
  BloomFilterError: errors.BloomFilterError,
  InvalidFilterError: errors.InvalidFilterError,
  KindError: errors.KindError,
  UnsupportedKeyError: errors.UnsupportedKeyError,
  KeySyntaxError: errors.KeySyntaxError,
  ParameterError: errors.ParameterError,
  TooLargeError: errors.TooLargeError,
  IncompatibleFiltersError: errors.IncompatibleFiltersError,
  OutOfMemoryError: errors.OutOfMemoryError,
  DeltaMismatchError: errors.DeltaMismatchError,
};
