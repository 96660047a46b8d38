#!/bin/bash
# Installs what building bloomfilter needs, from Debian's packages, when it
# is missing: make, gcc, the PostgreSQL server and its headers, xxhash.h.
# The PostgreSQL version is pg_config's, or the distribution's default on a
# machine without one (test/lib.sh's pg_major).  Extra package names may be
# given as arguments.
#
#   bash scripts/install-deps.sh [PACKAGE...]     # as root
#
# scripts/test.sh and scripts/demo.sh do this themselves: this is for
# building by hand (make && make install).
set -eu
. "$(dirname "$0")/../test/lib.sh"

ensure_build_tools "$@"
