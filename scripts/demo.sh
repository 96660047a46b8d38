#!/bin/bash
# A short tour on a fresh Debian machine: installs what is missing,
# builds and installs bloomfilter, starts a throwaway cluster, builds a filter
# from a generated users table and uses it as a cache-penetration guard.
# Each step prints a line before it runs, and each statement of the tour
# its time (psql's \timing), as they happen, also through a pipe.
#
#   bash scripts/demo.sh      # as root, from anywhere
#
# The PostgreSQL version is pg_config's, or the distribution's default on a
# machine without one (test/lib.sh).  With the packages installed: 23 s
# on 2 cores at load 7, 14 of them the build, 7 the tour itself.
set -eu
cd "$(dirname "$0")/.."
. test/lib.sh

step() {
	echo "== demo ($SECONDS s): $*"
}

jobs=$(nproc 2>/dev/null || echo 2)
step "the Debian packages the build needs (installed if missing)"
ensure_build_tools
step "building bloomfilter for PostgreSQL $PG_MAJOR (make -j$jobs)"
make -s -j"$jobs" with_llvm=no >/dev/null
step "installing it (make install)"
make -s with_llvm=no install >/dev/null
step "a throwaway cluster (pg_virtualenv), then scripts/demo.sql"
# psql's output through a pipe is block-buffered: line by line here, so
# that each step shows when it happens.
pg_virtualenv -v "$PG_MAJOR" -t stdbuf -oL psql -X -q -v ON_ERROR_STOP=1 -f scripts/demo.sql
step "done"
