#!/bin/bash
# test/client/run.sh: the client library (client/), bloomfilter-cli and the
# Python module (python/bloomfilter.py) against the installed extension, in
# a throwaway cluster of its own, of pg_config's PostgreSQL major.
#
#   1. golden.sql: the server's hashes of every kind, pinned (the canonical
#      forms the client shares live in the core, canonical.c);
#   2. exact.py: for every kind the client hashes, 50,000 present and
#      50,000 absent keys (CLIENT_KEYS sets the total per kind): the CLI and
#      the module answer exactly as the server, false positives included;
#      filters they build equal the server's byte for byte and union with
#      the server's into the server's union; version 1 filters, a LATIN1
#      database, bloom_info, and damaged binary and text values (the fuzz
#      corpus and mutants) are judged as the server judges them;
#      growing filters (chains of segments) likewise: the server's read by
#      the client, the client's built and grown to the server's bytes,
#      their unions;
#   3. api_test.c, against the static and the shared library, with
#      AddressSanitizer and UBSan, also over junk keys and text forms, and
#      with ThreadSanitizer (threads sizing at once, with no lock); the C
#      API's chains (api_test.c --chain) against the server's;
#   4. the CLI's exit codes and messages; make install-client; python3 at
#      the top of the tree, after make, imports the Python module, not the
#      server's;
#   5. the examples of docs/client.md's "Using filters in your application"
#      and "Following an index" (LiveFilter, bloomfilter-cli sync);
#   6. bench/client.sh's figures, reported as "#" lines (not checks).
#
# Prints one "ok - ..."/"not ok - ..." line per check and, last,
# "N passed, N failed"; exits non-zero if anything failed.  Needs root (to
# run the cluster as the postgres user) and the extension installed
# (scripts/test.sh installs it first); builds the client with make client.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5571
CLI="$REPO/client/bloomfilter-cli"
PYTHON=/usr/bin/python3

# The run's directory (test/lib.sh's $WORK), which holds the cluster.
work=""

start_cluster() {
	make_workdir client && work=$WORK &&
		cluster_create "$work" "$PORT" -c fsync=off -c synchronous_commit=off -c full_page_writes=off
}

sql() {
	cluster_sql "$work" "$@"
}

golden() {
	if sql -d client -f "$HERE/golden.sql" 2>&1 | grep -v '^SET$' >"$work/golden.out" &&
		diff -u "$HERE/golden.expected" "$work/golden.out" >"$work/golden.diff"; then
		ok "the server's hashes of every kind are the pinned ones (golden.sql)"
	else
		not_ok "the server's hashes of every kind are the pinned ones (golden.sql)"
		sed 's/^/#   /' "$work/golden.diff" | head -n 20
	fi
}

exactness() {
	mkdir -p "$work/exact"
	gcc -O2 -o "$work/exact/rechecksum" "$REPO/test/property/rechecksum.c" ||
		{ not_ok "building test/property/rechecksum.c"; return; }
	"$PYTHON" "$HERE/exact.py" --psql "$PGBIN/psql" --host "$work" --port "$PORT" \
		--work "$work/exact" --keys "${CLIENT_KEYS:-100000}" >"$work/exact.out" 2>&1
	local status=$?
	count_checks "$work/exact.out"
	if [ $status -ne 0 ]; then
		not_ok "exact.py stopped (exit $status)"
		grep -vE '^(ok - |not ok - |#)' "$work/exact.out" | tail -n 20 | sed 's/^/#   /'
	fi
}

api_tests() {
	local flavour
	gcc -O2 -Wall -Wextra -I"$REPO/client" -o "$work/api_static" "$HERE/api_test.c" \
		"$REPO/client/libbloomfilter.a" -lm -pthread &&
		gcc -O2 -Wall -Wextra -I"$REPO/client" -o "$work/api_shared" "$HERE/api_test.c" \
			-L"$REPO/client" -lbloomfilter -pthread ||
		{ not_ok "building api_test.c against the static and the shared library"; return; }
	for flavour in static shared; do
		LD_LIBRARY_PATH="$REPO/client" "$work/api_$flavour" | sed "s/^\(\(not \)\?ok - \)/\1$flavour library: /" \
			>"$work/api.out" 2>&1
		count_checks "$work/api.out"
	done
}

# The C API's chains, one add per key and in one batch (api_test.c
# --chain), against the server's bloom_add_all of the same keys in the same
# order: byte for byte.  The keys repeat, and a repeated key takes no room
# in a chain's last segment.
chain_api() {
	local capacity fpr growth expected segments keys="(i * 7919) % 12007 - 6000"
	sql -d client -c "SELECT $keys FROM generate_series(1, 20000) i ORDER BY i" >"$work/chain.keys"
	while read -r capacity fpr growth; do
		read -r expected segments < <(sql -d client -F ' ' -c "SELECT encode(f::bytea, 'hex'), (bloom_info(f)).segments
			FROM (SELECT bloom_add_all(bloom_empty($capacity, $fpr, $growth), array_agg($keys ORDER BY i)) AS f
				FROM generate_series(1, 20000) i) s")
		"$work/api_static" --chain "$capacity" "$fpr" "$growth" <"$work/chain.keys" >"$work/chain.out" 2>&1
		check "C API: a chain bloom_empty($capacity, $fpr, $growth) of 20000 keys, 12007 distinct, one bfc_add_int64 per key, equals the server's byte for byte ($segments segments)" \
			test "$(sed -n 1p "$work/chain.out")" = "$expected"
		check "C API: ... and in one bfc_add_int64_many, likewise" \
			test "$(sed -n 2p "$work/chain.out")" = "$expected"
	done <<-EOF
		1000 0.01 2
		100 0.001 4
		50 0.05 16
	EOF
}

# The library built from its sources with AddressSanitizer and UBSan: the
# API tests, then junk keys of every kind and junk text forms.
sanitizers() {
	local status sources="$REPO/src/core/bloom.c $REPO/src/core/sizing.c $REPO/src/core/canonical.c $REPO/src/core/delta.c $REPO/client/filter.c $REPO/client/keyparse.c $REPO/client/base64.c"
	# shellcheck disable=SC2086
	gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -I"$REPO/src/core" -I"$REPO/client" \
		-o "$work/api_asan" "$HERE/api_test.c" $sources -lm -pthread 2>"$work/asan.build" ||
		{ not_ok "building the library and api_test.c with ASan and UBSan"; sed 's/^/#   /' "$work/asan.build" | tail -n 5; return; }
	"$work/api_asan" >"$work/asan.out" 2>&1
	check "api_test.c under ASan and UBSan: every check passes, no report, no leak" \
		test $? -eq 0
	grep -E '^not ok|ERROR|runtime error' "$work/asan.out" | head -n 5 | sed 's/^/#   /'
	"$PYTHON" - "$HERE" >"$work/junk.txt" <<'EOF'
import random, sys
sys.path.insert(0, sys.argv[1])
from exact import SPELLINGS, near_spellings
rng = random.Random(11)
for kind in SPELLINGS:
    for s in near_spellings(kind, rng, 3000):
        print(s.replace("\n", ""))
base = "bloom:QkYCAQYBAAAAAAAAAQAAAAAAAAAAAAAACgAAAAAAAAB7FK5H4XqEPwMAAAAAAAAANrNAAAAAAAAACAAAAAAAAAAAAAEAAAAIAAABAAAAAAAgAAAAICAAAAAACAAAAAACAIABAAAAAAAAAECABAEBCAAAQAAAAAAA"
for _ in range(5000):
    s = base
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(s) + 1)
        s = s[:at] + rng.choice("A=+/ \t-_\\x0") + s[at + rng.randrange(2):]
    print(s)
EOF
	"$work/api_asan" --junk <"$work/junk.txt" >"$work/junk.out" 2>&1
	status=$?
	check "$(grep -E '^[0-9]+ lines' "$work/junk.out" || echo 'junk'): keys of every kind and text forms under ASan and UBSan, no report" \
		test $status -eq 0
	grep -E 'ERROR|runtime error' "$work/junk.out" | head -n 5 | sed 's/^/#   /'
}

# The library built from its sources with ThreadSanitizer: the API tests,
# whose threads size, validate and grow chains at once.  The core keeps no
# state and each thread sizes from its own memo, so no lock is taken and
# none may be missing.
thread_sanitizer() {
	local sources="$REPO/src/core/bloom.c $REPO/src/core/sizing.c $REPO/src/core/canonical.c $REPO/src/core/delta.c $REPO/client/filter.c $REPO/client/keyparse.c $REPO/client/base64.c"
	# shellcheck disable=SC2086
	gcc -O1 -g -fsanitize=thread -I"$REPO/src/core" -I"$REPO/client" \
		-o "$work/api_tsan" "$HERE/api_test.c" $sources -lm -pthread 2>"$work/tsan.build" ||
		{ not_ok "building the library and api_test.c with ThreadSanitizer"; sed 's/^/#   /' "$work/tsan.build" | tail -n 5; return; }
	TSAN_OPTIONS=halt_on_error=1 "$work/api_tsan" >"$work/tsan.out" 2>&1
	check "api_test.c under ThreadSanitizer: every check passes, no report" \
		test $? -eq 0
	grep -E '^not ok|WARNING: ThreadSanitizer|FATAL' "$work/tsan.out" | head -n 5 | sed 's/^/#   /'
}

# expect_exit STATUS DESCRIPTION COMMAND...: the command's exit status, and
# for a failure a message on stderr that names the program.
expect_exit() {
	local status=$1 description=$2 got
	shift 2
	"$@" >"$work/cli.out" 2>"$work/cli.err"
	got=$?
	if [ "$got" -eq "$status" ] && { [ "$status" -eq 0 ] || grep -q '^bloomfilter-cli: ' "$work/cli.err"; }; then
		ok "CLI: $description (exit $status)"
	else
		not_ok "CLI: $description (exit $got, expected $status)"
		sed 's/^/#   /' "$work/cli.err" | head -n 5
	fi
}

cli_tests() {
	local d=$work/cli
	mkdir -p "$d"
	sql -d client -c "SELECT bloom_agg(i) FROM generate_series(1, 1000) i" >"$d/ints.txt"
	sql -d client -c "SELECT bloom_agg(i)::bytea FROM generate_series(1, 1000) i" >"$d/ints.hex"
	sql -d client -c "SELECT bloom_agg(jsonb_build_object('a', i)) FROM generate_series(1, 10) i" >"$d/jsonb.txt"
	printf 'junk' >"$d/junk"

	expect_exit 0 "--help" "$CLI" --help
	if grep -q 'contains FILE' "$work/cli.out" && grep -q 'Exit status' "$work/cli.out"; then
		ok "CLI: --help describes the commands and the exit status"
	else
		not_ok "CLI: --help describes the commands and the exit status"
	fi
	expect_exit 2 "no command is a usage error" "$CLI"
	expect_exit 2 "an unknown command is a usage error" "$CLI" frobnicate
	expect_exit 2 "an unknown option is a usage error" "$CLI" info --frob "$d/ints.txt"
	expect_exit 2 "build without --kind is a usage error" "$CLI" build --capacity 10
	expect_exit 3 "a missing file is an I/O error" "$CLI" info "$d/missing"
	expect_exit 1 "a file that is no filter is invalid data" "$CLI" info "$d/junk"
	expect_exit 1 "a key of the wrong syntax is invalid data" "$CLI" contains "$d/ints.txt" 12x
	printf '1\n2\nnope\n' >"$d/keys"
	"$CLI" contains "$d/ints.txt" <"$d/keys" >"$d/out" 2>"$d/err"
	if [ $? -eq 1 ] && grep -q 'stdin line 3' "$d/err" && [ "$(cat "$d/out")" = "$(printf '1\tt\n2\tt')" ]; then
		ok "CLI: a bad key on stdin stops there, naming its line, after the answers before it"
	else
		not_ok "CLI: a bad key on stdin stops there, naming its line, after the answers before it"
	fi
	expect_exit 1 "probing a filter of kind other is an error, not an answer" \
		"$CLI" contains "$d/jsonb.txt" '{"a": 1}'
	check "CLI: the error for kind other says so" grep -q 'kind other' "$work/cli.err"
	"$CLI" build --kind number --capacity 1000 --fpr 0.001 </dev/null >"$d/other_rate.bin"
	expect_exit 1 "union of filters of different rates is refused" \
		"$CLI" union "$d/ints.txt" "$d/other_rate.bin"
	expect_exit 2 "build --growth that is no integer is a usage error" \
		"$CLI" build --kind number --capacity 10 --growth two
	expect_exit 1 "build --growth 1 is refused, as bloom_empty refuses it" \
		"$CLI" build --kind number --capacity 10 --growth 1
	expect_exit 2 "--growth is an option of build alone" "$CLI" info --growth 2 "$d/ints.txt"
	seq 1 1000 | "$CLI" build --kind number --capacity 1000 --growth 2 >"$d/chain.bin"
	expect_exit 1 "union of a growing filter and one of fixed size is refused" \
		"$CLI" union "$d/ints.txt" "$d/chain.bin"
	if "$CLI" info "$d/chain.bin" >"$d/chain.info" &&
		grep -qx "$(printf 'layout\tchained')" "$d/chain.info" &&
		grep -qx "$(printf 'segments\t1')" "$d/chain.info" &&
		grep -qx "$(printf 'growth\t2')" "$d/chain.info" &&
		"$CLI" info "$d/ints.txt" | grep -qx "$(printf 'growth\t')"; then
		ok "CLI: info prints a chain's layout, segments and growth (empty for a fixed filter)"
	else
		not_ok "CLI: info prints a chain's layout, segments and growth (empty for a fixed filter)"
	fi
	if [ "$("$CLI" contains "$d/ints.hex" -5 5 -- -6)" = "$(printf -- '-5\tf\n5\tt\n-6\tf')" ]; then
		ok "CLI: keys as arguments, negative ones included, from the hex form"
	else
		not_ok "CLI: keys as arguments, negative ones included, from the hex form"
	fi
	"$CLI" convert "$d/ints.txt" >"$d/ints.bin" &&
		"$CLI" convert "$d/ints.bin" >"$d/ints.again.txt" &&
		"$CLI" convert "$d/ints.hex" >"$d/ints.from_hex.bin"
	if cmp -s "$d/ints.txt" "$d/ints.again.txt" && cmp -s "$d/ints.bin" "$d/ints.from_hex.bin"; then
		ok "CLI: convert text -> binary -> text and hex -> binary round-trip exactly"
	else
		not_ok "CLI: convert text -> binary -> text and hex -> binary round-trip exactly"
	fi
	printf '1001\n1002\n' | "$CLI" add "$d/ints.txt" >"$d/ints.added.txt"
	if [ "$(sql -d client -c "SELECT '$(cat "$d/ints.added.txt")'::bloom = bloom_add_all('$(cat "$d/ints.txt")'::bloom, ARRAY[1001, 1002])")" = t ]; then
		ok "CLI: add writes the filter the server's bloom_add_all makes, in the input's form"
	else
		not_ok "CLI: add writes the filter the server's bloom_add_all makes, in the input's form"
	fi
}

# make install-client into a staging directory: the header, both libraries
# and the CLI, usable from there with -lbloomfilter, from C; with PYTHONDIR,
# the Python module and its compiled half, which python3 imports from there
# alone (not from the source tree).
install_client() {
	local root=$work/staging prefix=/usr/local pydir=/usr/local/lib/bloomfilter-python
	make -s -C "$REPO" install-client DESTDIR="$root" PREFIX="$prefix" PYTHONDIR="$pydir" \
		>"$work/install.log" 2>&1 ||
		{ not_ok "make install-client"; sed 's/^/#   /' "$work/install.log" | tail -n 5; return; }
	cat >"$work/installed.c" <<'EOF'
#include <stdio.h>
#include <bloomfilter.h>
int
main(void)
{
	bfc_filter *f = bfc_create(BFC_KIND_TEXT, 10, 0.01, NULL);

	bfc_add_text(f, "x", 1, NULL);
	printf("%d%d\n", bfc_contains_text(f, "x ", 2, NULL), bfc_contains_text(f, "y", 1, NULL));
	bfc_free(f);
	return 0;
}
EOF
	if gcc -I"$root$prefix/include" -o "$work/installed" "$work/installed.c" -L"$root$prefix/lib" -lbloomfilter &&
		[ "$(LD_LIBRARY_PATH="$root$prefix/lib" "$work/installed")" = 10 ] &&
		[ -x "$root$prefix/bin/bloomfilter-cli" ] && [ -f "$root$prefix/lib/libbloomfilter.a" ] &&
		[ "$(cd "$work" && PYTHONPATH="$root$pydir" "$PYTHON" -c 'import bloomfilter, _bloomfilter
print(bloomfilter.__file__.startswith(__import__("sys").argv[1]), _bloomfilter.__file__.startswith(__import__("sys").argv[1]), bloomfilter.Filter.empty("text", 10).kind)' "$root$pydir")" = "True True text" ]; then
		ok "make install-client installs a header, libraries and the CLI that C (-lbloomfilter) uses, and with PYTHONDIR the Python module and its compiled half"
	else
		not_ok "make install-client installs a header, libraries and the CLI that C (-lbloomfilter) uses, and with PYTHONDIR the Python module and its compiled half"
	fi
}

# After make and make client, python3 at the top of the tree, with python/
# on PYTHONPATH as docs/client.md says, imports the Python module and its
# compiled half, built beside it by make client: the server's bloomfilter.so, which make builds in
# build/, is not in python3's current directory, which comes first.
python_at_top() {
	local got
	make -s -C "$REPO" with_llvm=no >"$work/make.log" 2>&1 ||
		{ not_ok "make builds the server's module"; show_logs "$work/make.log"; return; }
	got=$(cd "$REPO" && PYTHONPATH=python "$PYTHON" -c 'import bloomfilter
print(bloomfilter.__file__)
print(bloomfilter.Filter.empty("text", 10).kind)' 2>&1)
	check "python3 at the top of the tree, after make and make client, imports python/bloomfilter.py (not the server's module) and its compiled half" \
		[ "$got" = "$REPO/python/bloomfilter.py"$'\n'text ] ||
		printf '%s\n' "$got" | tail -n 5 | sed 's/^/#   /'
}

# bloomfilter.py without its compiled half, or with one of another
# interface (a stale build): an ImportError that says how to build it.
python_module_missing_or_stale() {
	local d=$work/lonely missing stale
	mkdir -p "$d/missing" "$d/stale" && cp "$REPO/python/bloomfilter.py" "$d/missing/" &&
		cp "$REPO/python/bloomfilter.py" "$d/stale/" && echo 'INTERFACE = 0' >"$d/stale/_bloomfilter.py" ||
		{ not_ok "copying bloomfilter.py alone"; return; }
	missing=$(cd / && PYTHONPATH="$d/missing" "$PYTHON" -c 'import bloomfilter' 2>&1 | tail -n 1)
	stale=$(cd / && PYTHONPATH="$d/stale" "$PYTHON" -c 'import bloomfilter' 2>&1 | tail -n 1)
	check "bloomfilter.py without its compiled module: an ImportError saying to run pip install or make client" \
		grep -q '^ImportError: bloomfilter: the compiled module _bloomfilter is missing.*pip install ./python.*make client' <<<"$missing" ||
		echo "#   $missing"
	check "bloomfilter.py with a stale compiled module: an ImportError saying to rebuild it" \
		grep -q '^ImportError: bloomfilter: the compiled module .* is stale.*make client' <<<"$stale" ||
		echo "#   $stale"
}

# The ```sh, ```c and ```python blocks of docs/client.md's sections "Using
# filters in your application" and "Following an index", in order, in one
# directory, against a database with the README's users and filters and
# the index the second section makes (its sql blocks are test/docs's).
readme_examples() {
	local d=$work/readme status=0
	mkdir -p "$d"
	sql -c "CREATE DATABASE readme" &&
		sql -d readme -c "CREATE EXTENSION bloomfilter" &&
		sql -d readme -c "CREATE TABLE users AS SELECT (i * 3)::bigint AS id, 'user' || i AS name
				FROM generate_series(1, 100000) i;
			CREATE TABLE filters AS SELECT 'users'::text AS name, bloom_agg(id) AS f FROM users;
			CREATE INDEX users_id_guard ON users USING bloomfilter (id);" ||
		{ not_ok "README examples: the database of Getting started"; return; }
	"$PYTHON" - "$REPO/docs/client.md" "$d" <<'EOF' >"$d/manifest" || { not_ok "README examples: extracting the blocks"; return; }
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = []
for heading in ("Using filters in your application", "Following an index"):
    start = text.find("\n## " + heading)
    if start < 0:
        sys.exit(1)
    end = text.find("\n## ", start + 1)
    section = text[start:end if end > 0 else len(text)]
    blocks += re.findall(r"^```(sh|c|python)\n(.*?)^```$", section, re.S | re.M)
for n, (lang, body) in enumerate(blocks, 1):
    name = "%s/block%02d.%s" % (sys.argv[2], n, {"sh": "sh", "c": "c", "python": "py"}[lang])
    open(name, "w").write(body)
    print(lang, name)
EOF
	while read -r lang file; do
		case $lang in
			sh)
				# errors are fatal, psql's too: a block that runs on past
				# one would pass with output nobody reads
				printf '\\set ON_ERROR_STOP on\n' >"$d/psqlrc"
				(cd "$d" && PATH="$REPO/client:$PGBIN:$PATH" PGHOST=$work PGPORT=$PORT PGUSER=postgres \
					PGDATABASE=readme PSQLRC="$d/psqlrc" bash -euo pipefail "$file") >"$file.out" 2>&1
				;;
			c)
				gcc -Wall -I"$REPO/client" -o "${file%.c}" "$file" "$REPO/client/libbloomfilter.a" -lm -pthread \
					>"$file.out" 2>&1 && (cd "$d" && "${file%.c}") >>"$file.out" 2>&1
				;;
			python)
				(cd "$d" && PYTHONPATH="$REPO/python" PGHOST=$work PGPORT=$PORT PGUSER=postgres \
					PGDATABASE=readme "$PYTHON" "$file") >"$file.out" 2>&1
				;;
		esac
		status=$?
		if [ $status -eq 0 ]; then
			ok "README example $(basename "$file") ($lang) runs"
		else
			not_ok "README example $(basename "$file") ($lang) runs"
			sed 's/^/#   /' "$file.out" | tail -n 10
		fi
	done <"$d/manifest"
	[ -s "$d/manifest" ] || not_ok "README examples: the section has no sh, c or python blocks"
}

main() {
	local build_log
	cleanup_on_exit
	ensure_build_tools libpq-dev python3 python3-psycopg ||
		{ not_ok "installing PostgreSQL and its headers, gcc, libxxhash-dev, libpq-dev, make, python3 and python3-psycopg"; finish_timed; }
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	# Its messages in a file of this run's: live and client may run side by side.
	build_log=$(mktemp)
	if make -s -C "$REPO" client >"$build_log" 2>&1; then
		ok "make client builds the library (static and shared) and the CLI"
		rm -f "$build_log"
	else
		not_ok "make client builds the library (static and shared) and the CLI"
		sed 's/^/#   /' "$build_log" | tail -n 20
		rm -f "$build_log"
		finish_timed
	fi
	start_cluster || { not_ok "starting a throwaway cluster on port $PORT"; finish_timed; }
	sql -c "CREATE DATABASE client" && sql -d client -c "CREATE EXTENSION bloomfilter" ||
		{ not_ok "creating the test database"; finish_timed; }

	golden
	exactness
	api_tests
	chain_api
	sanitizers
	thread_sanitizer
	cli_tests
	install_client
	python_at_top
	python_module_missing_or_stale
	readme_examples
	bash "$REPO/bench/client.sh" 2>&1 | grep '^#'
	finish_timed
}

main "$@"
