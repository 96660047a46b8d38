#!/bin/bash
# test/node/run.sh: the Node.js package (node/, @bloomfilter/client: the
# client library compiled to WebAssembly) as a user gets it, against the
# installed extension, in a throwaway cluster of its own (unix socket only)
# of pg_config's PostgreSQL major:
#   1. node/Makefile builds the WebAssembly module with Debian's clang, lld
#      and wasi-libc; `npm test` runs the unit tests (node --test);
#   2. `npm pack` makes the tarball (the .wasm and the TypeScript
#      declarations in, no sources, no install scripts), which installs
#      into a new project with `npm install ./bloomfilter-client-*.tgz pg`
#      (node-postgres from the npm registry), and tsc --strict type-checks
#      an example against its declarations;
#   3. exact.js: for every kind with a JavaScript form, 50,000 present and
#      50,000 absent keys of test/client/keys.sql (NODE_KEYS sets the total
#      per kind), edge values included: the package answers exactly as the
#      server; filters built in Node equal the server's byte for byte and
#      load into it; unions; chains; damaged values (the fuzz corpus,
#      mutants, text forms) refused where the server refuses them;
#   4. live.js: LiveFilter against concurrent inserts (0 misses after each
#      sync), REINDEX, write-through, the staleness bound with the server
#      stopped and restarted;
#   5. the ```js examples of docs/client.md's "From Node.js" section.
#
#   bash test/node/run.sh       # as root (the cluster runs as postgres); ~1 min
#
# Installs what is missing from Debian: clang, lld, wasi-libc,
# libclang-rt-dev-wasm32, libxxhash-dev, make, and nodejs and npm when no
# node or npm is on PATH (bookworm's node 18 and later run the package).
# Prints one "ok - ..."/"not ok - ..." line per check and, last, "N passed,
# N failed"; exits non-zero if anything failed.  Needs the extension
# installed (scripts/test.sh installs it first).
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5591

# The run's directory (test/lib.sh's $WORK), which holds the cluster.
work=""

sql() {
	cluster_sql "$work" "$@"
}

# The packages the suite needs that are missing; node and npm only when
# neither Debian's nor another install is on PATH.
install_tools() {
	local tools=(gcc libc6-dev make clang lld wasi-libc libclang-rt-dev-wasm32 libxxhash-dev)
	command -v node >/dev/null || tools+=(nodejs)
	command -v npm >/dev/null || tools+=(npm)
	ensure_postgresql "${tools[@]}"
}

# 1. The module and the unit tests.  node --test prints one TAP line per
# test (at the top level, or under its file's line with node 18), asked
# for by name since node 23 prints its "spec" report by default; a report
# with no result read is a failure, not zero checks.
unit_tests() {
	local status
	if make -s -C "$REPO/node" >"$work/make.log" 2>&1; then
		ok "node/Makefile builds dist/bloomfilter.wasm from the client library's sources (clang --target=wasm32-wasi)"
	else
		not_ok "node/Makefile builds dist/bloomfilter.wasm from the client library's sources (clang --target=wasm32-wasi)"
		sed 's/^/#   /' "$work/make.log" | tail -n 20
		finish_timed
	fi
	(cd "$REPO/node" && npm test -- --test-reporter=tap) >"$work/npm-test.log" 2>&1
	status=$?
	sed -nE 's/^ *ok [0-9]+ - (.*)$/ok - npm test: \1/p; s/^ *not ok [0-9]+ - (.*)$/not ok - npm test: \1/p' \
		"$work/npm-test.log" | grep -v '\.test\.js$' >"$work/npm-test.out"
	grep -q '^ok - ' "$work/npm-test.out" ||
		echo "not ok - npm test: no test result could be read from node --test's report" >>"$work/npm-test.out"
	count_checks "$work/npm-test.out" "$status" "npm test"
	if [ "$status" -ne 0 ]; then
		grep -vE '^ *(ok|#)' "$work/npm-test.log" | head -n 40 | sed 's/^/#   /'
	fi
}

# 2. The tarball, installed into a new project with node-postgres, and the
# declarations checked by TypeScript.
package_install() {
	local tarball project=$work/project
	tarball=$(cd "$REPO/node" && npm pack --silent --pack-destination "$work" 2>"$work/pack.log" | tail -n 1)
	if [ -z "$tarball" ] || [ ! -f "$work/$tarball" ]; then
		not_ok "npm pack makes the package's tarball"
		sed 's/^/#   /' "$work/pack.log" | tail -n 20
		finish_timed
	fi
	tar -tzf "$work/$tarball" | sort >"$work/contents"
	if grep -qx 'package/dist/bloomfilter.wasm' "$work/contents" &&
		grep -qx 'package/lib/index.d.ts' "$work/contents" &&
		! grep -qE '\.(c|h)$|Makefile|binding\.gyp|/test/' "$work/contents" &&
		! tar -xOzf "$work/$tarball" package/package.json |
			grep -qE '"(preinstall|install|postinstall)"'; then
		ok "npm pack: $tarball holds the .wasm and the TypeScript declarations, no sources and no install scripts ($(wc -l <"$work/contents") files)"
	else
		not_ok "npm pack: $tarball holds the .wasm and the TypeScript declarations, no sources and no install scripts"
		sed 's/^/#   /' "$work/contents"
	fi

	mkdir -p "$project"
	if (cd "$project" && npm init -y >/dev/null &&
		npm install --no-audit --no-fund "$work/$tarball" pg typescript@5 @types/node@20 @types/pg) \
		>"$work/install.log" 2>&1 &&
		[ -f "$project/node_modules/@bloomfilter/client/dist/bloomfilter.wasm" ]; then
		ok "npm install ./$tarball pg: the package installs into a new project beside node-postgres from the registry"
	else
		not_ok "npm install ./$tarball pg: the package installs into a new project beside node-postgres from the registry"
		sed 's/^/#   /' "$work/install.log" | tail -n 20
		finish_timed
	fi

	cp "$HERE/typecheck.ts" "$project/"
	if (cd "$project" && ./node_modules/.bin/tsc --noEmit --strict --target es2020 --module commonjs --types node typecheck.ts) \
		>"$work/tsc.log" 2>&1; then
		ok "tsc --strict type-checks an example against the package's declarations (misuses refused)"
	else
		not_ok "tsc --strict type-checks an example against the package's declarations (misuses refused)"
		sed 's/^/#   /' "$work/tsc.log" | tail -n 20
	fi
	cat >"$project/esm.mjs" <<-'EOF'
		import { Filter, numeric } from '@bloomfilter/client';
		import bloomfilter from '@bloomfilter/client';
		const f = Filter.empty('number', 10).add(numeric('1e3'));
		if (!f.contains(1000) || !(bloomfilter.Filter === Filter)) process.exit(1);
	EOF
	if (cd "$project" && node esm.mjs) >"$work/esm.log" 2>&1; then
		ok "an ES module imports the package by name (import { Filter } from '@bloomfilter/client')"
	else
		not_ok "an ES module imports the package by name (import { Filter } from '@bloomfilter/client')"
		sed 's/^/#   /' "$work/esm.log" | tail -n 10
	fi
	export NODE_PATH=$project/node_modules
}

# The cluster, with the server's stop and start as scripts (stop.sh,
# start.sh) for live.js's staleness checks.
start_cluster() {
	cluster_create "$work" "$PORT" -c fsync=off -c full_page_writes=off && cluster_scripts "$work"
}

# 3. Exactness against the server.
exactness() {
	local status
	gcc -O2 -o "$work/rechecksum" "$REPO/test/property/rechecksum.c" ||
		{ not_ok "building test/property/rechecksum.c"; return; }
	sql -c "CREATE DATABASE node" && sql -d node -c "CREATE EXTENSION bloomfilter" &&
		sql -d node -v n="${NODE_KEYS:-100000}" -f "$REPO/test/client/keys.sql" ||
		{ not_ok "the database of keys (test/client/keys.sql)"; return; }
	node "$HERE/exact.js" "$work" "$PORT" node "$work/rechecksum" >"$work/exact.out" 2>&1
	status=$?
	count_checks "$work/exact.out" "$status" "exact.js"
}

# 4. LiveFilter.
live() {
	local status
	node "$HERE/live.js" "$work" "$PORT" "$work/stop.sh" "$work/start.sh" >"$work/live.out" 2>&1
	status=$?
	count_checks "$work/live.out" "$status" "live.js"
}

# 5. The ```js blocks of docs/client.md's "From Node.js" section, in order,
# as ES modules in one directory, against a database with the README's
# tables and index; each prints, line by line, the answers its comments
# show.
doc_examples() {
	local d=$work/examples n=0 block
	mkdir -p "$d"
	# ES modules find packages in a node_modules beside them (not NODE_PATH)
	ln -s "$work/project/node_modules" "$d/node_modules"
	sql -c "CREATE DATABASE readme" && sql -d readme -c "CREATE EXTENSION bloomfilter" &&
		sql -d readme -c "CREATE TABLE users AS SELECT (i * 3)::bigint AS id, 'user' || i AS name
				FROM generate_series(1, 100000) i;
			CREATE TABLE filters AS SELECT 'users'::text AS name, bloom_agg(id) AS f FROM users;
			CREATE INDEX users_id_guard ON users USING bloomfilter (id);" ||
		{ not_ok "docs/client.md examples: the database of Getting started"; return; }
	awk -v dir="$d" '
		/^## / { inside = ($0 ~ /^## From Node\.js/) }
		inside && /^```js$/ { n++; out = sprintf("%s/block%02d.mjs", dir, n); block = 1; next }
		block && /^```$/ { block = 0; close(out); next }
		block { print > out }
	' "$REPO/docs/client.md"
	for block in "$d"/block*.mjs; do
		[ -f "$block" ] || continue
		n=$((n + 1))
		# what each console.log prints is its line's comment, up to a ':'
		sed -n 's|^console\.log(.*; *// *\([^:]*\).*$|\1|p' "$block" | sed 's/ *$//' >"$block.expected"
		if (cd "$d" && PGHOST=$work PGPORT=$PORT PGUSER=postgres PGDATABASE=readme \
			timeout 60 node "$block") >"$block.out" 2>&1 &&
			[ -s "$block.expected" ] && diff "$block.expected" "$block.out" >"$block.diff"; then
			ok "docs/client.md example $(basename "$block") prints what its comments say"
		else
			not_ok "docs/client.md example $(basename "$block") prints what its comments say"
			sed 's/^/#   /' "$block.out" "$block.diff" 2>/dev/null | tail -n 10
		fi
	done
	[ "$n" -gt 0 ] || not_ok "docs/client.md: the From Node.js section has no js blocks"
}

main() {
	cleanup_on_exit
	install_tools || { not_ok "installing PostgreSQL, clang, lld, wasi-libc, libclang-rt-dev-wasm32, libxxhash-dev, make, nodejs and npm"; finish_timed; }
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	echo "# node $(node --version), npm $(npm --version), $(clang --version | head -n 1)"
	if node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
		ok "node $(node --version) is 18 or later"
	else
		not_ok "node $(node --version) is 18 or later"
		finish_timed
	fi
	make_workdir node || { not_ok "a temporary directory"; finish_timed; }
	work=$WORK

	unit_tests
	package_install
	start_cluster || { not_ok "starting a throwaway cluster on port $PORT"; finish_timed; }
	exactness
	live
	doc_examples
	finish_timed
}

main "$@"
