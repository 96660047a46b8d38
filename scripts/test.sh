#!/bin/bash
# Runs every test of bloomfilter and ends with "N passed, N failed":
#   1. the pure core's unit tests (plain cc, no PostgreSQL);
#   2. the pg_regress suite, in a throwaway cluster (pg_virtualenv);
#   3. the suites under test/*/run.sh, each of which starts its own servers
#      and ends with its own "N passed, N failed" line.
# Installs missing Debian packages first, builds and installs the extension.
# FUZZ_SECONDS (default 60) bounds the fuzzing run.
set -u
cd "$(dirname "$0")/.."

scripts/install-deps.sh
make -s with_llvm=no >/dev/null && make -s with_llvm=no install >/dev/null || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

# The package suite reinstalls the extension from a .deb and back: keep it last.
SUITES=${SUITES-fuzz property stats docs fdw stress dump package}

passed=0
failed=0
log=$(mktemp -d)

# Adds a suite's counts, taken from its own "N passed, N failed" line.
count_suite() {
	local name=$1 output=$2 line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$output" | tail -n 1)
	if [ -z "$line" ]; then
		echo "== $name: no result line; counted as one failure"
		failed=$((failed + 1))
		return
	fi
	echo "== $name: $line"
	passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
	failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
}

echo "== core unit tests"
make -s unittest >"$log/unit.txt" 2>&1
grep -v '^ok' "$log/unit.txt"
count_suite "core unit tests" "$log/unit.txt"

echo "== pg_regress"
pg_virtualenv -t make -s with_llvm=no installcheck >"$log/regress.txt" 2>&1
grep -E '^(test| ?ok| ?not ok)|tests? (passed|failed)' "$log/regress.txt"
ok=$(grep -cE '^(test|ok|not ok).* \.\.\. ok' "$log/regress.txt")
bad=$(grep -cE '^(test|ok|not ok).* \.\.\. FAILED' "$log/regress.txt")
if [ $((ok + bad)) -eq 0 ]; then
	cat "$log/regress.txt"
	bad=1
fi
[ "$bad" -gt 0 ] && [ -f regression.diffs ] && head -n 200 regression.diffs
echo "$ok passed, $bad failed" >"$log/regress-count.txt"
count_suite "pg_regress" "$log/regress-count.txt"

# Runs test/NAME/run.sh and counts its result line.
run_suite() {
	local name=$1
	shift
	echo "== $name"
	bash "test/$name/run.sh" "$@" >"$log/$name.txt" 2>&1
	grep -E '^not ok' "$log/$name.txt"
	if grep -qE '^not ok' "$log/$name.txt" || ! tail -n 1 "$log/$name.txt" | grep -qE '^[0-9]+ passed, 0 failed$'; then
		tail -n 40 "$log/$name.txt"
	fi
	count_suite "$name" "$log/$name.txt"
}

for suite in $SUITES; do
	if [ "$suite" = fuzz ]; then
		run_suite fuzz "${FUZZ_SECONDS:-60}"
	else
		run_suite "$suite"
	fi
done

rm -rf "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
