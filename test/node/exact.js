'use strict';
// test/node/exact.js: the Node package (@bloomfilter/client, installed from
// its npm pack tarball by run.sh) against the server, through node-postgres,
// in the throwaway cluster run.sh started, over the keys of
// test/client/keys.sql (edge values included).
//
// For every kind with a JavaScript form: the server's filter answers in
// Node exactly as in the server for every key, present and absent (false
// positives included), one at a time and in batches, from its binary and
// text forms; bloom_info's fields; filters built in Node equal the
// server's byte for byte, load into the server ($1::bytea::bloom and text
// input) and answer there as its own; unions of a Node half and a server
// half equal the server's union.  Growing filters (chains) likewise, and
// damaged values (the fuzz corpus, mutants, text forms) are refused exactly
// where the server refuses them, for the same reason.
//
// Prints "ok - ..." / "not ok - ..." lines, which run.sh counts, and "#"
// lines of detail.  Arguments: the socket directory, the port, the
// database, and the rechecksum helper (test/property/rechecksum.c, built).

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const pg = require('pg');
const bf = require('@bloomfilter/client');

const { Filter } = bf;
const [host, port, database, rechecksum] = process.argv.slice(2);
const REPO = path.resolve(__dirname, '..', '..');

let passed = 0;
let failed = 0;

function check(description, condition, detail) {
  if (condition) {
    passed++;
    console.log(`ok - ${description}`);
  } else {
    failed++;
    console.log(`not ok - ${description}`);
    if (detail) for (const line of String(detail).split('\n').slice(0, 15)) console.log(`#   ${line}`);
  }
  return condition;
}

const SQL_TYPES = {
  number: 'numeric', float: 'float8', text: 'text', bytea: 'bytea', uuid: 'uuid',
  boolean: 'boolean', date: 'date', timestamp: 'timestamp', timestamptz: 'timestamptz',
};

// The server's own text of each key (TimeZone UTC, DateStyle ISO), which
// the JavaScript value is made from.
const CANONICAL = {
  number: 's::numeric::text', float: 's::float8::text', text: 's', bytea: 's::bytea',
  uuid: 's::uuid::text', boolean: 's::boolean::text', date: 's::date::text',
  timestamp: 's::timestamp::text', timestamptz: 's::timestamptz::text',
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The JavaScript value a user would probe with, varied by id so that
 * every JavaScript form of a kind is used: numbers, bigints and numeric()
 * for numbers; Dates and the wrappers for dates and timestamps; uuid()
 * from each spelling keys.sql has and from bytes. */
function native(kind, id, s, c) {
  switch (kind) {
    case 'number': {
      if (/^-?\d+$/.test(c)) {
        const big = BigInt(c);
        if (id % 3 === 0 && BigInt(Number(big)) === big) return Number(big);
        if (id % 3 === 1 || big < INT64_MIN || big > INT64_MAX) return big;
        return bf.numeric(s);
      }
      return bf.numeric(id % 2 ? s : c);
    }
    case 'float':
      return Number(c);
    case 'text':
      return s;
    case 'bytea':
      return id % 2 ? c : new Uint8Array(c);
    case 'uuid':
      return id % 2 ? bf.uuid(s) : bf.uuid(Buffer.from(c.replace(/-/g, ''), 'hex'));
    case 'boolean':
      return c === 'true';
    case 'date':
      if (id % 2 && /^\d{4}-\d\d-\d\d$/.test(c)) return bf.date(new Date(`${c}T00:00:00Z`));
      return bf.date(id % 4 === 0 ? s : c);
    case 'timestamp':
      if (id % 2 && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,3})?$/.test(c)) {
        return bf.timestamp(new Date(`${c.replace(' ', 'T')}Z`));
      }
      return bf.timestamp(c);
    case 'timestamptz':
      if (id % 2 && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,3})?\+00$/.test(c)) {
        return new Date(`${c.slice(0, -3).replace(' ', 'T')}Z`);
      }
      return bf.timestamptz(id % 4 === 0 ? c : s);
    default:
      throw new Error(kind);
  }
}

function typeOf(key) {
  if (key instanceof bf.Key) return `${key.kind}()`;
  if (key instanceof Buffer) return 'Buffer';
  if (key instanceof Uint8Array) return 'Uint8Array';
  if (key instanceof Date) return 'Date';
  return typeof key;
}

function show(key) {
  if (typeof key === 'bigint') return `${key}n`;
  if (key instanceof Uint8Array) return `<${Buffer.from(key).toString('hex')}>`;
  if (key instanceof Date) return key.toISOString();
  return typeof key === 'string' ? JSON.stringify(key) : String(key);
}

function differences(keys, got, expected, limit = 5) {
  const out = [];
  for (let i = 0; i < keys.length && out.length < limit; i++) {
    if (got[i] !== expected[i]) out.push(`${show(keys[i])}: node ${got[i]}, server ${expected[i]}`);
  }
  return out.join('\n');
}

/** containsMany's answers, a Uint8Array of 1 and 0, as booleans (null
 * if they come in any other form). */
function booleans(answers) {
  return answers instanceof Uint8Array ? Array.from(answers, (b) => b === 1) : null;
}

function sameArrays(a, b) {
  if (a === null) return false;
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

const INFO_FIELDS = ['format_version', 'layout', 'bits', 'bytes', 'hashes', 'capacity', 'target_fpr',
  'inserted', 'bits_set', 'fill_ratio', 'estimated_distinct', 'estimated_fpr', 'key_kind', 'seed',
  'key_environment', 'over_capacity', 'segments', 'growth'];

/** bloom_info's row, every column as text, against info(). */
async function infoProblems(db, expression, values, info) {
  const columns = INFO_FIELDS.map((f) => `i.${f}::text AS ${f}`).join(', ');
  const row = (await db.query(`SELECT ${columns} FROM bloom_info(${expression}) i`, values)).rows[0];
  const problems = [];
  for (const name of INFO_FIELDS) {
    const text = row[name];
    const value = info[name];
    let same;
    if (text === null) same = value === null;
    else if (typeof value === 'boolean') same = (text === 'true') === value;
    else if (typeof value === 'bigint') same = BigInt(text) === value;
    else if (typeof value === 'number') same = Number(text) === value || (Number.isNaN(value) && text === 'NaN');
    else same = text === value;
    if (!same) problems.push(`${name}: server ${text}, node ${show(value)}`);
  }
  return problems.join('\n');
}

async function bytesOf(db, sql, values) {
  return (await db.query(sql, values)).rows[0].v;
}

// ---------------------------------------------------------------------------
// Per kind

async function testKind(db, kind, rows, hashBit) {
  const type = SQL_TYPES[kind];
  const ids = rows.map((r) => r.id);
  const present = rows.map((r) => r.present);
  const keys = rows.map((r) => native(kind, r.id, r.s, r.c));
  const npresent = present.filter(Boolean).length;
  const capacity = Math.max(npresent, 1);
  const label = `${kind} (${npresent} present, ${rows.length - npresent} absent keys)`;

  await db.query(`CREATE TABLE f_${kind} AS
    SELECT bloom_agg(s::${type}) AS agg,
           bloom_add_all(bloom_empty(${capacity}, 0.01), array_agg(s::${type} ORDER BY id)) AS fixed,
           bloom_add_all(bloom_empty(${capacity}, 0.01),
                         coalesce(array_agg(s::${type} ORDER BY id) FILTER (WHERE hashint4(id) & 1 = 1),
                                  '{}')) AS half_b
    FROM keys WHERE kind = '${kind}' AND present`);
  const answers = new Map((await db.query(`SELECT k.id, bloom_contains(f.agg, k.s::${type}) AS a
    FROM keys k, f_${kind} f WHERE k.kind = '${kind}'`)).rows.map((r) => [r.id, r.a]));
  const expected = ids.map((id) => answers.get(id));
  const falsePositives = expected.filter((e, i) => e && !present[i]).length;
  const { agg, aggText, fixed, halfB } = (await db.query(`SELECT agg::bytea AS agg, agg::text AS "aggText",
    fixed::bytea AS fixed, half_b::bytea AS "halfB" FROM f_${kind}`)).rows[0];
  check(`${label}: the server finds every present key`, expected.every((e, i) => e || !present[i]));

  const f = Filter.fromBytes(agg);
  const one = keys.map((k) => f.contains(k));
  check(`${label}: contains() gives the server's answer for every key (${falsePositives} absent keys answered true)`,
    sameArrays(one, expected), differences(keys, one, expected));
  const many = booleans(f.containsMany(keys));
  check(`${kind}: containsMany() likewise`, sameArrays(many, expected), differences(keys, many ?? [], expected));
  const byType = new Map();
  keys.forEach((k, i) => {
    const t = typeOf(k);
    if (!byType.has(t)) byType.set(t, [[], []]);
    byType.get(t)[0].push(k);
    byType.get(t)[1].push(expected[i]);
  });
  let batchesSame = true;
  for (const [ks, es] of byType.values()) batchesSame = batchesSame && sameArrays(booleans(f.containsMany(ks)), es);
  check(`${kind}: containsMany() of one type at a time (${[...byType.keys()].sort().join(', ')}) likewise`, batchesSame);
  check(`${kind}: fromText() of the server's text equals fromBytes(), toText() is the server's text`,
    Filter.fromText(aggText).equals(f) && f.toText() === aggText && Filter.load(aggText).equals(f));

  let problems = await infoProblems(db, `(SELECT agg FROM f_${kind})`, [], f.info());
  check(`${kind}: info() equals bloom_info`, !problems, problems);

  // built in Node: the server's bytes
  const presentKeys = keys.filter((k, i) => present[i]);
  const built = Filter.empty(kind, capacity, 0.01).addMany(presentKeys);
  check(`${kind}: Filter.empty(${capacity}, 0.01) + addMany() equals bloom_add_all(bloom_empty(...), keys) byte for byte`,
    built.toBytes().equals(fixed));
  const oneByOne = Filter.empty(kind, capacity, 0.01);
  for (const k of presentKeys) oneByOne.add(k);
  check(`${kind}: ... and add() one key at a time likewise`, oneByOne.equals(built));

  // loaded into the server, through the bytea cast and text input
  await db.query(`CREATE TABLE n_${kind} (by_bytea bloom, by_text bloom)`);
  await db.query(`INSERT INTO n_${kind} VALUES ($1::bytea::bloom, $2::bloom)`, [built.toBytes(), built.toText()]);
  const mismatch = (await db.query(`SELECT count(*)::int AS n FROM keys k, n_${kind} n, f_${kind} f
    WHERE k.kind = '${kind}' AND (
      bloom_contains(n.by_bytea, k.s::${type}) IS DISTINCT FROM bloom_contains(f.fixed, k.s::${type}) OR
      bloom_contains(n.by_text, k.s::${type}) IS DISTINCT FROM bloom_contains(f.fixed, k.s::${type}) OR
      NOT bloom_contains(n.by_bytea, k.s::${type}) AND k.present)`)).rows[0].n;
  check(`${kind}: the filter built in Node loads into the server ($1::bytea::bloom, text input) and answers there as the server's own`,
    mismatch === 0, `${mismatch} keys differ`);

  // unions: half A built in Node, half B by the server
  const halfA = Filter.empty(kind, capacity, 0.01).addMany(keys.filter((k, i) => present[i] && !hashBit.get(ids[i])));
  const union = halfA.union(Filter.fromBytes(halfB));
  const serverUnion = await bytesOf(db, 'SELECT ($1::bytea::bloom | $2::bytea::bloom)::bytea AS v', [halfA.toBytes(), halfB]);
  check(`${kind}: union of a Node-built and a server-built half equals the server's union byte for byte`,
    union.toBytes().equals(serverUnion));
  check(`${kind}: ... and the server's filter of all the keys`, union.toBytes().equals(fixed));
}

// ---------------------------------------------------------------------------
// Growing filters

const SERVER_CHAINS = [
  ['number', 'bloom_add_all(bloom_empty(1000, 0.01, 2), array_agg(s::numeric ORDER BY id))', 'bloom_add_all(bloom_empty(1000, 0.01, 2), keys)'],
  ['text', 'bloom_agg(s::text, 1000, 0.01, 2)', 'bloom_agg(key, 1000, 0.01, 2)'],
  ['uuid', 'bloom_agg(s::uuid, 1000, 0.001, 4)', 'bloom_agg(key, 1000, 0.001, 4)'],
];

async function testServerChain(db, kind, expression, description, rows) {
  const type = SQL_TYPES[kind];
  const keys = rows.map((r) => native(kind, r.id, r.s, r.c));
  await db.query(`CREATE TABLE chain_${kind} AS SELECT ${expression} AS f FROM keys WHERE kind = '${kind}' AND present`);
  const { value, text, segments } = (await db.query(`SELECT f::bytea AS value, f::text AS text,
    (bloom_info(f)).segments FROM chain_${kind}`)).rows[0];
  const label = `${kind} chain ${description} (${segments} segments)`;
  check(`${label}: the server's has 4 segments or more`, segments >= 4);
  const answers = new Map((await db.query(`SELECT k.id, bloom_contains(c.f, k.s::${type}) AS a
    FROM keys k, chain_${kind} c WHERE k.kind = '${kind}'`)).rows.map((r) => [r.id, r.a]));
  const expected = rows.map((r) => answers.get(r.id));
  const f = Filter.fromBytes(value);
  const one = keys.map((k) => f.contains(k));
  check(`${label}: contains() gives the server's answer for every key`, sameArrays(one, expected),
    differences(keys, one, expected));
  const many = booleans(f.containsMany(keys));
  check(`${label}: containsMany() likewise`, sameArrays(many, expected), differences(keys, many ?? [], expected));
  check(`${label}: fromText() equals fromBytes(), toText() the server's text, toBytes() its bytes`,
    Filter.fromText(text).equals(f) && f.toText() === text && f.toBytes().equals(value));
  const info = f.info();
  const problems = await infoProblems(db, `(SELECT f FROM chain_${kind})`, [], info);
  check(`${label}: info() equals bloom_info (layout ${info.layout}, segments ${info.segments}, growth ${info.growth})`,
    !problems, problems);
}

async function testNodeChains(db, rows, hashBit) {
  const ordered = rows.filter((r) => r.present).sort((a, b) => a.id - b.id);
  const values = ordered.map((r) => native('number', r.id, r.s, r.c));
  const serverChain = (await db.query('SELECT f::bytea AS v FROM chain_number')).rows[0].v;
  const label = `number chain of ${values.length} keys`;

  const g = Filter.empty('number', 1000, 0.01, { growth: 2 }).addMany(values);
  check(`${label}: Filter.empty(growth 2) + addMany() equals bloom_add_all(bloom_empty(1000, 0.01, 2), keys) byte for byte (${g.info().segments} segments)`,
    g.toBytes().equals(serverChain));

  const ints = Array.from({ length: 20000 }, (_, i) => ((i + 1) * 7919) % 12007 - 6000);
  const expected = await bytesOf(db, 'SELECT bloom_add_all(bloom_empty(500, 0.001, 3), $1::bigint[])::bytea AS v', [ints]);
  const h = Filter.empty('number', 500, 0.001, { growth: 3 }).addMany(ints);
  check(`20000 number keys (12007 distinct) in one batch: addMany() equals bloom_add_all(bloom_empty(500, 0.001, 3), keys) byte for byte (${h.info().segments} segments)`,
    h.toBytes().equals(expected));
  const h2 = Filter.empty('number', 500, 0.001, { growth: 3 });
  for (const v of ints) h2.add(BigInt(v));
  check('... and add() of bigints one at a time likewise', h2.equals(h));

  const half = Math.floor(values.length / 2);
  const firstHalf = (await db.query(`SELECT bloom_add_all(bloom_empty(1000, 0.01, 2), array_agg(s::numeric ORDER BY id)
    FILTER (WHERE rank <= ${half}))::bytea AS v FROM (SELECT s, id, rank() OVER (ORDER BY id)
    FROM keys WHERE kind = 'number' AND present) k`)).rows[0].v;
  const grown = Filter.fromBytes(firstHalf);
  const before = grown.info().segments;
  grown.addMany(values.slice(half));
  check(`${label}: the server's chain of the first ${half} keys (${before} segments), grown in Node with the rest (${grown.info().segments} segments), equals the server's of all the keys byte for byte`,
    grown.toBytes().equals(serverChain));

  const a = Filter.empty('number', 1000, 0.01, { growth: 2 })
    .addMany(values.filter((v, i) => !hashBit.get(ordered[i].id)));
  const b = Filter.empty('number', 1000, 0.01, { growth: 2 })
    .addMany(values.filter((v, i) => hashBit.get(ordered[i].id)).slice(0, 2500));
  for (const [x, y, name] of [[a, b, 'a | b'], [b, a, 'b | a']]) {
    const serverUnion = await bytesOf(db, 'SELECT ($1::bytea::bloom | $2::bytea::bloom)::bytea AS v', [x.toBytes(), y.toBytes()]);
    const u = x.union(y);
    check(`union of Node chains of ${x.info().segments} and ${y.info().segments} segments, ${name}: equals the server's byte for byte`,
      u.toBytes().equals(serverUnion));
    const problems = await infoProblems(db, '$1::bytea::bloom', [u.toBytes()], u.info());
    check(`... and its info() equals bloom_info (${u.info().segments} segments, inserted ${u.info().inserted})`, !problems, problems);
  }
  const withServer = b.union(Filter.fromBytes(serverChain));
  const serverUnion = await bytesOf(db, 'SELECT ($1::bytea::bloom | $2::bytea::bloom)::bytea AS v', [b.toBytes(), serverChain]);
  check('union of a Node chain and the server\'s: equals the server\'s byte for byte', withServer.toBytes().equals(serverUnion));

  let serverRefuses = false;
  try {
    await db.query("SELECT $1::bytea::bloom | bloom_empty(1000, 0.01)", [a.toBytes()]);
  } catch (error) {
    serverRefuses = true;
  }
  let nodeRefuses = false;
  try {
    a.union(Filter.empty('number', 1000, 0.01));
  } catch (error) {
    nodeRefuses = error instanceof bf.IncompatibleFiltersError;
  }
  check('union of a growth 2 chain and a filter of fixed size: refused in Node (IncompatibleFiltersError) as by the server',
    serverRefuses && nodeRefuses);
}

// ---------------------------------------------------------------------------
// Damaged values

function verdict(load, value) {
  try {
    load(value);
    return 'ok';
  } catch (error) {
    if (!(error instanceof bf.InvalidFilterError)) return `${error.name}: ${error.message}`;
    return error.message;
  }
}

/** The server's "ok" or "SQLSTATE detail" against Node's "ok" or message. */
function sameVerdict(server, node) {
  if (server === 'ok' || node === 'ok') return server === node;
  const space = server.indexOf(' ');
  const sqlstate = server.slice(0, space);
  const detail = server.slice(space + 1);
  return (sqlstate === '22P02' || sqlstate === '22P03') && node.endsWith(detail);
}

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed) {
  let a = seed;
  return (n) => {
    a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

async function serverVerdicts(db, fn, values) {
  const rows = (await db.query(`SELECT ordinality::int AS i, ${fn}(v) AS verdict FROM unnest($1::text[]) WITH ORDINALITY AS u(v, ordinality)`, [values])).rows;
  const out = new Array(values.length);
  for (const r of rows) out[r.i - 1] = r.verdict;
  return out;
}

function forgeChecksums(values) {
  const input = values.map((v, i) => `${i}\t${v.toString('hex')}\n`).join('');
  const out = execFileSync(rechecksum, { input, maxBuffer: 1 << 28 }).toString();
  return out.trim().split('\n').map((line) => Buffer.from(line.split('\t')[1], 'hex'));
}

async function testDamaged(db) {
  await db.query(`
    CREATE FUNCTION try_bytea(h text) RETURNS text LANGUAGE plpgsql AS $$
    DECLARE detail text;
    BEGIN
        PERFORM decode(h, 'hex')::bloom;
        RETURN 'ok';
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
        RETURN SQLSTATE || ' ' || detail;
    END $$;
    CREATE FUNCTION try_text(t text) RETURNS text LANGUAGE plpgsql AS $$
    DECLARE detail text;
    BEGIN
        PERFORM t::bloom;
        RETURN 'ok';
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
        RETURN SQLSTATE || ' ' || detail;
    END $$;`);

  const corpus = path.join(REPO, 'test', 'fuzz', 'corpus', 'validate');
  const names = fs.readdirSync(corpus).sort();
  const values = names.map((n) => fs.readFileSync(path.join(corpus, n)));
  let verdicts = await serverVerdicts(db, 'try_bytea', values.map((v) => v.toString('hex')));
  let bad = [];
  values.forEach((v, i) => {
    const node = verdict(Filter.fromBytes, v);
    if (!sameVerdict(verdicts[i], node)) bad.push(`${names[i]}: server ${verdicts[i]}, node ${node}`);
  });
  check(`fuzz corpus (${names.length} values, ${verdicts.filter((v) => v === 'ok').length} valid): Filter.fromBytes accepts and refuses exactly what the server's bytea cast does, for the same reason`,
    bad.length === 0, bad.join('\n'));

  const bases = (await db.query(`SELECT f::bytea AS v FROM (
      SELECT bloom_agg(s::numeric) FROM (SELECT s FROM keys WHERE kind = 'number' LIMIT 300) k
      UNION ALL SELECT bloom_agg(s) FROM (SELECT s FROM keys WHERE kind = 'text' LIMIT 100) k
      UNION ALL SELECT bloom_empty(10)
      UNION ALL SELECT bloom_empty(10, 0.01, 2)
      UNION ALL SELECT bloom_add_all(bloom_empty(20, 0.01, 3), ARRAY(SELECT generate_series(1, 300)))
      UNION ALL SELECT bloom_agg(jsonb_build_object('a', i)) FROM generate_series(1, 50) i) s(f)`)).rows.map((r) => r.v);
  const rng = random(42);
  const plain = [];
  const resigned = [];
  for (const base of bases) {
    for (let n = 0; n < 400; n++) {
      let value = Buffer.from(base);
      switch (n % 8) {
        case 0: value[rng(56)] ^= 1 << rng(8); break;
        case 1: value[rng(56)] = rng(256); break;
        case 2: value = value.subarray(0, rng(value.length)); break;
        case 3: value = Buffer.concat([value, Buffer.from(Array.from({ length: [1, 63, 64, 128][rng(4)] }, () => rng(256)))]); break;
        case 4: value[56 + rng(value.length - 56)] ^= 0xFF; break;
        default: {
          // a header field changed and the checksum made right again, so
          // that the checks behind the checksum are reached
          const at = [2, 3, 4, 5, 6, 7, 8, 12, 13, 15, 24, 31, 32, 39, 40, 47, 52, 55][rng(18)];
          value[at] = [0, 1, 2, 3, 10, 11, 32, 33, 64, 127, 128, 255, rng(256)][rng(13)];
          resigned.push(value);
          continue;
        }
      }
      plain.push(value);
    }
  }
  const mutants = plain.concat(forgeChecksums(resigned));
  verdicts = await serverVerdicts(db, 'try_bytea', mutants.map((v) => v.toString('hex')));
  bad = [];
  mutants.forEach((m, i) => {
    const node = verdict(Filter.fromBytes, m);
    if (!sameVerdict(verdicts[i], node)) bad.push(`${m.subarray(0, 60).toString('hex')}...: server ${verdicts[i]}, node ${node}`);
  });
  check(`${mutants.length} mutants of ${bases.length} filters (${verdicts.filter((v) => v === 'ok').length} accepted, ${new Set(verdicts).size} distinct reasons): Filter.fromBytes accepts and refuses exactly what the server does, for the same reason`,
    bad.length === 0, bad.join('\n'));

  const texts = [];
  for (const base of bases) {
    const text = `bloom:${base.toString('base64')}`;
    texts.push(text);
    for (let n = 0; n < 100; n++) {
      let t = text;
      const at = 6 + rng(t.length - 5);
      switch (n % 8) {
        case 0: t = t.slice(0, at) + [' ', '\t', '\n', '\r'][rng(4)] + t.slice(at); break;
        case 1: t = t.slice(0, at) + ['-', '_', '!', 'é', '\x7f', '*', '~'][rng(7)] + t.slice(at + 1); break;
        case 2: t = t.slice(0, at) + t.slice(at + 1); break;
        case 3: t = `${t.slice(0, at)}=${t.slice(at + 1)}`; break;
        case 4: t += ['AAAA', '====', '=', 'AA==', 'AAA=', 'A===', 'QQ==QQ=='][rng(7)]; break;
        case 5: t = ['BLOOM:', 'bloom', 'bloom: ', '', ' bloom:', 'bloom::'][rng(6)] + t.slice(6); break;
        case 6: t = t.slice(0, at); break;
        default: t = t.slice(0, at) + 'ABab+/09'[rng(8)] + t.slice(at + 1); break;
      }
      texts.push(t);
    }
  }
  verdicts = await serverVerdicts(db, 'try_text', texts);
  bad = [];
  texts.forEach((t, i) => {
    const node = verdict(Filter.fromText, t);
    if (!sameVerdict(verdicts[i], node)) bad.push(`${JSON.stringify(t.slice(0, 70))}: server ${verdicts[i]}, node ${node}`);
  });
  check(`${texts.length} text forms, damaged and quirky (${verdicts.filter((v) => v === 'ok').length} accepted): Filter.fromText accepts and refuses exactly what bloom_in does, for the same reason`,
    bad.length === 0, bad.join('\n'));
}

// ---------------------------------------------------------------------------

async function main() {
  const db = new pg.Client({ host, port: Number(port), user: 'postgres', database });
  await db.connect();
  await db.query("SET client_min_messages = warning; SET TimeZone = 'UTC'; SET DateStyle = 'ISO'; SET extra_float_digits = 1");
  const hashBit = new Map((await db.query('SELECT DISTINCT id, hashint4(id) & 1 = 1 AS bit FROM keys')).rows
    .map((r) => [r.id, r.bit]));
  const byKind = {};
  for (const kind of Object.keys(SQL_TYPES)) {
    byKind[kind] = (await db.query(`SELECT id, present, s, ${CANONICAL[kind]} AS c FROM keys
      WHERE kind = $1 ORDER BY id`, [kind])).rows;
    try {
      await testKind(db, kind, byKind[kind], hashBit);
    } catch (error) {
      check(`${kind}: the comparison ran to its end`, false, error.stack);
    }
  }
  for (const [kind, expression, description] of SERVER_CHAINS) {
    try {
      await testServerChain(db, kind, expression, description, byKind[kind]);
    } catch (error) {
      check(`${kind} chain: the comparison ran to its end`, false, error.stack);
    }
  }
  for (const [name, stage] of [['chains built in Node', () => testNodeChains(db, byKind.number, hashBit)],
    ['damaged values', () => testDamaged(db)]]) {
    try {
      await stage();
    } catch (error) {
      check(`${name}: the comparison ran to its end`, false, error.stack);
    }
  }
  await db.end();
  console.log(`# exact.js: ${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.log(`not ok - exact.js stopped: ${error.message}`);
  console.log(error.stack.split('\n').map((l) => `#   ${l}`).join('\n'));
  process.exitCode = 1;
});
