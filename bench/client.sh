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
#   - Python, against a set of the same keys in the same run: `k in f` and
#     f.contains(k) over ints and strs, half of them present, as a ratio to
#     `k in s` (target: 6x or less); contains_many of a list of ints
#     (target: 30 ns or less per key) and of an array('q') (target: 10 ns
#     or less per key) against the C batch's cache-resident filter; medians
#     of 7 runs, with PASS or FAIL;
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



def median_seconds(run, runs=7):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return sorted(times)[runs // 2]


def verdict(value, target):
    return "PASS" if value <= target else "FAIL"


def loop_in(container, probes):
    for k in probes:
        k in container


def loop_contains(filter_, probes):
    for k in probes:
        filter_.contains(k)


import array
for label, present, absent in (
        ("int", list(range(0, 600_000, 3)), list(range(1, 600_000, 3))),
        ("str", ["user-%d" % i for i in range(200_000)], ["guest-%d" % i for i in range(200_000)])):
    kind = "number" if label == "int" else "text"
    small = bloomfilter.Filter.empty(kind, len(present), 0.01)
    small.add_many(present)
    members = set(present)
    probes = [k for pair in zip(present, absent) for k in pair]
    base = median_seconds(lambda: loop_in(members, probes))
    operator = median_seconds(lambda: loop_in(small, probes))
    method = median_seconds(lambda: loop_contains(small, probes))
    print("# perf: Python `k in f`, %d %s keys: %.0f ns/key, %.2fx `k in set` (%.0f ns/key; "
          "target <= 6x) %s; f.contains(k): %.0f ns/key, %.2fx %s"
          % (len(probes), label, operator / len(probes) * 1e9, operator / base,
             base / len(probes) * 1e9, verdict(operator / base, 6),
             method / len(probes) * 1e9, method / base, verdict(method / base, 6)))

# the C batch's own filter: 100,000 keys at 1%, cache-resident
resident = bloomfilter.Filter.empty("number", 100_000, 0.01)
resident.add_many(range(0, 300_000, 3))
batch_keys = list(range(1_000_000))
packed = array.array("q", batch_keys)
as_list = median_seconds(lambda: resident.contains_many(batch_keys)) / len(batch_keys) * 1e9
as_array = median_seconds(lambda: resident.contains_many(packed)) / len(batch_keys) * 1e9
print("# perf: Python contains_many, 1,000,000 int keys, cache-resident filter: a list %.1f ns/key (target <= 30) %s; "
      "an array('q') %.1f ns/key (target <= 10) %s"
      % (as_list, verdict(as_list, 30), as_array, verdict(as_array, 10)))

class SnapshotOnly:
    """A DB-API stand-in whose one answer is bloom_index_snapshot's row."""

    def __init__(self, data):
        self.row = ("0/1000000", data, 1, "0/100", False)

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
