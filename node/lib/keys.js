'use strict';
// keys.js: key wrappers for the kinds JavaScript has no type of (uuid,
// numeric, date, timestamp, and timestamptz to the microsecond), read when
// they are made by the client library's parsers, with the server's input
// syntax (see docs/client.md, "What the client hashes exactly").

const wasm = require('./wasm');
const { KeySyntaxError, KindError } = require('./errors');

const x = wasm.exports;
const EPOCH_MS = 946684800000; // 2000-01-01T00:00:00Z, PostgreSQL's epoch
const DAY_MS = 86400000;

/** A key of an explicit kind; made by uuid(), numeric(), date(),
 * timestamp() and timestamptz(). */
class Key {
  constructor(kind, value) {
    this.kind = kind;
    this.value = value; // uuid: 16 bytes; numeric: its text; date: days; timestamps: microseconds
    Object.freeze(this);
  }

  toString() {
    switch (this.kind) {
      case 'uuid': {
        const hex = Buffer.from(this.value).toString('hex');
        return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      }
      default:
        return `${this.kind}(${this.value})`;
    }
  }
}

function milliseconds(date) {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new KeySyntaxError('an invalid Date is not a key');
  return ms;
}

/** Microseconds since 2000-01-01 of a Date (UTC), as a bigint. */
function dateMicroseconds(date) {
  return BigInt(milliseconds(date) - EPOCH_MS) * 1000n;
}

function parsed(parser, text, ...args) {
  if (typeof text !== 'string') return null;
  const [at, len] = wasm.scratchUtf8(text);
  wasm.check(parser(at, len, ...args, wasm.ERR));
  return true;
}

function refuse(what, value) {
  const type = value === null ? 'null' : value instanceof Uint8Array ? `${value.length} bytes` : typeof value;
  return new KindError(`${what}, not ${type}`);
}

/** A uuid key: text as uuid_in reads it (either case, with or without
 * braces and hyphens), or its 16 bytes. */
function uuid(value) {
  if (value instanceof Uint8Array && value.length === 16) return new Key('uuid', Uint8Array.from(value));
  if (parsed(x.bfn_parse_uuid, value, wasm.OUT)) {
    return new Key('uuid', wasm.views.u8.slice(wasm.OUT, wasm.OUT + 16));
  }
  throw refuse('uuid() takes a string or 16 bytes', value);
}

/** A number key of any size or precision (a numeric column's value): text
 * as numeric_in reads it ('0.50' finds 0.5, '1e3' finds 1000), a bigint,
 * or a number by its shortest text (numeric(0.1) is 0.1, not the double
 * nearest to it). */
function numeric(value) {
  let text = value;
  if (typeof value === 'number' || typeof value === 'bigint') text = String(value);
  if (parsed(x.bfn_check_number, text)) return new Key('numeric', text);
  throw refuse('numeric() takes a string, number or bigint', value);
}

/** A date key: ISO 8601 text ('2024-05-01', 'infinity'), or a Date's
 * calendar day in UTC. */
function date(value) {
  if (value instanceof Date) return new Key('date', Math.floor((milliseconds(value) - EPOCH_MS) / DAY_MS));
  if (parsed(x.bfn_parse_date, value, wasm.OUT)) return new Key('date', wasm.views.dv.getInt32(wasm.OUT, true));
  throw refuse('date() takes a string or a Date', value);
}

function timestampOf(kind, withZone, value) {
  if (value instanceof Date) return new Key(kind, dateMicroseconds(value));
  if (parsed(x.bfn_parse_timestamp, value, withZone ? 1 : 0, wasm.OUT)) {
    return new Key(kind, wasm.views.dv.getBigInt64(wasm.OUT, true));
  }
  throw refuse(`${kind}() takes a string or a Date`, value);
}

/** A timestamp (without time zone) key: ISO 8601 text without an offset,
 * to the microsecond ('2024-05-01 12:30:00.25'), or a Date's wall clock in
 * UTC. */
function timestamp(value) {
  return timestampOf('timestamp', false, value);
}

/** A timestamptz key to the microsecond: ISO 8601 text with an offset
 * ('2024-05-01 12:30:00.123456+02'), or a Date (which a plain Date key
 * is too). */
function timestamptz(value) {
  return timestampOf('timestamptz', true, value);
}

module.exports = { Key, uuid, numeric, date, timestamp, timestamptz, dateMicroseconds };
