#!/bin/bash
# test/live/run.sh: applications that follow a bloomfilter index (extension
# 1.1's bloom_index_snapshot and bloom_index_changes): the Python
# LiveFilter over psycopg 3 and bloomfilter-cli sync, end to end, in a
# throwaway cluster of its own (unix socket only), of pg_config's
# PostgreSQL major.  live_test.py holds the checks: copies equal to the
# index byte for byte, 0 misses of committed keys while writers insert,
# REINDEX, write-through across a reload, the staleness bound with the
# server stopped and restarted, the CLI's file replaced atomically.
# Then the package as a user installs it: python/ and the C sources it
# builds from, copied alone, pip installed into a fresh venv
# (`python3 -m venv --system-site-packages`, `pip install
# --no-build-isolation --no-index`: Debian's setuptools, no index), and
# venv_check.py run there: its compiled module, a LiveFilter following an
# index, a Filter answering as the server.
#
#   bash test/live/run.sh       # as root (the cluster runs as postgres); 15-20 s
#
# Prints one "ok - ..."/"not ok - ..." line per check and, last,
# "N passed, N failed"; exits non-zero if anything failed.  Needs the
# extension installed (scripts/test.sh installs it first); builds the
# client with make client.
set -u
set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/../lib.sh"
PORT=5581
PYTHON=/usr/bin/python3

# The run's directory (test/lib.sh's $WORK), which holds the cluster.
work=""

# The cluster, with the server's stop and start as scripts (stop.sh,
# start.sh) that live_test.py runs between its checks of the staleness
# bound.
start_cluster() {
	make_workdir live && work=$WORK && mkdir "$work/files" &&
		cluster_create "$work" "$PORT" -c fsync=off -c full_page_writes=off &&
		cluster_scripts "$work"
}

# The package's directory and the sources its setup.py finds above it, as
# git has them (no in-place build of the module comes along), in $work;
# then a venv that sees Debian's python3-psycopg, and pip's build there.
venv_install() {
	mkdir "$work/package" &&
		(cd "$REPO" && git ls-files python src/core client | tar -cf - -T -) | tar -C "$work/package" -xf - &&
		! compgen -G "$work/package/python/*.so" >/dev/null &&
		"$PYTHON" -m venv --system-site-packages "$work/venv" &&
		(cd "$work" && timeout 300 "$work/venv/bin/pip" install --no-build-isolation --no-index \
			"$work/package/python") >"$work/pip.log" 2>&1 && return 0
	sed 's/^/#   /' "$work/pip.log" 2>/dev/null | tail -n 20
	return 1
}

venv_checks() {
	local status
	(cd "$work" && "$work/venv/bin/python" "$HERE/venv_check.py" --host "$work" --port "$PORT" \
		--venv "$work/venv") >"$work/venv.out" 2>&1
	status=$?
	count_checks "$work/venv.out" "$status" venv_check.py
}

main() {
	local status build_log
	cleanup_on_exit
	ensure_postgresql gcc libc6-dev libxxhash-dev libpq-dev make python3 python3-dev \
		python3-setuptools python3-venv python3-pip python3-psycopg ||
		{ not_ok "installing PostgreSQL, gcc, libxxhash-dev, libpq-dev, make, python3, python3-dev, python3-setuptools, python3-venv, python3-pip and python3-psycopg"; finish_timed; }
	if ! extension_installed; then
		not_ok "bloomfilter is not installed (run make install first)"
		finish_timed
	fi
	# Its messages in a file of this run's: live and client may run side by side.
	build_log=$(mktemp)
	if make -s -C "$REPO" client >"$build_log" 2>&1; then
		ok "make client builds the library and the CLI (with libpq)"
		rm -f "$build_log"
	else
		not_ok "make client builds the library and the CLI (with libpq)"
		sed 's/^/#   /' "$build_log" | tail -n 20
		rm -f "$build_log"
		finish_timed
	fi

	start_cluster || { not_ok "starting a throwaway cluster on port $PORT"; finish_timed; }

	"$PYTHON" "$HERE/live_test.py" --host "$work" --port "$PORT" --repo "$REPO" \
		--work "$work/files" --stop "$work/stop.sh" --start "$work/start.sh" >"$work/live.out" 2>&1
	status=$?
	count_checks "$work/live.out" "$status" live_test.py
	if check "pip install of python/ into a fresh venv builds the compiled module" venv_install; then
		venv_checks
	fi
	finish_timed
}

main "$@"
