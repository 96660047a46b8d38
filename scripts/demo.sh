#!/bin/bash
# A five-second tour on a fresh Debian machine: installs what is missing,
# builds and installs bloomfilter, starts a throwaway cluster, builds a filter
# from a generated users table and uses it as a cache-penetration guard.
set -eu
cd "$(dirname "$0")/.."

scripts/install-deps.sh
make -s with_llvm=no >/dev/null
make -s with_llvm=no install >/dev/null
pg_virtualenv -t psql -X -q -v ON_ERROR_STOP=1 -f scripts/demo.sql
