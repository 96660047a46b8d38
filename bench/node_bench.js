'use strict';
// bench/node_bench.js: bench/node.sh's Node half: the package's probes and
// loads (node/, built), as "name value" lines.
//
//   node bench/node_bench.js probes FILE
//     containsMany of 1,000,000 number keys (a plain array of numbers)
//     against the filter client_bench.c probes, 100,000 keys at 1%
//     (124 kB), with the same keys: its answers in a new Uint8Array (the
//     default), and into a Uint8Array given, as the C library's batch
//     writes them; contains() one key at a time; and writes a 12 MB filter
//     (10,000,000 keys at 1%, 1,000,000 in it) to FILE.
//   node bench/node_bench.js load FILE
//     Filter.fromBytes of FILE's filter, first thing in the process (into
//     memory new to it), then the best of 5 (each freed before the next).
// Best of 5 runs each.

const fs = require('fs');
const { performance } = require('perf_hooks');
const path = require('path');
const { Filter } = require(path.join(__dirname, '..', 'node'));

const KEYS = 100000;
const PROBES = 1000000;
const RUNS = 5;

function best(run) {
  let fastest = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}

function probes(file) {
  const f = Filter.empty('number', KEYS, 0.01);
  f.addMany(Array.from({ length: KEYS }, (_, i) => i * 3));
  // client_bench.c's probes: present and absent keys in an order the
  // branch predictor cannot learn
  const keys = Array.from({ length: PROBES }, (_, i) => Number((BigInt(i) * 2654435761n) % BigInt(KEYS * 6)));
  const out = new Uint8Array(PROBES);
  let found = 0;
  const manyOut = best(() => { f.containsMany(keys, out); });
  const many = best(() => { found = f.containsMany(keys).length; });
  const single = best(() => {
    let n = 0;
    for (let i = 0; i < PROBES; i++) if (f.contains(keys[i])) n++;
    found = n;
  });
  console.log(`node_many_out_ns ${(manyOut / PROBES * 1e6).toFixed(1)}`);
  console.log(`node_many_ns ${(many / PROBES * 1e6).toFixed(1)}`);
  console.log(`node_single_ns ${(single / PROBES * 1e6).toFixed(1)}`);
  console.log(`found ${found}`);

  const large = Filter.empty('number', 10000000, 0.01);
  large.addMany(Array.from({ length: 1000000 }, (_, i) => i * 7));
  fs.writeFileSync(file, large.toBytes());
}

function load(file) {
  const bytes = fs.readFileSync(file);
  const start = performance.now();
  Filter.fromBytes(bytes).free();
  const first = performance.now() - start;
  const fastest = best(() => { Filter.fromBytes(bytes).free(); });
  console.log(`node_load_first_ms ${first.toFixed(1)}`);
  console.log(`node_load_ms ${fastest.toFixed(1)}`);
  console.log(`node_load_bytes ${bytes.length}`);
}

const [mode, file] = process.argv.slice(2);
if (mode === 'probes') probes(file);
else if (mode === 'load') load(file);
else throw new Error('usage: node bench/node_bench.js probes|load FILE');
