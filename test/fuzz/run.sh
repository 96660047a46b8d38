#!/bin/bash
# test/fuzz/run.sh: coverage-guided fuzzing of bloomfilter's pure core
# (src/core/: bloom.c, sizing.c, qfilter.c, delta.c), plus the core's unit tests
# (test_bloom.c, test_qfilter.c, test_delta.c) under AddressSanitizer and UBSan,
# and the damaged-byte check (mutations.c).
#
#   bash test/fuzz/run.sh [SECONDS]           fuzz for SECONDS in all (default 60)
#   bash test/fuzz/run.sh --regenerate-corpus rewrite corpus/ from gen_corpus.c
#
# Owns the whole of test/fuzz/: four libFuzzer targets (fuzz_validate.c:
# bytes into the validator and what the glue does after it; fuzz_sizing.c:
# (capacity, fpr) into the sizing routine; fuzz_qfilter.c: bytes into
# qfilter's validator and every operation on what it accepts, and
# operation sequences on small qfilters against an exact multiset;
# fuzz_delta.c: bytes as an index's delta against copies of its filter,
# checked and applied), the seed generator and the committed seeds in
# corpus/.  Everything is built
# and fuzzed in a temp dir: the repository is only read, so CI never
# changes the committed corpus.
#
# One "ok - ..." / "not ok - ..." line per check, other output as "# ..."
# lines, and last "N passed, N failed"; exits non-zero when a check failed.
# Installs clang and its fuzzer runtime from Debian when they are missing.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
core="$repo/src/core"
. "$here/../lib.sh"
corpus="$here/corpus"
targets=(validate sizing qfilter delta)

# -O1 keeps the sanitizers fast without optimising checks away; -g names
# lines in reports.  No -Werror: a new compiler warning is not a finding.
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=all)
cflags=(-g -O1 -Wall -Wextra -I"$core")

# Longest input fuzz_validate tries: a header and 128 blocks.  Bigger values
# reach no new code and would only slow each execution down.
validate_max_len=$((56 + 128 * 64))

# Longest input fuzz_qfilter tries: a mode byte and a value of a few dozen
# blocks (the largest seed is 2.5 KB), or a few hundred operations.
qfilter_max_len=12000

# Longest input fuzz_delta tries: a mode byte and a delta of a few hundred
# hashes (the largest seed is under 1 KB).
delta_max_len=4096

# The run's directory (test/lib.sh's $WORK): the fuzzers, their logs.
work=""

note() {
	echo "# $*"
}

# Shows a log as comment lines, so that it cannot be taken for a result.
show_log() {
	local file=$1 lines=$2
	tail -n "$lines" "$file" | sed 's/^/#   /'
}

# The report part of a fuzzer log: from the first finding on, without
# libFuzzer's own stack frames, which say nothing about the core.
show_report() {
	local log=$1
	if grep -qE 'invariant violated|ERROR: |runtime error:' "$log"; then
		sed -n '/invariant violated\|ERROR: \|runtime error:/,$p' "$log" |
			grep -v ' in fuzzer::' | sed '/Shadow bytes around/q' | head -n 40 | sed 's/^/#   /'
	else
		show_log "$log" 20	# killed or failed without a report
	fi
}

usage_error() {
	echo "usage: bash test/fuzz/run.sh [SECONDS] | --regenerate-corpus" >&2
	not_ok "arguments: $1"
	finish
}

# clang, its libFuzzer/sanitizer runtime, llvm-cov and llvm-profdata (the
# llvm package, which clang only recommends) and xxhash.h, from Debian: the
# distribution's default LLVM, whatever its version.
ensure_fuzz_packages() {
	if ! ensure_packages clang libclang-rt-dev llvm libxxhash-dev; then
		not_ok "install clang, libclang-rt-dev, llvm and libxxhash-dev"
		finish
	fi
}

# compile OUTPUT LOG CLANG_ARGS...: one clang invocation, output in LOG.
compile() {
	compile_with "$core/sizing.c" "$@"
}

# compile_with SIZING OUTPUT LOG CLANG_ARGS...: the same, with the sizing
# code taken from SIZING (sizing.c, or an object built from it).
compile_with() {
	local sizing=$1 output=$2 log=$3
	shift 3
	clang "${cflags[@]}" "$@" -o "$output" "$core/bloom.c" "$sizing" "$core/hashbuf.c" \
		"$core/qfilter.c" "$core/delta.c" -lm >"$log" 2>&1
}

# fuzz_validate links sizing.c built apart, at -O2 and without the
# sanitizers or coverage.  Validating a chain sizes the rate of each of its
# segments, and a mutated header brings rates never sized before: under the
# sanitizers one such sizing takes hundreds of times an input's other work,
# and left fuzz_validate almost no time for anything else.  fuzz_delta
# links it too, for the same reason: a delta that grows a chain sizes each
# new segment.  fuzz_sizing fuzzes sizing.c itself under both sanitizers.
build_plain_sizing() {
	clang -g -O2 -I"$core" -c -o "$work/sizing_plain.o" "$core/sizing.c" \
		>"$work/sizing_plain.build.log" 2>&1
}

build_generator() {
	compile "$work/gen_corpus" "$work/gen_corpus.build.log" "${sanitize[@]}" \
		"$here/gen_corpus.c"
}

# The generator checks each seed's verdict; its output must equal corpus/.
check_corpus() {
	if ! build_generator; then
		show_log "$work/gen_corpus.build.log" 30
		not_ok "seed generator builds"
		return
	fi
	if "$work/gen_corpus" "$work/generated" >"$work/gen_corpus.log" 2>&1; then
		ok "seed generator: every seed gets the verdict its name says"
	else
		show_log "$work/gen_corpus.log" 20
		not_ok "seed generator: every seed gets the verdict its name says"
		return
	fi
	if diff -r "$work/generated" "$corpus" >"$work/corpus.diff" 2>&1; then
		ok "committed seed corpus equals the generator's output"
	else
		show_log "$work/corpus.diff" 20
		note "after an intended format change: bash test/fuzz/run.sh --regenerate-corpus"
		not_ok "committed seed corpus equals the generator's output"
	fi
}

build_target() {
	local target=$1 sizing=$core/sizing.c
	if [ "$target" = validate ] || [ "$target" = delta ]; then
		if ! build_plain_sizing; then
			show_log "$work/sizing_plain.build.log" 30
			not_ok "sizing.c builds for fuzz_$target"
			return
		fi
		sizing=$work/sizing_plain.o
	fi
	if compile_with "$sizing" "$work/fuzz_$target" "$work/fuzz_$target.build.log" \
		-fsanitize=fuzzer "${sanitize[@]}" "$here/fuzz_$target.c"; then
		ok "fuzz_$target builds with libFuzzer, ASan and UBSan"
	else
		show_log "$work/fuzz_$target.build.log" 30
		not_ok "fuzz_$target builds with libFuzzer, ASan and UBSan"
	fi
}

# A sanitizer or invariant report anywhere in a log.
has_report() {
	grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|invariant violated|SUMMARY: ' "$1"
}

# Prints the inputs libFuzzer saved, so that a CI finding can be replayed.
show_artifacts() {
	local target=$1 artifact
	for artifact in "$work/artifacts/$target"-*; do
		[ -e "$artifact" ] || continue
		note "input $(basename "$artifact") as base64; replay with:"
		note "  base64 -d > crash.bin; then run the fuzz_$target binary on crash.bin"
		base64 -w 0 "$artifact" | sed 's/^/#   /'
		echo
	done
}

# Every committed seed once, no mutation: a seed that now crashes is a
# regression, told apart from a finding of the random search.  Runs on the
# working copy, which libFuzzer may add to; the committed one is only read.
replay_seeds() {
	local target=$1 log="$work/replay_$target.log"
	mkdir -p "$work/corpus/$target" "$work/artifacts"
	cp "$corpus/$target"/* "$work/corpus/$target"/
	"$work/fuzz_$target" -runs=0 -timeout=25 -artifact_prefix="$work/artifacts/$target-" \
		"$work/corpus/$target" >"$log" 2>&1
	if [ $? -eq 0 ] && ! has_report "$log"; then
		ok "fuzz_$target: every committed seed runs clean"
	else
		show_report "$log"
		show_artifacts "$target"
		not_ok "fuzz_$target: every committed seed runs clean"
	fi
}

# Value of a libFuzzer statistic from a log, or "?".
stat_of() {
	local log=$1 pattern=$2 value
	value=$(grep -oE "$pattern" "$log" | tail -n 1 | grep -oE '[0-9]+$')
	echo "${value:-?}"
}

fuzz_target() {
	local target=$1 seconds=$2 log="$work/fuzz_$target.log" status max_len
	local execs rate cov edges corp
	case $target in
		validate) max_len=$validate_max_len ;;
		qfilter) max_len=$qfilter_max_len ;;
		delta) max_len=$delta_max_len ;;
		*) max_len=17 ;;
	esac

	# -timeout: one input running 25 s is a hang, and a finding.  The outer
	# timeout only guards against libFuzzer itself not stopping.
	timeout $((seconds + 300)) "$work/fuzz_$target" \
		-max_total_time="$seconds" -max_len="$max_len" -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/$target-" \
		"$work/corpus/$target" >"$log" 2>&1
	status=$?

	execs=$(stat_of "$log" 'stat::number_of_executed_units: +[0-9]+')
	rate=$(stat_of "$log" 'stat::average_exec_per_sec: +[0-9]+')
	cov=$(stat_of "$log" 'cov: [0-9]+')
	edges=$(grep -oE '\([0-9]+ inline' "$log" | head -n 1 | grep -oE '[0-9]+')
	corp=$(grep -oE 'corp: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
	note "fuzz_$target: ${seconds}s, $execs executions, $rate exec/s, coverage $cov of ${edges:-?} edges, corpus ${corp:-?} inputs (from $(ls "$corpus/$target" | wc -l) seeds)"

	if [ "$status" -eq 0 ] && ! has_report "$log"; then
		ok "fuzz_$target: ${seconds}s without a crash, leak, hang or UB report"
	else
		show_report "$log"
		show_artifacts "$target"
		not_ok "fuzz_$target: ${seconds}s without a crash, leak, hang or UB report (exit $status)"
	fi
}

# Line, function and branch coverage of bloom.c and sizing.c, of qfilter.c
# and of delta.c, by the working corpora after fuzzing.  Informational, not a
# check: it is the number to watch when the harnesses, the seeds or the core
# change.
report_coverage() {
	local target profiles=() objects=() totals
	if ! command -v llvm-cov >/dev/null || ! command -v llvm-profdata >/dev/null; then
		note "llvm not installed: no coverage report"
		return
	fi
	for target in "${targets[@]}"; do
		[ -d "$work/corpus/$target" ] || return
		compile "$work/cov_$target" "$work/cov_$target.build.log" -fsanitize=fuzzer \
			-fprofile-instr-generate -fcoverage-mapping "$here/fuzz_$target.c" || return
		LLVM_PROFILE_FILE="$work/cov_$target.profraw" "$work/cov_$target" -runs=0 \
			"$work/corpus/$target" >/dev/null 2>&1
		profiles+=("$work/cov_$target.profraw")
		[ "$target" = "${targets[0]}" ] || objects+=(-object "$work/cov_$target")
	done
	llvm-profdata merge -sparse "${profiles[@]}" -o "$work/cov.profdata" 2>/dev/null || return
	llvm-cov report "$work/cov_${targets[0]}" "${objects[@]}" -instr-profile="$work/cov.profdata" \
		"$core/bloom.c" "$core/sizing.c" >"$work/cov.txt" 2>&1 || return
	totals=$(awk '/^TOTAL/ { print "lines " $10 ", functions " $7 ", branches " $13 }' "$work/cov.txt")
	note "bloom.c and sizing.c covered by the corpora: ${totals:-unknown}"
	llvm-cov report "$work/cov_${targets[0]}" "${objects[@]}" -instr-profile="$work/cov.profdata" \
		"$core/qfilter.c" >"$work/cov_qfilter.txt" 2>&1 || return
	totals=$(awk '/^TOTAL/ { print "lines " $10 ", functions " $7 ", branches " $13 }' "$work/cov_qfilter.txt")
	note "qfilter.c covered by the corpora: ${totals:-unknown}"
	llvm-cov report "$work/cov_${targets[0]}" "${objects[@]}" -instr-profile="$work/cov.profdata" \
		"$core/delta.c" >"$work/cov_delta.txt" 2>&1 || return
	totals=$(awk '/^TOTAL/ { print "lines " $10 ", functions " $7 ", branches " $13 }' "$work/cov_delta.txt")
	note "delta.c covered by the corpora: ${totals:-unknown}"
}

# unit_test NAME WHAT PREFIX [CFLAGS...]: test/unit/NAME.c, a unit test of
# the core, built with both sanitizers (and CFLAGS) and run.  Its own checks
# count here too (as "PREFIX: ..." lines); a sanitizer report or a non-zero
# exit is one more failure.  WHAT names it in the check lines.
unit_test() {
	local source=$1 what=$2 prefix=$3 name log status line
	shift 3
	name=${prefix// /_}
	log="$work/$name.log"
	if ! compile "$work/$name" "$work/$name.build.log" "${sanitize[@]}" "$@" \
		"$repo/test/unit/$source.c"; then
		show_log "$work/$name.build.log" 30
		not_ok "$what build with ASan and UBSan"
		return
	fi
	ok "$what build with ASan and UBSan"

	"$work/$name" >"$log" 2>&1
	status=$?
	grep -E '^(ok|not ok) ' "$log" | sed "s/^\(ok\|not ok\) - /\1 - $prefix: /"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		note "$what: $line"
		passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
		failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
	fi
	if [ "$status" -eq 0 ] && [ -n "$line" ] && ! has_report "$log"; then
		ok "$what run to the end with exit 0 and no sanitizer report"
	else
		grep -vE '^(ok|not ok) ' "$log" >"$work/$name.report"
		show_report "$work/$name.report"
		not_ok "$what run to the end with exit 0 and no sanitizer report (exit $status)"
	fi
}

# The unit tests of bloom's core, of qfilter's and of the deltas'.  Those
# of bloom's core run twice: the second time with hashbuf.c's fallbacks
# doing the work, which no real input makes them do: the in-place split
# hands its cycle whatever one round of swaps leaves (PARTITION_SWAP_ROUNDS),
# and a table is crowded from the first collision on (MAX_PROBES).
unit_tests() {
	unit_test test_bloom "unit tests" unit
	unit_test test_bloom "unit tests, hashbuf.c's fallbacks forced" "unit fallbacks" \
		-DPARTITION_SWAP_ROUNDS=1 -DMAX_PROBES=1
	unit_test test_qfilter "qfilter unit tests" "unit qfilter"
	unit_test test_delta "delta unit tests" "unit delta"
}

# The damaged-byte check (mutations.c): every single-byte mutation of 1,000
# random positions of a bloom, a growing chain and a qfilter is refused.
# Without sanitizers, at -O2: 765,000 validations, each a whole pass.
mutation_check() {
	local log="$work/mutations.log" line
	if ! clang -g -O2 -Wall -Wextra -I"$core" -o "$work/mutations" "$here/mutations.c" 		"$core/bloom.c" "$core/sizing.c" "$core/qfilter.c" -lm >"$work/mutations.build.log" 2>&1; then
		show_log "$work/mutations.build.log" 30
		not_ok "mutations.c builds"
		return
	fi
	"$work/mutations" >"$log" 2>&1
	while IFS= read -r line; do
		case $line in
			"ok - "*) ok "${line#ok - }" ;;
			"not ok - "*) not_ok "${line#not ok - }" ;;
			*) note "$line" ;;
		esac
	done <"$log"
}

# Rewrites corpus/ from the generator: after an intended format change only.
regenerate_corpus() {
	if ! build_generator; then
		show_log "$work/gen_corpus.build.log" 30
		not_ok "seed generator builds"
		finish
	fi
	rm -rf "$corpus/validate" "$corpus/sizing" "$corpus/qfilter" "$corpus/delta"
	if "$work/gen_corpus" "$corpus"; then
		ok "corpus regenerated in $corpus"
	else
		not_ok "corpus regenerated in $corpus"
	fi
	finish
}

main() {
	local budget=${1:-60} per_target target started

	cleanup_on_exit
	make_workdir fuzz || exit 1
	work=$WORK
	ensure_fuzz_packages
	[ "$budget" = "--regenerate-corpus" ] && regenerate_corpus
	case $budget in
		'' | *[!0-9]*) usage_error "SECONDS must be a whole number, got '$budget'" ;;
	esac
	budget=$((10#$budget))	# "060" is sixty, not octal
	[ "$budget" -ge 1 ] || usage_error "SECONDS must be at least 1"

	# Split evenly between the targets: fuzz_validate runs ~10^4 inputs a
	# second and saturates coverage in seconds; fuzz_sizing runs ~20 (each
	# new fpr is a full sizing), so more of its time means more distinct
	# rates checked; fuzz_qfilter runs ~10^2 (an operation sequence checks
	# the whole filter after every step); fuzz_delta's small deltas run by
	# the thousand.
	per_target=$(((budget + ${#targets[@]} - 1) / ${#targets[@]}))

	started=$(date +%s)
	check_corpus
	for target in "${targets[@]}"; do
		build_target "$target"
	done
	for target in "${targets[@]}"; do
		[ -x "$work/fuzz_$target" ] || continue
		replay_seeds "$target"
		fuzz_target "$target" "$per_target"
	done
	report_coverage
	unit_tests
	mutation_check
	note "run.sh took $(($(date +%s) - started))s"
	finish
}

main "$@"
