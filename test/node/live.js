'use strict';
// test/node/live.js: the Node package's LiveFilter against a server with
// the extension's 1.1 functions (the cluster run.sh started), over
// node-postgres, as test/live/live_test.py checks the Python one:
//   - the first sync is the index's snapshot, byte for byte;
//   - rounds of inserts, the index growing segments: after every sync each
//     committed key is found (0 misses), the copy is the index's filter
//     byte for byte, a delta costs at most 48 + 16 bytes a key;
//   - writers inserting concurrently while two copies follow (synced by
//     hand, and refreshing in the background): every key committed before
//     a sync's upto (known by the WAL position read after its commit) is
//     in the copy, 0 misses;
//   - REINDEX and REINDEX CONCURRENTLY make the next sync a reload;
//   - Filter.applyChanges by hand: a damaged delta and another filter's
//     are refused with the copy unchanged, the index's makes the copy its
//     bytes;
//   - write-through: a key committed and added while a reload's snapshot
//     is in flight survives the reload;
//   - the staleness bound: with the server stopped, probes answer true
//     for absent keys once maxStaleness has passed, the background refresh
//     records its failures, and after a restart the guard resumes by
//     itself (a connection function).
// Prints "ok - ..." / "not ok - ..." lines, which run.sh counts.
// Arguments: the socket directory, the port, and the scripts that stop and
// start the server.

const { execFileSync } = require('child_process');
const pg = require('pg');
const bf = require('@bloomfilter/client');

const { Filter, LiveFilter } = bf;
const [host, port, stopScript, startScript] = process.argv.slice(2);
const INDEX = 'users_guard';
const config = { host, port: Number(port), user: 'postgres', database: 'live' };

let passed = 0;
let failed = 0;

function check(condition, description, detail) {
  if (condition) {
    passed++;
    console.log(`ok - ${description}`);
  } else {
    failed++;
    console.log(`not ok - ${description}`);
    if (detail) for (const line of String(detail).split('\n').slice(0, 15)) console.log(`#   ${line}`);
  }
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function connect() {
  const client = new pg.Client(config);
  // a broken connection reports here; the sync that uses it fails instead
  client.on('error', () => {});
  await client.connect();
  return client;
}

function lsnValue(text) {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** The indexed table as the tests know it: every key committed, with the
 * WAL position read after its commit (its commit record lies below). */
class Table {
  constructor(conn) {
    this.conn = conn;
    this.keys = []; // [position after commit, key]
    this.nextKey = 1;
  }

  async insert(count, conn = this.conn) {
    const first = this.nextKey;
    this.nextKey += count;
    // spread out, so that keys are no run of integers
    const keys = Array.from({ length: count }, (_, i) => (first + i) * 7 + 3);
    if (keys.length > 0) {
      await conn.query('INSERT INTO users SELECT unnest($1::bigint[])', [keys]);
      const after = lsnValue((await conn.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l);
      for (const k of keys) this.keys.push([after, k]);
    }
    return keys;
  }

  committedBefore(upto) {
    const limit = lsnValue(upto);
    return this.keys.filter(([at]) => at <= limit).map(([, k]) => k);
  }

  allKeys() {
    return this.keys.map(([, k]) => k);
  }

  async serverFilter() {
    return (await this.conn.query('SELECT bloom_index_filter($1)::bytea AS f', [INDEX])).rows[0].f;
  }
}

function misses(copy, keys) {
  return copy.containsMany(keys).filter((found) => !found).length;
}

/** A bloom value's segments' bits and their counts, read from the format
 * in bloom.h: layout 2 chains its segments after the 56-byte header. */
function bitsOf(value) {
  if (value[3] !== 2) {
    return { segments: [Buffer.concat([value.subarray(4, 5), value.subarray(56)])], counts: [value.readBigUInt64LE(40)] };
  }
  const segments = [];
  const counts = [];
  for (let at = 56; at < value.length;) {
    const blocks = value.readUInt32LE(at);
    // the block count and k, then the bits
    segments.push(Buffer.concat([value.subarray(at, at + 5), value.subarray(at + 16, at + 16 + 64 * blocks)]));
    counts.push(value.readBigUInt64LE(at + 8));
    at += 16 + 64 * blocks;
  }
  return { segments, counts };
}

/** Whether a copy has the index's segments and bits, and no smaller
 * count: deltas read while keys are being added may repeat an entry,
 * which sets no new bit but counts again. */
function sameBits(copy, index) {
  const a = bitsOf(copy);
  const b = bitsOf(index);
  return copy.length === index.length && a.segments.length === b.segments.length
    && a.segments.every((s, i) => s.equals(b.segments[i]))
    && a.counts.every((c, i) => c >= b.counts[i]);
}

async function testRounds(table) {
  const guard = await LiveFilter.open(connect, INDEX, { maxStaleness: 30 });
  check(guard.lsn !== null && guard.timeline !== null && guard.build !== null
    && guard.toFilter().toBytes().equals(await table.serverFilter()) && misses(guard, table.allKeys()) === 0,
  'LiveFilter: the first sync is the index\'s snapshot, byte for byte, every key found');
  let totalMisses = 0;
  let equal = true;
  let cheap = true;
  let deltas = true;
  let added = 0;
  const batches = [1, 0, 17, 500, 2, 3000, 0, 8000, 40, 1, 12000, 5];
  for (const batch of batches) {
    const keys = await table.insert(batch);
    added += keys.length;
    const result = await guard.sync();
    deltas = deltas && !result.reload;
    cheap = cheap && result.bytes <= 48 + 16 * keys.length;
    totalMisses += misses(guard, table.allKeys());
    equal = equal && guard.toFilter().toBytes().equals(await table.serverFilter());
  }
  const segments = guard.toFilter().info().segments;
  check(deltas && totalMisses === 0,
    `LiveFilter: ${batches.length} syncs after ${added} inserted keys, all deltas, 0 misses of every committed key`);
  check(equal && segments >= 3,
    `LiveFilter: after each sync the copy is the index's filter byte for byte (grown with it to ${segments} segments)`);
  check(cheap, 'LiveFilter: each delta is at most 48 + 16 bytes per key inserted');
  await guard.close();
}

async function testConcurrent(table) {
  let stop = false;
  const errors = [];
  const writers = [0, 1, 2].map(async () => {
    const conn = await connect();
    let n = 0;
    try {
      while (!stop) {
        await table.insert(n % 3 ? 1 : 20, conn);
        n++;
      }
    } catch (error) {
      errors.push(error);
    } finally {
      await conn.end();
    }
  });
  const byHand = await LiveFilter.open(connect, INDEX, { maxStaleness: 30 });
  const background = await LiveFilter.open(connect, INDEX, { maxStaleness: 30, refreshInterval: 0.1 });
  let total = 0;
  let syncs = 0;
  let backgroundMisses = 0;
  let backgroundChecks = 0;
  const started = Date.now();
  while (Date.now() - started < 8000) {
    const result = await byHand.sync();
    syncs++;
    total += misses(byHand, table.committedBefore(result.lsn));
    backgroundMisses += misses(background, table.committedBefore(background.lsn));
    backgroundChecks++;
    await sleep(50);
  }
  stop = true;
  await Promise.all(writers);
  check(errors.length === 0, `concurrent: three writers inserted without error (${errors[0] || 'none'})`);
  check(syncs >= 50 && total === 0,
    `concurrent: ${syncs} syncs by hand while 3 writers insert, ${table.allKeys().length} keys: 0 misses of keys committed before each sync's upto`);
  check(backgroundChecks >= 50 && backgroundMisses === 0,
    `concurrent: LiveFilter refreshing in the background: 0 misses at each of ${backgroundChecks} positions it reached`);

  const final = lsnValue((await table.conn.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l);
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline && lsnValue(background.lsn) < final) await sleep(50);
  check(misses(background, table.allKeys()) === 0 && background.lastError === null,
    'concurrent: the background refresh catches up with the last insert, every key found');
  await background.close();
  const lsn = background.lsn;
  await sleep(300);
  check(background.lsn === lsn, 'concurrent: close() stops the background refresh');
  await byHand.sync();
  check(sameBits(byHand.toFilter().toBytes(), await table.serverFilter()),
    'concurrent: quiet again, the copy synced by hand has the index\'s segments and bits');
  await byHand.close();
}

async function testReindex(table) {
  const guard = await LiveFilter.open(connect, INDEX, { maxStaleness: 30 });
  let ok = true;
  for (const statement of ['REINDEX INDEX users_guard', 'REINDEX INDEX CONCURRENTLY users_guard']) {
    await table.conn.query(statement);
    await table.insert(10);
    let result = await guard.sync();
    ok = ok && result.reload && guard.toFilter().toBytes().equals(await table.serverFilter())
      && misses(guard, table.allKeys()) === 0;
    result = await guard.sync();
    ok = ok && !result.reload;
  }
  check(ok, 'REINDEX and REINDEX CONCURRENTLY: the next sync reloads, the one after is a delta again, every key found');
  await guard.close();
}

async function testApplyChanges(table) {
  const conn = table.conn;
  const snapshot = (await conn.query(`SELECT lsn::text AS lsn, filter::bytea AS filter, timeline, build::text AS build
    FROM bloom_index_snapshot($1)`, [INDEX])).rows[0];
  const copy = Filter.fromBytes(snapshot.filter);
  const keys = await table.insert(100);
  const changes = (await conn.query(`SELECT upto::text AS upto, reload, delta
    FROM bloom_index_changes($1, $2::pg_lsn, $3, $4::pg_lsn)`, [INDEX, snapshot.lsn, snapshot.timeline, snapshot.build])).rows[0];
  const before = copy.toBytes();
  const damaged = Buffer.from(changes.delta);
  damaged[damaged.length - 1] ^= 1;
  let refused = false;
  try {
    copy.applyChanges(damaged);
  } catch (error) {
    refused = error instanceof bf.InvalidFilterError && error.code === 'BFC_ERR_INVALID';
  }
  check(refused && copy.toBytes().equals(before),
    'Filter.applyChanges: a damaged delta throws InvalidFilterError, the copy unchanged');
  const other = Filter.empty('number', 1000, 0.01).add(1);
  const otherBytes = other.toBytes();
  let mismatch = false;
  try {
    other.applyChanges(changes.delta);
  } catch (error) {
    mismatch = error instanceof bf.DeltaMismatchError && error.errno === 9;
  }
  check(mismatch && other.toBytes().equals(otherBytes),
    'Filter.applyChanges: another filter\'s delta throws DeltaMismatchError, unchanged');
  copy.applyChanges(changes.delta);
  check(!changes.reload && changes.delta.length <= 48 + 8 + 8 * keys.length && misses(copy, keys) === 0
    && copy.toBytes().equals(await table.serverFilter()),
  `Filter.applyChanges: a delta of 100 keys (${changes.delta.length} bytes) makes the snapshot the index's filter again`);
}

async function testWriteThrough(table) {
  let hook = null;
  // a connection that runs a hook once, after a snapshot was fetched and
  // before LiveFilter installs it
  const pausing = async () => {
    const client = await connect();
    return {
      async query(text, values) {
        const result = await client.query(text, values);
        if (text.includes('bloom_index_snapshot') && hook !== null) {
          const run = hook;
          hook = null;
          await run();
        }
        return result;
      },
      end: () => client.end(),
    };
  };
  const guard = await LiveFilter.open(pausing, INDEX, { maxStaleness: 30 });
  await table.conn.query('REINDEX INDEX users_guard');
  const copy = guard.toFilter();
  let key = -1000000;
  while (copy.contains(key)) key--;
  hook = async () => {
    await table.conn.query('INSERT INTO users VALUES ($1)', [key]);
    table.keys.push([0n, key]);
    guard.add(key);
  };
  const result = await guard.sync();
  check(result.reload && !guard.toFilter().contains(key) && guard.contains(key),
    'write-through: a key committed and added while a reload\'s snapshot was in flight is missing from that snapshot, and still found');
  check(guard.containsMany([key, 10]).every(Boolean), 'write-through: ... by containsMany too');
  await guard.sync();
  check(guard.toFilter().contains(key) && guard.contains(key) && guard._written.length === 0,
    'write-through: the next sync brings it in the copy, and the written key is let go');
  let wrongKind = false;
  try {
    guard.add('a text key');
  } catch (error) {
    wrongKind = error instanceof bf.KindError;
  }
  check(wrongKind, 'write-through: a key of another kind than the index\'s is a KindError');
  await guard.close();
}

function runScript(path) {
  try {
    execFileSync('bash', [path], { stdio: 'ignore' });
    return true;
  } catch (error) {
    return false;
  }
}

async function testStaleness(table) {
  const guard = await LiveFilter.open(connect, INDEX, { maxStaleness: 1 });
  const background = await LiveFilter.open(connect, INDEX, { maxStaleness: 1, refreshInterval: 0.2 });
  const copy = guard.toFilter();
  let absent = -1;
  while (copy.contains(absent)) absent--;
  let absent2 = absent - 1;
  while (copy.contains(absent2)) absent2--;
  check(!guard.contains(absent) && guard.containsMany([absent, absent2]).every((f) => !f),
    'staleness: fresh, an absent key is absent');

  await table.conn.end();
  check(runScript(stopScript), 'staleness: the server stops');
  const stopped = Date.now();
  const lsn = guard.lsn;
  let syncFailed = false;
  try {
    await guard.sync();
  } catch (error) {
    syncFailed = true;
  }
  check(syncFailed && guard.lsn === lsn && guard.toFilter() !== null,
    'staleness: a sync with the server down fails, and the copy stays as it was');
  while (Date.now() - stopped < 1300) await sleep(100);
  check(guard.staleness > 1 && guard.contains(absent) && guard.containsMany([absent, absent2]).every(Boolean),
    'staleness: past maxStaleness, contains and containsMany answer true for absent keys');
  check(background.contains(absent) && background.lastError !== null,
    'staleness: the background refresh records its failure, and its guard is off too');

  check(runScript(startScript), 'staleness: the server starts again');
  table.conn = await connect();
  await guard.sync();
  check(!guard.contains(absent) && guard.staleness < 1,
    'staleness: after the restart a sync succeeds (a new connection) and the guard resumes');
  const keys = await table.insert(50);
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline && (background.lastError !== null || background.contains(absent)
    || misses(background, keys) !== 0)) await sleep(100);
  check(background.lastError === null && !background.contains(absent) && misses(background, keys) === 0,
    'staleness: the background refresh resumes by itself, new keys found');
  await guard.close();
  await background.close();
}

/** A real pg.Client never connected, and a database without the
 * extension: clear errors, not a hang or a cast hint. */
async function testObserving() {
  const unconnected = new pg.Client(config);
  const outcome = await Promise.race([
    LiveFilter.open(unconnected, INDEX).then(() => 'opened', (error) => error),
    sleep(5000).then(() => 'hung'),
  ]);
  check(outcome instanceof bf.ParameterError && /not connected/.test(outcome.message),
    `LiveFilter.open of an unconnected pg.Client fails at once, saying so (${outcome})`);
  const admin = await connect();
  await admin.query('CREATE DATABASE noext');
  await admin.end();
  const noext = new pg.Client({ ...config, database: 'noext' });
  await noext.connect();
  let error = null;
  try {
    await LiveFilter.open(noext, INDEX);
  } catch (caught) {
    error = caught;
  }
  check(error instanceof bf.ExtensionError && /CREATE EXTENSION bloomfilter/.test(error.message)
    && error.cause && error.cause.code === '42883',
  `a database without the extension: ExtensionError saying CREATE EXTENSION bloomfilter (${error})`);
  await noext.end();
}

async function main() {
  const admin = new pg.Client({ ...config, database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE live');
  await admin.end();
  const table = new Table(await connect());
  await table.conn.query('SET client_min_messages = warning');
  await table.conn.query('CREATE EXTENSION bloomfilter');
  await table.conn.query('CREATE TABLE users (id bigint PRIMARY KEY)');
  await table.conn.query(`CREATE INDEX ${INDEX} ON users USING bloomfilter (id) WITH (capacity = 5000)`);
  await table.insert(3000);
  for (const [name, stage] of [['rounds', testRounds], ['concurrent', testConcurrent], ['reindex', testReindex],
    ['applyChanges', testApplyChanges], ['write-through', testWriteThrough], ['observing', testObserving],
    ['staleness', testStaleness]]) {
    try {
      await stage(table);
    } catch (error) {
      check(false, `${name}: the test ran to its end`, error.stack);
    }
  }
  await table.conn.end();
  console.log(`# live.js: ${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.log(`not ok - live.js stopped: ${error.message}`);
  console.log(error.stack.split('\n').map((l) => `#   ${l}`).join('\n'));
  process.exitCode = 1;
});
