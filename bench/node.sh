#!/bin/bash
# bench/node.sh: the Node package's speed (node/, the client library in
# WebAssembly) against the C library's in the same run, as "#" lines:
#   - containsMany of 1,000,000 number keys, ns per key, its answers in a
#     new Uint8Array (the default), over the C library's batched probe
#     (bfc_contains_int64_many) of the same filter and keys
#     (client_bench.c; target: a ratio of 3 or less); and its answers into
#     a Uint8Array given, as the C library's batch writes them into memory
#     given;
#   - contains() one key at a time (target: 1000 ns or less);
#   - Filter.fromBytes of a 12 MB filter, into memory freed by the one
#     before, as a process that reloads a filter gets (target: 50 ms or
#     less); and the first in a process, into memory new to it, beside
#     the C library's first bfc_from_bytes (where the machine's cost of
#     new memory shows, the same in both).
# Best of 5 runs each, both on the same CPU (BENCH_CPU, default 0; "none"
# leaves them to the scheduler).  Needs make client and node/'s module
# (make -C node); run from anywhere:
#
#   make client && make -C node && bash bench/node.sh
set -u
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cpu=${BENCH_CPU:-0}
pin=()
if [ "$cpu" != none ] && command -v taskset >/dev/null; then
	pin=(taskset -c "$cpu")
fi

gcc -O2 -Iclient -o "$work/client_bench" bench/client_bench.c client/libbloomfilter.a -lm -pthread ||
	{ echo "# bench/node.sh: could not build bench/client_bench.c"; exit 1; }
{ "${pin[@]}" "$work/client_bench" &&
	"${pin[@]}" node bench/node_bench.js probes "$work/large.bloom" &&
	"${pin[@]}" node bench/node_bench.js load "$work/large.bloom"; } >"$work/figures.txt" ||
	{ echo "# bench/node.sh: a benchmark failed"; sed 's/^/# /' "$work/figures.txt"; exit 1; }

awk '
	{ value[$1] = $2 }
	END {
		ratio = value["node_many_ns"] / value["c_batch_ns"]
		printf "# perf: Node containsMany(keys), 1,000,000 number keys: %.1f ns/key; C batch: %.1f ns/key; ratio %.2f (target <= 3): %s\n",
			value["node_many_ns"], value["c_batch_ns"], ratio, ratio <= 3 ? "PASS" : "FAIL"
		printf "# perf: Node containsMany(keys, out) into a Uint8Array given: %.1f ns/key (ratio %.2f)\n",
			value["node_many_out_ns"], value["node_many_out_ns"] / value["c_batch_ns"]
		printf "# perf: Node contains() one key at a time: %.1f ns/key (target <= 1000): %s; C: %.1f ns/key\n",
			value["node_single_ns"], value["node_single_ns"] <= 1000 ? "PASS" : "FAIL", value["c_single_ns"]
		printf "# perf: Node Filter.fromBytes of a %.1f MB filter: %.1f ms (target <= 50): %s; C: %.1f ms\n",
			value["node_load_bytes"] / 1e6, value["node_load_ms"], value["node_load_ms"] <= 50 ? "PASS" : "FAIL",
			value["c_load_ms"]
		printf "# perf: ... the first in a process, into new memory: Node %.1f ms, C %.1f ms\n",
			value["node_load_first_ms"], value["c_load_first_ms"]
	}' "$work/figures.txt"
