#!/bin/bash
# run.sh: the stress tests of bloomfilter: concurrency, crash recovery,
# memory, the cookbook's sync recipes under concurrent inserts, and the
# bloomfilter index (crash, standby), each in its own throwaway cluster
# (test/lib.sh's: a unix socket only, ports 5511-5516).
#
# Run as root on a machine where the extension is installed (CI runs it
# after scripts/test.sh); installs the server of pg_config's PostgreSQL
# major if it is missing.  Prints one "ok - ..." or "not ok - ..." line per
# check, "#" lines of context, and last "N passed, N failed"; exits non-zero
# if a check failed.  Takes about 2 minutes on a busy 2-core machine.
set -u

STRESS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

. "$STRESS_DIR/../lib.sh"
. "$STRESS_DIR/lib.sh"
. "$STRESS_DIR/concurrency.sh"
. "$STRESS_DIR/crash.sh"
. "$STRESS_DIR/memory.sh"
. "$STRESS_DIR/recipes.sh"
. "$STRESS_DIR/index.sh"

# A signal still ends with the counts line, and exits so that the EXIT
# trap cleans up.
interrupted() {
	not_ok "stress tests interrupted by a signal"
	result_line
	exit "$1"
}

main() {
	local started=$SECONDS
	cleanup_on_exit cleanup
	trap "interrupted 130" INT
	trap "interrupted 143" TERM
	if ! ensure_tools || ! make_workdir stress; then
		not_ok "stress tests set up: the server's programs and a temporary directory"
		finish
	fi
	# Any current directory works; ours is one nobody else uses.
	cd "$WORK" || exit 1
	run_concurrency
	run_crash
	run_memory
	run_recipes
	run_index
	echo "# stress tests took $((SECONDS - started)) s"
	finish
}

main "$@"
