'use strict';
// filter.js: Filter, a bloom value as the server's `bloom` type holds it,
// over the client library in WebAssembly (wasm.js): loading, creating,
// probing and adding keys chosen by their JavaScript type, batches,
// union, deltas, serialising, bloom_info's fields.  Every decision about
// a key's bytes or a filter's bits is the library's (the extension's own
// core); this file only moves values in and out of its memory.

const wasm = require('./wasm');
const { Key, dateMicroseconds } = require('./keys');
const { KindError, ParameterError } = require('./errors');

const x = wasm.exports;
const { ERR, OUT, check, checkPointer } = wasm;

/** The key kinds, by bloom_info's names, with their stored numbers. */
const KINDS = Object.freeze({
  none: 0, number: 1, float: 2, text: 3, bytea: 4, uuid: 5,
  boolean: 6, date: 7, timestamp: 8, timestamptz: 9, other: 10,
});
const KIND_NAMES = Object.freeze(Object.fromEntries(Object.entries(KINDS).map(([k, v]) => [v, k])));

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
// Keys per call of a batch: bounds the scratch memory a batch takes.
const BATCH = 65536;
// Inputs above this size get memory of their own rather than the scratch
// area, which would keep their size for the life of the process.
const SCRATCH_LIMIT = 1 << 20;

// The library's functions per key type, for a probe and for an add.
const PROBE = {
  number: x.bfn_contains_number, int64: x.bfc_contains_int64, double: x.bfc_contains_double,
  text: x.bfc_contains_text, bytea: x.bfc_contains_bytea, uuid: x.bfc_contains_uuid,
  bool: x.bfc_contains_bool, date: x.bfc_contains_date, timestamp: x.bfc_contains_timestamp,
  strAs: x.bfc_contains_str_as,
};
const ADD = {
  number: x.bfn_add_number, int64: x.bfc_add_int64, double: x.bfc_add_double,
  text: x.bfc_add_text, bytea: x.bfc_add_bytea, uuid: x.bfc_add_uuid,
  bool: x.bfc_add_bool, date: x.bfc_add_date, timestamp: x.bfc_add_timestamp,
  strAs: x.bfc_add_str_as,
};

function typeName(key) {
  if (key === null) return 'null';
  if (typeof key === 'object') return key.constructor ? key.constructor.name : 'object';
  return typeof key;
}

function notAKey(key) {
  return new KindError('bloomfilter keys are number, bigint, string, boolean, Buffer or '
    + 'Uint8Array, Date, or uuid(), numeric(), date(), timestamp(), timestamptz(); not '
    + typeName(key));
}

/** Text as a key of the given kind, read by the library's parsers. */
function keyAsText(ptr, ops, kind, text) {
  const [at, len] = wasm.scratchUtf8(text);
  return check(ops.strAs(ptr, kind, at, len, ERR));
}

/** One key, by its JavaScript type: 1 or 0 for a probe, 0 for an add. */
function callKey(ptr, key, ops) {
  switch (typeof key) {
    case 'number':
      return check(ops.number(ptr, key, ERR));
    case 'string': {
      const [at, len] = wasm.scratchUtf8(key);
      return check(ops.text(ptr, at, len, ERR));
    }
    case 'bigint':
      if (key >= INT64_MIN && key <= INT64_MAX) return check(ops.int64(ptr, key, ERR));
      return keyAsText(ptr, ops, KINDS.number, key.toString());
    case 'boolean':
      return check(ops.bool(ptr, key ? 1 : 0, ERR));
    case 'object':
      if (key instanceof Uint8Array) {
        const at = wasm.scratchBytes(key);
        return check(ops.bytea(ptr, at, key.length, ERR));
      }
      if (key instanceof Date) {
        return check(ops.timestamp(ptr, KINDS.timestamptz, dateMicroseconds(key), ERR));
      }
      if (key instanceof Key) return callWrapped(ptr, key, ops);
      break;
    default:
      break;
  }
  throw notAKey(key);
}

function callWrapped(ptr, key, ops) {
  switch (key.kind) {
    case 'uuid':
      wasm.views.u8.set(key.value, OUT);
      return check(ops.uuid(ptr, OUT, ERR));
    case 'numeric':
      return keyAsText(ptr, ops, KINDS.number, key.value);
    case 'date':
      return check(ops.date(ptr, key.value, ERR));
    case 'timestamp':
      return check(ops.timestamp(ptr, KINDS.timestamp, key.value, ERR));
    case 'timestamptz':
      return check(ops.timestamp(ptr, KINDS.timestamptz, key.value, ERR));
    default:
      throw notAKey(key);
  }
}

function asBytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new ParameterError(`expected a Buffer, Uint8Array or ArrayBuffer, not ${typeName(data)}`);
}

/** Calls fn(pointer, length) with data copied into the module's memory. */
function withBytes(data, fn) {
  const bytes = asBytes(data);
  if (bytes.length <= SCRATCH_LIMIT) return fn(wasm.scratchBytes(bytes), bytes.length);
  const at = wasm.malloc(bytes.length);
  try {
    wasm.views.u8.set(bytes, at);
    return fn(at, bytes.length);
  } finally {
    x.free(at);
  }
}

function toUtf8Bytes(text) {
  if (typeof text === 'string') return Buffer.from(text, 'utf8');
  return text;
}

// ---- batches ----------------------------------------------------------

/** The one kind of every key of a batch that has a batch form, or null. */
function batchType(keys) {
  const n = keys.length;
  if (n === 0) return null;
  if (keys instanceof Float64Array) return 'float64array';
  if (keys instanceof BigInt64Array) return 'bigint64array';
  const first = keys[0];
  let type = typeof first;
  if (type === 'object') {
    if (first instanceof Uint8Array) type = 'bytes';
    else if (first instanceof Key && first.kind === 'uuid') type = 'uuid';
    else return null;
  }
  switch (type) {
    case 'number':
    case 'string':
    case 'bigint':
      for (let i = 1; i < n; i++) if (typeof keys[i] !== type) return null;
      if (type === 'bigint') {
        for (let i = 0; i < n; i++) if (keys[i] < INT64_MIN || keys[i] > INT64_MAX) return null;
      }
      return type;
    case 'bytes':
      for (let i = 1; i < n; i++) if (!(keys[i] instanceof Uint8Array)) return null;
      return type;
    case 'uuid':
      for (let i = 1; i < n; i++) {
        const k = keys[i];
        if (!(k instanceof Key) || k.kind !== 'uuid') return null;
      }
      return type;
    default:
      return null;
  }
}

/**
 * Runs a batch of keys of one type through the library, BATCH at a time:
 * probes into answers (see collect), or adds when answers is null.
 */
function runBatch(ptr, type, keys, answers) {
  const n = keys.length;
  for (let start = 0; start < n; start += BATCH) {
    const m = Math.min(BATCH, n - start);
    switch (type) {
      case 'number':
      case 'float64array': {
        const at = wasm.reserve(9 * m);
        const f64 = wasm.views.f64;
        const base = at / 8;
        if (type === 'float64array') f64.set(keys.subarray(start, start + m), base);
        else for (let i = 0; i < m; i++) f64[base + i] = keys[start + i];
        if (answers) check(x.bfn_contains_number_many(ptr, at, m, at + 8 * m, ERR));
        else check(x.bfn_add_number_many(ptr, at, m, ERR));
        if (answers) collect(answers, start, at + 8 * m, m);
        break;
      }
      case 'bigint':
      case 'bigint64array': {
        const at = wasm.reserve(9 * m);
        const i64 = wasm.views.i64;
        const base = at / 8;
        if (type === 'bigint64array') i64.set(keys.subarray(start, start + m), base);
        else for (let i = 0; i < m; i++) i64[base + i] = keys[start + i];
        if (answers) check(x.bfc_contains_int64_many(ptr, at, m, at + 8 * m, ERR));
        else check(x.bfc_add_int64_many(ptr, at, m, ERR));
        if (answers) collect(answers, start, at + 8 * m, m);
        break;
      }
      case 'uuid': {
        if (!answers) {
          for (let i = 0; i < m; i++) callKey(ptr, keys[start + i], ADD);
          break;
        }
        const at = wasm.reserve(17 * m);
        const u8 = wasm.views.u8;
        for (let i = 0; i < m; i++) u8.set(keys[start + i].value, at + 16 * i);
        check(x.bfc_contains_uuid_many(ptr, at, m, at + 16 * m, ERR));
        collect(answers, start, at + 16 * m, m);
        break;
      }
      case 'string':
      case 'bytes':
        packed(ptr, type, keys, start, m, answers);
        break;
      default:
        throw new Error(`bloomfilter: no batch form for ${type}`);
    }
  }
}

/** Answers from the module's memory: bytes into a Uint8Array, booleans
 * into an array. */
function collect(answers, start, at, m) {
  const u8 = wasm.views.u8;
  if (answers instanceof Uint8Array) answers.set(u8.subarray(at, at + m), start);
  else for (let i = 0; i < m; i++) answers[start + i] = u8[at + i] === 1;
}

/** Strings (text) or byte arrays (bytea) packed one after another, key i
 * at data[offsets[i], offsets[i + 1]). */
function packed(ptr, type, keys, start, m, answers) {
  let room = 0;
  for (let i = 0; i < m; i++) room += type === 'string' ? 3 * keys[start + i].length : keys[start + i].length;
  const offsetsAt = wasm.reserve(4 * (m + 1) + m + room + 8);
  const outAt = offsetsAt + 4 * (m + 1);
  const dataAt = outAt + m;
  const u32 = wasm.views.u32;
  const u8 = wasm.views.u8;
  const base = offsetsAt / 4;
  let used = 0;
  u32[base] = 0;
  for (let i = 0; i < m; i++) {
    const key = keys[start + i];
    if (type === 'string') used += wasm.writeUtf8(key, dataAt + used);
    else {
      u8.set(key, dataAt + used);
      used += key.length;
    }
    u32[base + i + 1] = used;
  }
  const kind = type === 'string' ? KINDS.text : KINDS.bytea;
  if (answers) {
    check(x.bfc_contains_packed(ptr, kind, dataAt, offsetsAt, m, outAt, ERR));
    collect(answers, start, outAt, m);
  } else {
    check(x.bfc_add_packed(ptr, kind, dataAt, offsetsAt, m, ERR));
  }
}

// ---- Filter -----------------------------------------------------------

const INTERNAL = Symbol('bloomfilter.Filter');
const registry = new FinalizationRegistry((ptr) => x.bfc_free(ptr));

/**
 * A bloom filter, as the server's `bloom` type holds it.  Make one with
 * Filter.fromBytes, Filter.fromText, Filter.load or Filter.empty.
 *
 * Its memory lives in the WebAssembly module: it is released when the
 * filter is garbage collected, or at once by free().
 */
class Filter {
  #ptr;

  constructor(token, ptr) {
    if (token !== INTERNAL) {
      throw new ParameterError('use Filter.fromBytes, Filter.fromText, Filter.load or Filter.empty');
    }
    this.#ptr = ptr;
    registry.register(this, ptr, this);
  }

  static #wrap(ptr, options) {
    const filter = new Filter(INTERNAL, ptr);
    if (options && options.v1Utf8) x.bfc_set_v1_utf8(ptr, 1);
    return filter;
  }

  /** The binary form (`SELECT f::bytea`, a Buffer with node-postgres),
   * validated as the server's bytea::bloom cast validates it.
   * options.v1Utf8: a version 1 filter's database had the UTF8 encoding
   * (its non-ASCII text keys are refused otherwise). */
  static fromBytes(data, options) {
    const bytes = asBytes(data);
    // copied once into memory the filter then owns (bfc_adopt_bytes): a
    // large filter takes its size in the module's memory once, not twice
    const at = wasm.malloc(Math.max(bytes.length, 1));
    wasm.views.u8.set(bytes, at);
    const ptr = x.bfc_adopt_bytes(at, bytes.length, ERR) >>> 0;
    if (ptr === 0) {
      x.free(at);
      throw wasm.lastError();
    }
    return Filter.#wrap(ptr, options);
  }

  /** The text form (`bloom:` and base64, as `SELECT f` returns it),
   * validated as the server's text input validates it. */
  static fromText(text, options) {
    if (typeof text !== 'string') throw new ParameterError(`fromText takes a string, not ${typeName(text)}`);
    const bytes = Buffer.from(text, 'utf8');
    return Filter.#wrap(withBytes(bytes, (at, len) => checkPointer(x.bfc_from_text(at, len, ERR))), options);
  }

  /** Any form: binary, text, or hex (`\x...`, as psql prints a bytea),
   * told apart by how it starts. */
  static load(data, options) {
    return Filter.#wrap(withBytes(toUtf8Bytes(data), (at, len) => checkPointer(x.bfc_load(at, len, ERR))), options);
  }

  /**
   * A new filter for `capacity` keys at false-positive rate `fpr`, sized
   * exactly as bloom_empty(capacity, fpr[, growth]) sizes it, so that the
   * two can be unioned.  `kind`: the kind of its keys ('number', 'float',
   * 'text', 'bytea', 'uuid', 'boolean', 'date', 'timestamp',
   * 'timestamptz'), or null for whatever comes first.  `growth` 0 (the
   * default) makes a filter of fixed size; 2 to 16 one that grows by
   * segments, each `growth` times larger, keeping its rate below fpr.
   */
  static empty(kind, capacity, fpr = 0.01, { growth = 0 } = {}) {
    const number = kind === null || kind === undefined ? 0 : KINDS[kind];
    if (number === undefined || number === KINDS.other || typeof kind === 'number') {
      throw new ParameterError(`unknown key kind ${String(kind)}; one of `
        + Object.keys(KINDS).filter((k) => k !== 'none' && k !== 'other').join(', '));
    }
    let cap;
    if (typeof capacity === 'bigint') cap = capacity;
    else if (Number.isInteger(capacity)) cap = BigInt(capacity);
    if (cap === undefined || cap < 1n || cap > INT64_MAX) {
      throw new ParameterError('capacity must be an integer from 1 to 2^63 - 1');
    }
    if (typeof fpr !== 'number') throw new ParameterError('fpr must be a number');
    if (!Number.isInteger(growth) || !(growth === 0 || (growth >= 2 && growth <= 16))) {
      throw new ParameterError('growth must be 0 (a filter of fixed size) or an integer from 2 to 16');
    }
    const ptr = growth === 0 ? x.bfc_create(number, cap, fpr, ERR)
      : x.bfc_create_growing(number, cap, fpr, growth, ERR);
    return new Filter(INTERNAL, checkPointer(ptr));
  }

  #handle() {
    const ptr = this.#ptr;
    if (ptr === 0) throw new ParameterError('the filter was freed');
    return ptr;
  }

  /** An independent copy. */
  copy() {
    return new Filter(INTERNAL, checkPointer(x.bfc_copy(this.#handle(), ERR)));
  }

  /** Releases the filter's memory now; the filter is unusable after. */
  free() {
    if (this.#ptr !== 0) {
      registry.unregister(this);
      x.bfc_free(this.#ptr);
      this.#ptr = 0;
    }
  }

  // ---- keys -----------------------------------------------------------

  /** false if `key` was certainly never added; true if it may have been
   * (the answer bloom_contains gives in the server, false positives
   * included).  A key of another kind than the filter's throws KindError. */
  contains(key) {
    return callKey(this.#handle(), key, PROBE) === 1;
  }

  /** Adds `key`; a filter of no kind yet takes the key's. */
  add(key) {
    callKey(this.#handle(), key, ADD);
    return this;
  }

  /**
   * The answers of keys.map((k) => this.contains(k)) as a new Uint8Array,
   * 1 for "may be present" and 0 for "certainly absent", in one call into
   * the library per 65,536 keys when they are all numbers, bigints,
   * strings, byte arrays or uuid() keys (or a Float64Array or
   * BigInt64Array).  Bytes, not an array of booleans: a JavaScript array
   * takes 8 bytes an answer, and for a million keys making it costs more
   * than probing them.
   *
   * `out`, optional: where the answers go instead, a Uint8Array (1 and 0)
   * or an array (booleans) of at least keys' length; it is returned.
   */
  containsMany(keys, out) {
    const ptr = this.#handle();
    const list = Array.isArray(keys) || ArrayBuffer.isView(keys) ? keys : Array.from(keys);
    let answers = out;
    if (answers === undefined) answers = new Uint8Array(list.length);
    else if (!(Array.isArray(answers) || answers instanceof Uint8Array) || answers.length < list.length) {
      throw new ParameterError(`containsMany's out must be an array or a Uint8Array of at least ${list.length} elements`);
    }
    const type = batchType(list);
    if (type !== null) runBatch(ptr, type, list, answers);
    else if (answers instanceof Uint8Array) for (let i = 0; i < list.length; i++) answers[i] = callKey(ptr, list[i], PROBE);
    else for (let i = 0; i < list.length; i++) answers[i] = callKey(ptr, list[i], PROBE) === 1;
    return answers;
  }

  /** Adds every key of `keys`, in batches as containsMany. */
  addMany(keys) {
    const ptr = this.#handle();
    const list = Array.isArray(keys) || ArrayBuffer.isView(keys) ? keys : Array.from(keys);
    const type = batchType(list);
    if (type !== null) runBatch(ptr, type, list, null);
    else for (let i = 0; i < list.length; i++) callKey(ptr, list[i], ADD);
    return this;
  }

  /** The key spelled as text, read as the server's input function for the
   * filter's kind reads it ('3e2' finds 300 in a number filter).  A filter
   * of no kind yet answers false. */
  containsStr(text) {
    const [at, len] = wasm.scratchUtf8(String(text));
    return check(x.bfc_contains_str(this.#handle(), at, len, ERR)) === 1;
  }

  /** Adds the key spelled as text, read as containsStr reads it. */
  addStr(text) {
    const [at, len] = wasm.scratchUtf8(String(text));
    check(x.bfc_add_str(this.#handle(), at, len, ERR));
    return this;
  }

  // ---- combining --------------------------------------------------------

  /** A new filter holding the keys of both, as the server's `a | b`: the
   * same capacity, rate, growth, format version and kind. */
  union(other) {
    const result = this.copy();
    try {
      result.update(other);
    } catch (error) {
      result.free();
      throw error;
    }
    return result;
  }

  /** Adds the keys of `other` to this filter (an in-place union). */
  update(other) {
    if (!(other instanceof Filter)) throw new ParameterError(`union takes a Filter, not ${typeName(other)}`);
    check(x.bfc_union(this.#handle(), other.#handle(), ERR));
    return this;
  }

  /**
   * Applies a delta of the bloomfilter index this filter is a copy of
   * (`delta` of bloom_index_changes(index, since, timeline, build), to a copy loaded from
   * bloom_index_snapshot and brought up to `since`): the filter then holds
   * what the index held at the delta's `upto`.  Whole or not at all: a
   * damaged delta throws InvalidFilterError, one of another filter
   * DeltaMismatchError, and the filter is then unchanged.
   */
  applyChanges(delta) {
    const ptr = this.#handle();
    withBytes(delta, (at, len) => check(x.bfc_apply_changes(ptr, at, len, ERR)));
    return this;
  }

  // ---- serialising and inspecting ---------------------------------------

  /** The binary form, for `$1::bytea::bloom` or a bytea column. */
  toBytes() {
    const at = x.bfc_bytes(this.#handle(), OUT) >>> 0;
    const len = wasm.views.dv.getUint32(OUT, true);
    return Buffer.from(wasm.views.u8.subarray(at, at + len));
  }

  /** The text form, `bloom:` and base64, as the server prints it. */
  toText() {
    const ptr = this.#handle();
    const size = x.bfc_text_size(ptr) >>> 0;
    const at = wasm.malloc(size);
    try {
      const len = x.bfc_write_text(ptr, at) >>> 0;
      return Buffer.from(wasm.views.u8.subarray(at, at + len)).toString('latin1');
    } finally {
      x.free(at);
    }
  }

  /** The kind of the filter's keys ('number', ...), or 'none'. */
  get kind() {
    return KIND_NAMES[x.bfc_filter_kind(this.#handle())] || 'unknown';
  }

  /**
   * bloom_info's fields, by its column names: for a growing filter, layout
   * 'chained', bits and capacity summed over its segments and hashes its
   * last segment's; segments (1 for a filter of fixed size) and growth
   * (null for one).  seed is a bigint.
   */
  info() {
    const ptr = this.#handle();
    x.bfc_get_info(ptr, wasm.INFO);
    const info = wasm.readInfo();
    info.segments = x.bfc_segments(ptr);
    info.growth = x.bfc_growth(ptr) || null;
    return info;
  }

  /** Whether both hold the same bytes. */
  equals(other) {
    if (!(other instanceof Filter)) return false;
    const a = x.bfc_bytes(this.#handle(), OUT) >>> 0;
    const alen = wasm.views.dv.getUint32(OUT, true);
    const b = x.bfc_bytes(other.#handle(), OUT) >>> 0;
    const blen = wasm.views.dv.getUint32(OUT, true);
    const u8 = wasm.views.u8;
    return alen === blen && Buffer.compare(u8.subarray(a, a + alen), u8.subarray(b, b + blen)) === 0;
  }

  toString() {
    if (this.#ptr === 0) return 'Filter (freed)';
    const info = this.info();
    return `Filter ${info.key_kind}, capacity ${info.capacity}, fpr ${info.target_fpr}, ${info.bytes} bytes`;
  }

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return `<${this.toString()}>`;
  }
}

module.exports = { Filter, KINDS };
