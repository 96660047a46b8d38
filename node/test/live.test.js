'use strict';
// Unit tests of LiveFilter against a stand-in for node-postgres: the
// staleness bound, reloads, refused deltas, write-through, reconnecting
// through a connection function, and a background refresh that neither
// keeps the process alive nor outlives close().  Against a server, with
// real deltas and concurrent writers: test/node/run.sh.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const bf = require('..');

const { Filter, LiveFilter } = bf;

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** A stand-in for a pg.Client: answers bloom_index_snapshot with the
 * current "index" filter and bloom_index_changes with `changes`; records
 * the queries. */
class FakeConnection {
  constructor(index) {
    this.index = index;
    this.queries = [];
    this.changes = { reload: true, delta: null };
    this.fail = null;
    this.beforeSnapshot = null;
    this.ended = false;
    this.position = 1;
    this.standby = false;
  }

  async query(text, values) {
    this.queries.push({ text, values });
    await sleep(1);
    if (this.fail) throw this.fail;
    if (text.includes('bloom_index_snapshot')) {
      const rows = [{
        lsn: `0/${(this.position++).toString(16)}`, filter: this.index.toBytes(), timeline: '1', build: '0/1',
        standby: this.standby,
      }];
      if (this.beforeSnapshot) {
        const hook = this.beforeSnapshot;
        this.beforeSnapshot = null;
        hook();
      }
      return { rows };
    }
    if (text.includes('bloom_index_changes')) {
      return {
        rows: [{
          upto: `0/${(this.position++).toString(16)}`, reload: this.changes.reload, delta: this.changes.delta, timeline: '1',
          standby: this.standby,
        }],
      };
    }
    throw new Error(`unexpected query ${text}`);
  }

  async end() {
    this.ended = true;
  }
}

function indexOf(keys) {
  return Filter.empty('number', 10000, 0.01).addMany(keys);
}

test('the guard is off until a sync, and after maxStaleness without one', async () => {
  const conn = new FakeConnection(indexOf([1, 2, 3]));
  const live = new LiveFilter(conn, 'users_guard', { maxStaleness: 0.2 });
  assert.equal(live.contains(99), true, 'never synced: maybe');
  assert.equal(live.lsn, null);
  assert.equal(live.staleness, null);
  const result = await live.sync();
  assert.deepEqual(result, { lsn: '0/1', reload: true, bytes: conn.index.toBytes().length });
  assert.equal(live.contains(99), false);
  assert.equal(live.contains(1), true);
  assert.deepEqual(Array.from(live.containsMany([1, 99])), [1, 0]);
  assert.ok(live.lastSync instanceof Date);
  assert.ok(live.staleness < 0.2);
  await sleep(300);
  assert.ok(live.staleness > 0.2);
  assert.equal(live.contains(99), true, 'stale: maybe');
  assert.deepEqual(Array.from(live.containsMany([1, 99])), [1, 1]);
  assert.deepEqual(live.containsMany([1, 99], [false, false, false]), [true, true, false], 'booleans into an array given');
  assert.deepEqual(Array.from(live.containsMany([1, 99], new Uint8Array(3))), [1, 1, 0]);
  await live.sync();
  assert.equal(live.contains(99), false, 'fresh again');
  await live.close();
  assert.equal(conn.ended, false, 'a connection given stays open');
});

test('a failed sync leaves the copy and its age; the bound then turns the guard off', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const live = await LiveFilter.open(conn, 'users_guard', { maxStaleness: 0.15 });
  const lsn = live.lsn;
  conn.fail = new Error('connection lost');
  await assert.rejects(live.sync(), /connection lost/);
  assert.equal(live.lsn, lsn);
  assert.equal(live.contains(99), false, 'still fresh');
  await sleep(200);
  assert.equal(live.contains(99), true, 'stale after the bound');
  conn.fail = null;
  await live.sync();
  assert.equal(live.contains(99), false);
  await live.close();
});

test('changes: the copy\'s position, timeline and build are passed; reload and refused deltas load a snapshot', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const live = await LiveFilter.open(conn, 'users_guard', { maxStaleness: 30 });
  assert.deepEqual([live.lsn, live.timeline, live.build], ['0/1', '1', '0/1']);
  conn.index = indexOf([1, 5]);
  conn.changes = { reload: true, delta: null };
  let result = await live.sync();
  const changes = conn.queries.find((q) => q.text.includes('bloom_index_changes'));
  assert.deepEqual(changes.values, ['users_guard', '0/1', '1', '0/1']);
  assert.equal(result.reload, true);
  assert.equal(live.contains(5), true);
  conn.index = indexOf([1, 5, 6]);
  conn.changes = { reload: false, delta: Buffer.from('not a delta') };
  result = await live.sync();
  assert.equal(result.reload, true, 'a refused delta is mended by a snapshot');
  assert.equal(live.contains(6), true);
  assert.ok(live.toFilter().equals(conn.index));
  await live.close();
});

test('write-through: an added key is found until a sync that started after it completed', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const live = await LiveFilter.open(conn, 'users_guard', { maxStaleness: 30 });
  live.add(42);
  assert.equal(live.contains(42), true);
  assert.equal(live.toFilter().contains(42), false);
  assert.deepEqual(Array.from(live.containsMany([42, 43])), [1, 0]);
  assert.deepEqual(live.containsMany([42, 43], [false, false]), [true, false], 'write-through keys as true in an array of booleans');
  // committed and added while a snapshot without it is in flight
  conn.beforeSnapshot = () => live.add(77);
  await live.sync();
  assert.equal(live.toFilter().contains(77), false);
  assert.equal(live.contains(77), true, 'survives the snapshot that lacks it');
  assert.equal(live.contains(42), false, 'let go: a sync after its add completed');
  conn.index = indexOf([1, 77]);
  await live.sync();
  assert.equal(live.contains(77), true);
  assert.equal(live._written.length, 0);
  assert.throws(() => live.add('text'), bf.KindError);
  assert.deepEqual(Array.from(live.containsMany([1, 42, 43, 77], new Uint8Array(4))), [1, 0, 0, 1]);
  for (let i = 0; i < 3000; i++) live.add(100000 + i);
  assert.ok(live.containsMany(Array.from({ length: 3000 }, (_, i) => 100000 + i)).every(Boolean));
  await live.close();
});

test('write-through: a commit position keeps a key until the copy reaches it; a standby keeps those without', async () => {
  const conn = new FakeConnection(indexOf([1]));
  conn.standby = true;
  const live = await LiveFilter.open(conn, 'users_guard', { maxStaleness: 30 });
  live.add(42);
  live.add(43, 'FFFFFFFF/0');
  live.add(44, live.lsn);
  await live.sync();
  await live.sync();
  assert.deepEqual([live.contains(42), live.contains(43), live.contains(44)], [true, true, false],
    'from a standby: without a position kept, ahead kept, passed let go');
  conn.standby = false;
  conn.changes = { reload: true, delta: null };
  await live.sync();
  assert.deepEqual([live.contains(42), live.contains(43)], [false, true],
    'from a primary: without a position let go after a sync, ahead kept');
  assert.throws(() => live.add(45, 'not a position'), bf.BloomFilterError);
  await live.close();
});

test('a connection function: a failed sync ends its client, the next connects anew', async () => {
  const made = [];
  const index = indexOf([1, 2]);
  const connect = async () => {
    const conn = new FakeConnection(index);
    made.push(conn);
    return conn;
  };
  const live = await LiveFilter.open(connect, 'users_guard', { maxStaleness: 30 });
  assert.equal(made.length, 1);
  made[0].fail = new Error('server restarted');
  await assert.rejects(live.sync(), /server restarted/);
  assert.equal(made[0].ended, true);
  await live.sync();
  assert.equal(made.length, 2);
  assert.equal(live.contains(2), true);
  await live.close();
  assert.equal(made[1].ended, true, 'close() ends a client it made');
});

test('syncs run one at a time, in order', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const live = new LiveFilter(conn, 'users_guard');
  const results = await Promise.all([live.sync(), live.sync(), live.sync()]);
  assert.deepEqual(results.map((r) => r.reload), [true, true, true]);
  assert.deepEqual(results.map((r) => r.lsn), ['0/1', '0/3', '0/5']);
  await live.close();
});

test('background refresh: syncs on a timer, records failures, stops at close()', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const live = new LiveFilter(conn, 'users_guard', { maxStaleness: 5, refreshInterval: 0.02 });
  await sleep(150);
  assert.ok(conn.queries.length >= 3, `${conn.queries.length} queries`);
  assert.equal(live.contains(99), false);
  conn.fail = new Error('down');
  await sleep(80);
  assert.ok(live.lastError instanceof Error && /down/.test(live.lastError.message));
  conn.fail = null;
  await sleep(80);
  assert.equal(live.lastError, null);
  await live.close();
  const count = conn.queries.length;
  await sleep(100);
  assert.equal(conn.queries.length, count, 'no sync after close()');
});

test('the refresh timer does not keep the process alive', () => {
  const script = `
    const { Filter, LiveFilter } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const index = Filter.empty('number', 100, 0.01).add(1);
    const conn = { query: async (text) => ({ rows: [{ lsn: '0/1', filter: index.toBytes(), timeline: '1', build: '0/1', upto: '0/2', reload: true, delta: null }] }) };
    const live = new LiveFilter(conn, 'users_guard', { refreshInterval: 0.05 });
    setTimeout(() => { console.log(live.contains(1) && !live.contains(2) ? 'synced' : 'not synced'); }, 300);`;
  const started = Date.now();
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20000 });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'synced');
  assert.ok(Date.now() - started < 10000, 'exited by itself');
});

test('parameters are checked', () => {
  const conn = new FakeConnection(indexOf([1]));
  assert.throws(() => new LiveFilter(null, 'i'), bf.ParameterError);
  assert.throws(() => new LiveFilter({}, 'i'), bf.ParameterError);
  assert.throws(() => new LiveFilter(conn, ''), bf.ParameterError);
  assert.throws(() => new LiveFilter(conn, 'i', { maxStaleness: 0 }), bf.ParameterError);
  assert.throws(() => new LiveFilter(conn, 'i', { refreshInterval: -1 }), bf.ParameterError);
});

test('misspelt and unknown options are TypeErrors naming them; refreshInterval must be below maxStaleness', async () => {
  const conn = new FakeConnection(indexOf([1]));
  assert.throws(() => new LiveFilter(conn, 'i', { maxStalenes: 2 }), (e) => e instanceof TypeError && /maxStalenes/.test(e.message) && /maxStaleness, refreshInterval/.test(e.message));
  assert.throws(() => new LiveFilter(conn, 'i', { refreshIntervall: 1 }), TypeError);
  await assert.rejects(LiveFilter.open(conn, 'i', { refreshIntervall: 1 }), TypeError);
  assert.throws(() => new LiveFilter(conn, 'i', 2), TypeError);
  assert.throws(() => new LiveFilter(conn, 'i', { maxStaleness: 1, refreshInterval: 1 }), /must be below maxStaleness/);
  await assert.rejects(LiveFilter.open(conn, 'i', { maxStaleness: 1, refreshInterval: 2 }), /must be below maxStaleness/);
});

test('stale and fresh are emitted once per change, error per failed sync; stats() counts forced answers', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const events = [];
  const live = new LiveFilter(conn, 'users_guard', { maxStaleness: 0.15 });
  live.on('fresh', (reason) => events.push(['fresh', reason]));
  live.on('stale', (reason) => events.push(['stale', reason]));
  live.on('error', (error) => events.push(['error', error.message]));
  await live.sync();
  assert.equal(live.contains(99), false);
  assert.equal(live.stats().forcedMaybes, 0);
  conn.fail = Object.assign(new Error('relation "users_guard" does not exist'), { code: '42P01' });
  for (let i = 0; i < 4; i++) {
    await assert.rejects(live.sync());
    live.contains(99);
    await sleep(60);
  }
  live.contains(99);
  live.containsMany([98, 99]);
  const stats = live.stats();
  assert.deepEqual(events.map((e) => e[0]), ['fresh', 'error', 'error', 'error', 'error', 'stale']);
  assert.match(events[5][1], /the index was dropped/);
  assert.equal(stats.errors, 4);
  assert.equal(stats.syncs, 1);
  assert.equal(stats.fresh, false);
  assert.ok(stats.forcedMaybes >= 3, `${stats.forcedMaybes}`);
  const before = stats.forcedMaybes;
  live.contains(99);
  live.containsMany([1, 2, 3]);
  assert.equal(live.stats().forcedMaybes, before + 4);
  conn.fail = null;
  await live.sync();
  assert.deepEqual(events.map((e) => e[0]).slice(6), ['fresh']);
  await live.close();
});

test('without an error listener a failed background sync does not crash; a stale listener that throws breaks nothing', async () => {
  const conn = new FakeConnection(indexOf([1]));
  const live = await LiveFilter.open(conn, 'users_guard', { maxStaleness: 0.1, refreshInterval: 0.02 });
  live.on('stale', () => { throw new Error('listener bug'); });
  conn.fail = new Error('down');
  await sleep(200);
  assert.equal(live.contains(99), true);
  assert.ok(live.stats().errors >= 2);
  await live.close();
});

test('the missing extension says CREATE EXTENSION, an old one ALTER EXTENSION ... UPDATE', async () => {
  for (const [rows, words] of [[[], /CREATE EXTENSION bloomfilter/], [[{ version: '1.0', schema: 'public' }], /ALTER EXTENSION bloomfilter UPDATE/]]) {
    const missing = Object.assign(new Error('function bloom_index_snapshot(unknown) does not exist'), { code: '42883' });
    const conn = {
      query: async (text) => {
        if (text.includes('pg_extension')) return { rows };
        throw missing;
      },
    };
    await assert.rejects(LiveFilter.open(conn, 'i'), (e) => e instanceof bf.ExtensionError && words.test(e.message) && e.cause === missing);
  }
});

test('an unconnected pg.Client is refused, not waited on forever', async () => {
  const client = { _connected: false, _connecting: false, connect() {}, query: () => new Promise(() => {}) };
  await assert.rejects(LiveFilter.open(client, 'i'), /not connected/);
});
