#!/bin/bash
# A five-second tour on a fresh Debian machine: installs what is missing,
# builds and installs bloomfilter, starts a throwaway cluster, builds a filter
# from a generated users table and uses it as a cache-penetration guard.
#
#   bash scripts/demo.sh      # as root, from anywhere
#
# The PostgreSQL version is pg_config's, or the distribution's default on a
# machine without one (test/lib.sh).
set -eu
cd "$(dirname "$0")/.."
. test/lib.sh

ensure_build_tools
make -s with_llvm=no >/dev/null
make -s with_llvm=no install >/dev/null
pg_virtualenv -v "$PG_MAJOR" -t psql -X -q -v ON_ERROR_STOP=1 -f scripts/demo.sql
