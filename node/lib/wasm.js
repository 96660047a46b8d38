'use strict';
// wasm.js: the WebAssembly module (bloomfilter.wasm, the client library
// built from the extension's C core, see ../Makefile) and its memory as
// JavaScript sees it: the instance, views of the memory that follow its
// growth, a scratch area for keys and results, the error structure every
// call reports into, strings in and out, and bfc_info's fields.
//
// Compiled synchronously when the package is loaded (a module of about
// 140 kB), so that every call of the API is synchronous.  One instance
// per JavaScript realm: a worker thread that loads the package has its
// own.

const fs = require('fs');
const path = require('path');
const { errorOf, KeySyntaxError } = require('./errors');

// The system interface wasi-libc links in (its stdio and locale code),
// though the library prints nothing and reads no environment: an empty
// environment, and files that do not exist.
const EBADF = 8;
let memory = null;

const wasi = {
  environ_sizes_get(countAt, sizeAt) {
    const view = new DataView(memory.buffer);
    view.setUint32(countAt, 0, true);
    view.setUint32(sizeAt, 0, true);
    return 0;
  },
  environ_get() { return 0; },
  fd_close() { return EBADF; },
  fd_seek() { return EBADF; },
  fd_write() { return EBADF; },
  proc_exit(status) {
    throw new Error(`bloomfilter: the WebAssembly module exited with status ${status}`);
  },
};

const module_ = new WebAssembly.Module(fs.readFileSync(path.join(__dirname, '..', 'dist', 'bloomfilter.wasm')));
const instance = new WebAssembly.Instance(module_, { wasi_snapshot_preview1: wasi });
const x = instance.exports;
memory = x.memory;
x._initialize();

// Views of the memory, made anew after it grew (a grown memory detaches
// the old buffer, whose views then have length 0).
let u8 = new Uint8Array(memory.buffer);
let u32 = new Uint32Array(memory.buffer);
let f64 = new Float64Array(memory.buffer);
let i64 = new BigInt64Array(memory.buffer);
let dv = new DataView(memory.buffer);

function refresh() {
  if (u8.byteLength === 0) {
    u8 = new Uint8Array(memory.buffer);
    u32 = new Uint32Array(memory.buffer);
    f64 = new Float64Array(memory.buffer);
    i64 = new BigInt64Array(memory.buffer);
    dv = new DataView(memory.buffer);
  }
}

const views = {
  get u8() { refresh(); return u8; },
  get u32() { refresh(); return u32; },
  get f64() { refresh(); return f64; },
  get i64() { refresh(); return i64; },
  get dv() { refresh(); return dv; },
};

// Pointers and sizes come back as signed 32-bit integers.
function malloc(bytes) {
  const at = x.malloc(bytes) >>> 0;
  if (at === 0) {
    throw errorOf(8, `out of memory for ${bytes} bytes in the WebAssembly memory (at most 4 GB)`);
  }
  return at;
}

// Fixed places: the error structure (bfc_error, 324 bytes), bfc_info
// (208 bytes) and a few outputs, in one block that lives as long as the
// module.
const fixed = malloc(1024);
const ERR = fixed;
const INFO = fixed + 328;
const OUT = fixed + 544; // 16 bytes: a size_t, an int32, an int64 or a uuid

// The scratch area: keys going in and answers coming out of one call.
let scratch = 0;
let scratchSize = 0;

/** A scratch area of at least `bytes` bytes, 8-byte aligned; its contents
 * last until the next call of reserve. */
function reserve(bytes) {
  if (bytes > scratchSize) {
    if (scratch !== 0) x.free(scratch);
    scratch = 0;
    scratchSize = 0;
    let size = 65536;
    while (size < bytes) size *= 2;
    scratch = malloc(size);
    scratchSize = size;
  }
  return scratch;
}

/** The error the last failed call left in ERR. */
function lastError() {
  const code = views.dv.getInt32(ERR, true);
  return errorOf(code, readCString(ERR + 4));
}

/** Throws the last error if status is negative; else returns it. */
function check(status) {
  if (status < 0) throw lastError();
  return status;
}

/** Throws the last error if the pointer is NULL; else returns it. */
function checkPointer(pointer) {
  pointer >>>= 0;
  if (pointer === 0) throw lastError();
  return pointer;
}

const decoder = new TextDecoder('utf-8');
const encoder = new TextEncoder();

function readCString(at) {
  const bytes = views.u8;
  let end = at;
  while (bytes[end] !== 0) end++;
  return decoder.decode(bytes.subarray(at, end));
}

// A UTF-16 unit of a surrogate pair without its other half.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Refuses a string with a lone surrogate: it has no UTF-8, and encoding it
 * as U+FFFD would hash a key the server can never hold (it refuses invalid
 * UTF-8), answering for another string. */
function checkWellFormed(text) {
  const wellFormed = typeof text.isWellFormed === 'function'
    ? text.isWellFormed() : !LONE_SURROGATE.test(text);
  if (!wellFormed) throw new KeySyntaxError('a string with a lone UTF-16 surrogate has no UTF-8 form, so it is not a key');
}

/** Writes the UTF-8 of a string at `at`, which has room for 3 bytes per
 * UTF-16 unit; returns the bytes written. */
function writeUtf8(text, at) {
  const bytes = views.u8;
  const n = text.length;
  // ASCII by hand: encodeInto costs more than the probe for short keys
  if (n <= 32) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) break;
      bytes[at + i] = c;
    }
    if (i === n) return n;
  }
  checkWellFormed(text);
  return encoder.encodeInto(text, bytes.subarray(at, at + 3 * n)).written;
}

/** A string's UTF-8 in the scratch area: [pointer, length]. */
function scratchUtf8(text) {
  const at = reserve(3 * text.length + 1);
  return [at, writeUtf8(text, at)];
}

/** Bytes (a Uint8Array, Buffer or ArrayBuffer) in the scratch area. */
function scratchBytes(data) {
  const at = reserve(data.length + 1);
  views.u8.set(data, at);
  return at;
}

// bfc_info's layout in wasm32, pinned by native/wasm.c's static assertions.
function readInfo() {
  const d = views.dv;
  const int64 = (offset) => Number(d.getBigInt64(INFO + offset, true));
  const environment = readCString(INFO + 104);
  return {
    format_version: d.getInt32(INFO + 0, true),
    layout: readCString(d.getUint32(INFO + 4, true)),
    bits: int64(8),
    bytes: int64(16),
    hashes: d.getInt32(INFO + 24, true),
    capacity: int64(32),
    target_fpr: d.getFloat64(INFO + 40, true),
    inserted: int64(48),
    bits_set: int64(56),
    fill_ratio: d.getFloat64(INFO + 64, true),
    estimated_distinct: d.getFloat64(INFO + 72, true),
    estimated_fpr: d.getFloat64(INFO + 80, true),
    key_kind: readCString(d.getUint32(INFO + 88, true)),
    seed: d.getBigInt64(INFO + 96, true),
    key_environment: environment === '' ? null : environment,
    over_capacity: d.getUint8(INFO + 200) !== 0,
  };
}

module.exports = {
  exports: x,
  views,
  malloc,
  reserve,
  check,
  checkPointer,
  lastError,
  readInfo,
  writeUtf8,
  scratchUtf8,
  scratchBytes,
  ERR,
  INFO,
  OUT,
};
