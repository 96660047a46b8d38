'use strict';
// Unit tests of Filter without a server: keys by JavaScript type, batches,
// the forms, union, growing filters, info, errors and memory.  The
// server's answers are compared in test/node/run.sh.

const test = require('node:test');
const assert = require('node:assert/strict');
const bf = require('..');

const { Filter } = bf;

/** containsMany's answers (a Uint8Array of 1 and 0) as booleans. */
function bools(answers) {
  assert.ok(answers instanceof Uint8Array, 'containsMany answers in a Uint8Array');
  return Array.from(answers, (b) => b === 1);
}

test('number keys: integers of any JavaScript type hash alike', () => {
  const f = Filter.empty('number', 1000, 0.01);
  f.add(42).add(-7n).add(bf.numeric('1e3'));
  assert.equal(f.kind, 'number');
  for (const key of [42, 42n, bf.numeric('42.000'), bf.numeric('4.2e1'), bf.numeric(42)]) {
    assert.equal(f.contains(key), true, String(key));
  }
  assert.equal(f.contains(-7), true);
  assert.equal(f.contains(1000), true);
  assert.equal(f.contains(1000n), true);
  assert.equal(f.contains(43), false);
  assert.equal(f.containsStr('1000.0'), true);
  assert.equal(f.containsStr('3e2'), false);
});

test('number keys: extremes, and integers beyond int64 as numeric', () => {
  const f = Filter.empty('number', 100, 0.001);
  const min = -(2n ** 63n);
  const max = 2n ** 63n - 1n;
  f.addMany([min, max, 2n ** 64n, 0]);
  assert.deepEqual(bools(f.containsMany([min, max, 2n ** 64n, 0n, -0, 0])), [true, true, true, true, true, true]);
  assert.equal(f.contains(bf.numeric('18446744073709551616')), true);
  assert.equal(f.contains(2 ** 64), true, 'the double 2^64 is the integer 2^64');
  assert.equal(f.contains(bf.numeric('-9223372036854775808')), true);
  assert.equal(f.contains(-(2 ** 63)), true, 'the double -2^63 is int64 min');
  const g = Filter.empty('number', 100, 0.001);
  g.add(1e20);
  assert.equal(g.contains(10n ** 20n), true);
  assert.equal(g.contains(bf.numeric('100000000000000000000.000')), true);
});

test('number filters refuse fractions; float filters take every number', () => {
  const f = Filter.empty('number', 100, 0.01);
  assert.throws(() => f.contains(1.5), (e) => e instanceof bf.KindError && e.code === 'BFC_ERR_KIND' && e.errno === 2);
  assert.throws(() => f.add(NaN), bf.KindError);
  const g = Filter.empty('float', 100, 0.01);
  g.addMany([1, 2.5, -0, NaN, Infinity]);
  assert.equal(g.kind, 'float');
  assert.deepEqual(bools(g.containsMany([1, 1.0, 2.5, 0, NaN, Infinity, -Infinity, 3])),
    [true, true, true, true, true, true, false, false]);
  assert.deepEqual(bools(g.containsMany(new Float64Array([1, 2.5, 3]))), [true, true, false]);
  assert.throws(() => g.contains(1n), bf.KindError);
  // a filter of no kind yet takes the kind of the first key
  const h = Filter.empty(null, 100, 0.01);
  assert.equal(h.kind, 'none');
  assert.equal(h.contains(1), false);
  h.add(0.25);
  assert.equal(h.kind, 'float');
  const i = Filter.empty(null, 100, 0.01);
  i.add(3);
  assert.equal(i.kind, 'number');
});

test('text, bytea, boolean, uuid, date and timestamp keys', () => {
  const t = Filter.empty('text', 100, 0.01);
  t.addMany(['alpha', 'café', '日本語', '🙂', 'trailing  ', '']);
  assert.deepEqual(bools(t.containsMany(['alpha', 'café', '日本語', '🙂', 'trailing', 'trailing   ', '', 'beta'])),
    [true, true, true, true, true, true, true, false]);
  assert.equal(t.contains('x'.repeat(100000)), false);
  assert.throws(() => t.contains(Buffer.from('alpha')), bf.KindError);

  const b = Filter.empty('bytea', 100, 0.01);
  b.add(Buffer.from([0, 1, 2])).add(new Uint8Array(0));
  assert.deepEqual(bools(b.containsMany([Buffer.from([0, 1, 2]), new Uint8Array([0, 1, 2]), new Uint8Array(0), Buffer.from('x')])),
    [true, true, true, false]);
  assert.equal(b.containsStr('\\x000102'), true);

  const bool = Filter.empty('boolean', 10, 0.01);
  bool.add(true);
  assert.deepEqual([bool.contains(true), bool.contains(false)], [true, false]);

  const u = Filter.empty('uuid', 100, 0.01);
  const id = bf.uuid('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  u.add(id);
  assert.equal(String(id), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  assert.equal(u.contains(bf.uuid('{A0EEBC999C0B4EF8BB6D6BB9BD380A11}')), true);
  assert.equal(u.contains(bf.uuid(Buffer.from('a0eebc999c0b4ef8bb6d6bb9bd380a11', 'hex'))), true);
  assert.deepEqual(bools(u.containsMany([id, bf.uuid('00000000-0000-0000-0000-000000000000')])), [true, false]);
  assert.throws(() => bf.uuid('a0eebc99'), bf.KeySyntaxError);
  assert.throws(() => bf.uuid(42), bf.KindError);
  assert.throws(() => bf.uuid('\uD800a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), bf.KeySyntaxError);

  const d = Filter.empty('date', 100, 0.01);
  d.add(bf.date('2024-05-01')).add(bf.date('infinity'));
  assert.equal(d.contains(bf.date(new Date(Date.UTC(2024, 4, 1)))), true);
  assert.equal(d.contains(bf.date('2024-05-02')), false);
  assert.equal(d.contains(bf.date('infinity')), true);
  assert.equal(bf.date('2000-01-01').value, 0);
  assert.equal(bf.date('1999-12-31').value, -1);

  const ts = Filter.empty('timestamp', 100, 0.01);
  ts.add(bf.timestamp('2024-05-01 12:30:00.123456'));
  assert.equal(ts.contains(bf.timestamp('2024-05-01T12:30:00.123456')), true);
  assert.equal(ts.contains(bf.timestamp('2024-05-01 12:30:00.123')), false);
  assert.throws(() => ts.contains(new Date()), bf.KindError, 'a Date is a timestamptz');
  assert.throws(() => bf.timestamp('2024-05-01 12:30+02'), bf.KeySyntaxError);

  const tz = Filter.empty('timestamptz', 100, 0.01);
  const when = new Date('2024-05-01T10:30:00.250Z');
  tz.add(when);
  assert.equal(tz.contains(bf.timestamptz('2024-05-01 12:30:00.25+02')), true);
  assert.equal(tz.contains(new Date(when.getTime())), true);
  assert.equal(tz.contains(new Date(when.getTime() + 1)), false);
  assert.throws(() => tz.contains(new Date(NaN)), bf.KeySyntaxError);
  assert.throws(() => bf.timestamptz('2024-05-01 12:30'), bf.KeySyntaxError, 'needs an offset');
  assert.equal(bf.timestamptz(new Date(Date.UTC(2000, 0, 1))).value, 0n);
});

test('a key that is no key, or of another kind, throws KindError', () => {
  const f = Filter.empty('text', 100, 0.01);
  for (const key of [null, undefined, {}, [], Symbol('s'), () => 1]) {
    assert.throws(() => f.contains(key), bf.KindError);
  }
  assert.throws(() => f.add(1), /kind text, not number/);
  assert.throws(() => f.containsMany(['a', 1]), bf.KindError, 'a mixed batch goes key by key');
});

test('a string with a lone surrogate is no key, as invalid UTF-8 is none for the server', () => {
  const f = Filter.empty('text', 100, 0.01);
  f.add('\uFFFD').add('a\uD83D\uDE00b');
  for (const key of ['\uD800', '\uDC00', 'x\uD83D', '\uDE00x', 'a'.repeat(40) + '\uD800']) {
    assert.throws(() => f.contains(key), bf.KeySyntaxError, JSON.stringify(key));
    assert.throws(() => f.add(key), bf.KeySyntaxError);
    assert.throws(() => f.containsMany(['ok', key]), bf.KeySyntaxError);
    assert.throws(() => f.containsStr(key), bf.KeySyntaxError);
  }
  assert.equal(f.contains('a\uD83D\uDE00b'), true, 'a pair is one character');
  assert.equal(f.contains('\uFFFD'), true);
});

test('containsMany and addMany equal the single calls, for every batch type', () => {
  const n = 200000;
  const numbers = Array.from({ length: n }, (_, i) => i * 3);
  const f = Filter.empty('number', n, 0.01);
  const g = Filter.empty('number', n, 0.01);
  f.addMany(numbers);
  for (const key of numbers) g.add(key);
  assert.ok(f.equals(g), 'addMany of numbers = add one by one');
  const probes = Array.from({ length: n }, (_, i) => i);
  const one = probes.map((k) => f.contains(k));
  assert.deepEqual(bools(f.containsMany(probes)), one);
  assert.deepEqual(bools(f.containsMany(new Float64Array(probes))), one);
  assert.deepEqual(bools(f.containsMany(probes.map(BigInt))), one);
  assert.deepEqual(bools(f.containsMany(BigInt64Array.from(probes.map(BigInt)))), one);
  assert.deepEqual(bools(f.containsMany(new Set(probes))), one, 'any iterable');
  assert.ok(one.filter(Boolean).length >= n / 3);
  const h = Filter.empty('number', n, 0.01);
  h.addMany(BigInt64Array.from(numbers.map(BigInt)));
  assert.ok(h.equals(f), 'addMany of a BigInt64Array');
  const out = new Uint8Array(n + 5).fill(7);
  assert.equal(f.containsMany(probes, out), out, 'out is returned');
  assert.deepEqual(Array.from(out.subarray(0, n), (b) => b === 1), one);
  assert.deepEqual(Array.from(out.subarray(n)), [7, 7, 7, 7, 7], 'past the keys, out is left');
  const reused = new Array(n);
  assert.deepEqual(f.containsMany(probes, reused), one);
  assert.deepEqual(Array.from(f.containsMany(['a', 'b'].map(() => 3), new Uint8Array(2))), [1, 1]);
  assert.throws(() => f.containsMany(probes, new Uint8Array(3)), bf.ParameterError);
  assert.throws(() => f.containsMany(probes, {}), bf.ParameterError);
  // a batch with a fraction in it goes key by key: the kind error
  assert.throws(() => f.containsMany([...probes.slice(0, 5000), 0.5]), bf.KindError);

  const words = Array.from({ length: 30000 }, (_, i) => (i % 7 === 0 ? `é${i}` : `w${i}`));
  const t = Filter.empty('text', 30000, 0.01);
  t.addMany(words.slice(0, 15000));
  const t2 = Filter.empty('text', 30000, 0.01);
  for (const w of words.slice(0, 15000)) t2.add(w);
  assert.ok(t.equals(t2));
  assert.deepEqual(bools(t.containsMany(words)), words.map((w) => t.contains(w)));

  const blobs = words.map((w) => Buffer.from(w));
  const b = Filter.empty('bytea', 30000, 0.01);
  b.addMany(blobs.slice(0, 100));
  assert.deepEqual(bools(b.containsMany(blobs)), blobs.map((k) => b.contains(k)));

  const ids = Array.from({ length: 5000 }, (_, i) => bf.uuid(`00000000-0000-0000-0000-${String(i).padStart(12, '0')}`));
  const u = Filter.empty('uuid', 5000, 0.01);
  u.addMany(ids.slice(0, 2500));
  assert.deepEqual(bools(u.containsMany(ids)), ids.map((k) => u.contains(k)));
  assert.deepEqual(bools(u.containsMany([])), []);
});

test('the forms: bytes, text and hex round-trip and validate', () => {
  const f = Filter.empty('text', 1000, 0.01);
  f.addMany(['a', 'b', 'c']);
  const bytes = f.toBytes();
  assert.ok(Buffer.isBuffer(bytes));
  assert.equal(bytes.subarray(0, 2).toString(), 'BF');
  const text = f.toText();
  assert.match(text, /^bloom:[A-Za-z0-9+/=]+$/);
  assert.ok(Filter.fromBytes(bytes).equals(f));
  assert.ok(Filter.fromBytes(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)).equals(f));
  assert.ok(Filter.fromText(text).equals(f));
  assert.ok(Filter.load(text + '\n').equals(f));
  assert.ok(Filter.load(`\\x${bytes.toString('hex')}`).equals(f));
  assert.ok(Filter.load(bytes).equals(f));
  assert.equal(Filter.fromText(text).toText(), text);

  const damaged = Buffer.from(bytes);
  damaged[9] ^= 1; // the header, under its checksum
  assert.throws(() => Filter.fromBytes(damaged), (e) => e instanceof bf.InvalidFilterError && e.errno === 1);
  assert.throws(() => Filter.fromBytes(bytes.subarray(0, 20)), /shorter than/);
  assert.throws(() => Filter.fromText('blum:AAAA'), /starts with "bloom:"/);
  assert.throws(() => Filter.fromText('bloom:***'), /not valid base64/);
  assert.throws(() => Filter.fromBytes('BF'), bf.ParameterError);
  assert.throws(() => new Filter(), bf.ParameterError);
});

test('union and update: the server\'s a | b, refused for other parameters', () => {
  const a = Filter.empty('number', 1000, 0.01).addMany([1, 2, 3]);
  const b = Filter.empty('number', 1000, 0.01).addMany([3, 4]);
  const both = Filter.empty('number', 1000, 0.01).addMany([1, 2, 3, 4]);
  const u = a.union(b);
  assert.deepEqual(bools(u.containsMany([1, 2, 3, 4])), [true, true, true, true]);
  assert.equal(u.info().bits_set, both.info().bits_set);
  assert.equal(a.contains(4), false, 'union leaves its operands');
  a.update(b);
  assert.ok(a.equals(u));
  const other = Filter.empty('number', 1001, 0.01);
  assert.throws(() => a.union(other), (e) => e instanceof bf.IncompatibleFiltersError && e.code === 'BFC_ERR_INCOMPATIBLE');
  assert.throws(() => a.union(Filter.empty('text', 1000, 0.01).add('x')), bf.IncompatibleFiltersError);
  assert.throws(() => a.union({}), bf.ParameterError);
});

test('growing filters add segments as keys come, and union', () => {
  const g = Filter.empty('number', 1000, 0.01, { growth: 2 });
  assert.deepEqual([g.info().layout, g.info().segments, g.info().growth], ['chained', 1, 2]);
  const keys = Array.from({ length: 20000 }, (_, i) => i * 7);
  g.addMany(keys);
  const info = g.info();
  assert.ok(info.segments >= 4, `segments ${info.segments}`);
  assert.equal(info.capacity, 1000 * (2 ** info.segments - 1));
  assert.ok(g.containsMany(keys).every(Boolean));
  const h = Filter.empty('number', 1000, 0.01, { growth: 2 });
  for (const k of keys) h.add(k);
  assert.ok(h.equals(g));
  const short = Filter.empty('number', 1000, 0.01, { growth: 2 }).addMany(keys.slice(0, 10));
  assert.ok(short.union(g).equals(g.union(short)));
  assert.ok(Filter.fromBytes(g.toBytes()).equals(g));
  assert.throws(() => g.union(Filter.empty('number', 1000, 0.01)), bf.IncompatibleFiltersError);
  assert.throws(() => Filter.empty('number', 1000, 0.01, { growth: 1 }), bf.ParameterError);
  assert.throws(() => Filter.empty('number', 1000, 0.01, { growth: 17 }), bf.ParameterError);
});

test('info() has bloom_info\'s fields', () => {
  const f = Filter.empty('number', 100000, 0.01);
  f.addMany(Array.from({ length: 1000 }, (_, i) => i));
  const info = f.info();
  assert.deepEqual(Object.keys(info).sort(), ['bits', 'bits_set', 'bytes', 'capacity', 'estimated_distinct',
    'estimated_fpr', 'fill_ratio', 'format_version', 'growth', 'hashes', 'inserted', 'key_environment',
    'key_kind', 'layout', 'over_capacity', 'seed', 'segments', 'target_fpr']);
  assert.equal(info.format_version, 3);
  assert.equal(info.layout, 'blocked512');
  assert.equal(info.capacity, 100000);
  assert.equal(info.target_fpr, 0.01);
  assert.equal(info.inserted, 1000);
  assert.equal(info.bytes, f.toBytes().length);
  assert.equal(info.key_kind, 'number');
  assert.equal(info.seed, 0n);
  assert.equal(info.key_environment, null);
  assert.equal(info.over_capacity, false);
  assert.equal(info.segments, 1);
  assert.equal(info.growth, null);
  assert.ok(Math.abs(info.estimated_distinct - 1000) < 50);
});

test('parameters are checked as bloom_empty checks them', () => {
  assert.throws(() => Filter.empty('number', 0, 0.01), bf.ParameterError);
  assert.throws(() => Filter.empty('number', 1.5, 0.01), bf.ParameterError);
  assert.throws(() => Filter.empty('number', 100, 0), (e) => e.code === 'BFC_ERR_PARAM' && /false-positive rate/.test(e.message));
  assert.throws(() => Filter.empty('number', 100, 0.6), bf.ParameterError);
  assert.throws(() => Filter.empty('other', 100, 0.01), bf.ParameterError);
  assert.throws(() => Filter.empty('integer', 100, 0.01), bf.ParameterError);
  assert.throws(() => Filter.empty('number', 2n ** 62n, 1e-9), (e) => e instanceof bf.TooLargeError && e.errno === 6);
  assert.equal(Filter.empty('number', 10n, 0.5).info().capacity, 10);
});

test('errors: one class per code of the C library', () => {
  assert.deepEqual(bf.CODES, {
    BFC_OK: 0, BFC_ERR_INVALID: 1, BFC_ERR_KIND: 2, BFC_ERR_UNSUPPORTED: 3, BFC_ERR_KEY: 4,
    BFC_ERR_PARAM: 5, BFC_ERR_TOO_LARGE: 6, BFC_ERR_INCOMPATIBLE: 7, BFC_ERR_NOMEM: 8, BFC_ERR_MISMATCH: 9,
  });
  for (const Class of [bf.InvalidFilterError, bf.KindError, bf.UnsupportedKeyError, bf.KeySyntaxError,
    bf.ParameterError, bf.TooLargeError, bf.IncompatibleFiltersError, bf.OutOfMemoryError, bf.DeltaMismatchError]) {
    const e = new Class('m');
    assert.ok(e instanceof bf.BloomFilterError && e instanceof Error);
    assert.equal(e.name, Class.name);
    assert.equal(bf.CODES[e.code], e.errno);
  }
});

test('memory: filters freed, by hand or by the garbage collector, leave the module usable', () => {
  const f = Filter.empty('number', 10, 0.01);
  f.free();
  f.free();
  assert.throws(() => f.contains(1), /freed/);
  assert.equal(String(f), 'Filter (freed)');
  // 12 MB filters, many times: their memory is reused
  const big = Filter.empty('number', 10000000, 0.01);
  big.add(7);
  const bytes = big.toBytes();
  assert.ok(bytes.length > 11e6, `${bytes.length} bytes`);
  for (let i = 0; i < 30; i++) {
    const copy = Filter.fromBytes(bytes);
    assert.equal(copy.contains(7), true);
    copy.free();
  }
  const copies = [];
  for (let i = 0; i < 5; i++) copies.push(big.copy());
  assert.ok(copies.every((c) => c.equals(big)));
});

test('applyChanges: a damaged delta is refused and the filter is unchanged', () => {
  const f = Filter.empty('number', 1000, 0.01).add(1);
  const before = f.toBytes();
  assert.throws(() => f.applyChanges(Buffer.from('BD not a delta at all, and long enough for its header')), bf.InvalidFilterError);
  assert.throws(() => f.applyChanges(Buffer.alloc(3)), bf.InvalidFilterError);
  assert.deepEqual(f.toBytes(), before);
});

test('a damaged byte anywhere in the body is refused, never an "absent"', () => {
  const f = Filter.empty('number', 1000, 0.01);
  f.add(42);
  const bytes = Buffer.from(f.toBytes());
  for (const at of [56, 100, bytes.length - 1]) {
    const damaged = Buffer.from(bytes);
    damaged[at] ^= 0x10;
    assert.throws(() => Filter.fromBytes(damaged), /Checksum of the header and bit array does not match/);
  }
  assert.equal(Filter.fromBytes(bytes).contains(42), true);
});
