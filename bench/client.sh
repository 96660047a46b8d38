#!/bin/bash
# bench/client.sh: the client library's probe speed, as "#" lines:
#   - C, a cache-resident filter (100,000 int64 keys at 1%, 124 kB):
#     ns per key, one bfc_contains_int64 call per key and in one batch
#     (target: 30 ns or less); and the input of a 12 MB filter
#     (bfc_from_bytes, the whole value checked) against the same bytes in
#     1.0's format (header check only), in turn (target: 1.3x or less);
#   - Python, contains_many of a list of 1,000,000 ints against a filter of
#     1,000,000 keys, converting the list and building the list of answers
#     included (target: 300 ns or less per key); and contains() one key at a
#     time, for comparison;
#   - Python LiveFilter, the same probes through a guard that follows an
#     index (its copy loaded by a sync, here from a stand-in connection, as
#     no server is needed to probe): contains_many (target: 100 ns or less
#     per key) and contains (target: 2 us or less), and their ratio to
#     Filter's in the same run.
# Best of 5 runs each; one CPU.  Needs make client (run from anywhere):
#
#   make client && bash bench/client.sh
set -u
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -O2 -Iclient -o "$work/client_bench" bench/client_bench.c client/libbloomfilter.a -lm -pthread ||
	{ echo "# bench/client.sh: could not build bench/client_bench.c"; exit 1; }
"$work/client_bench" | awk '
	/^c_single_ns/ { printf "# perf: C probe, cache-resident filter: %.1f ns/key one call per key", $2 }
	/^c_batch_ns/ { printf ", %.1f ns/key in a batch (target <= 30)\n", $2 }
	/^c_load_ms/ { load = $2 }
	/^c_load_v2_ms/ { printf "# perf: C bfc_from_bytes of a 12 MB filter: %.1f ms, its version 2 form (header check only) %.1f ms: %.2fx (target <= 1.3)\n", load, $2, load / $2 }'

# From a directory of its own, with python/ on PYTHONPATH, as a program
# of the user's runs.
cd "$work" && PYTHONPATH="$repo/python" /usr/bin/python3 - <<'PY'
import time
import bloomfilter

f = bloomfilter.Filter.empty("number", 1_000_000, 0.01)
f.add_many(range(0, 3_000_000, 3))
keys = list(range(500_000, 1_500_000))
best = min((lambda t: (f.contains_many(keys), time.perf_counter() - t)[1])(time.perf_counter())
           for _ in range(5))
single = keys[:100_000]
best_single = min((lambda t: ([f.contains(k) for k in single], time.perf_counter() - t)[1])(time.perf_counter())
                  for _ in range(5))
print("# perf: Python contains_many, 1,000,000 int keys: %.0f ns/key (target <= 300); "
      "contains() one at a time: %.0f ns/key" % (best / len(keys) * 1e9, best_single / len(single) * 1e9))


class SnapshotOnly:
    """A DB-API stand-in whose one answer is bloom_index_snapshot's row."""

    def __init__(self, data):
        self.row = ("0/1000000", data, 1, "0/100")

    def cursor(self):
        return self

    def execute(self, sql):
        assert "bloom_index_snapshot" in sql

    def fetchone(self):
        return self.row

    def close(self):
        pass

    def rollback(self):
        pass


guard = bloomfilter.LiveFilter(SnapshotOnly(f.to_bytes()), "users_id_guard", max_staleness=3600)
assert guard.contains_many(keys) == f.contains_many(keys)
live = min((lambda t: (guard.contains_many(keys), time.perf_counter() - t)[1])(time.perf_counter())
           for _ in range(5))
live_single = min((lambda t: ([guard.contains(k) for k in single], time.perf_counter() - t)[1])(time.perf_counter())
                  for _ in range(5))
print("# perf: LiveFilter contains_many, 1,000,000 int keys: %.0f ns/key (target <= 100), "
      "%.2fx Filter's; contains(): %.0f ns/key (target <= 2000), %.2fx Filter's"
      % (live / len(keys) * 1e9, live / best, live_single / len(single) * 1e9, live_single / best_single))
PY
