#!/bin/bash
# Runs scripts/test.sh on every PostgreSQL major the project supports, each
# in a brand-new Debian root, and ends with one summary line per major:
#
#   bash scripts/test-versions.sh [--quick] [SUITE...]
#
#   PostgreSQL 15.13 (bookworm), full: 870 passed, 0 failed, in 9 min 41 s
#
# SUITE is a Debian release, and so a PostgreSQL major (bookworm 15,
# trixie 17, sid 18; those three by default).  --quick runs the quick tier
# of scripts/test.sh.  The roots come from fresh-debian-check, which needs
# root and tests a clone of the committed HEAD, not the work tree: commit
# first.  The suites run one after the other, since their clusters listen
# on the same localhost ports.  Each run's whole output is kept in
# $LOG_DIR (default: a new directory under /tmp, named at the start).
#
# FRESH_DEBIAN_CHECK names the tool (default: fresh-debian-check on PATH,
# else ../shared/scripts/fresh-debian-check next to the repository).
# Exits non-zero unless every major passed.
set -u
cd "$(dirname "$0")/.."

tier=full
args=""
if [ "${1:-}" = --quick ]; then
	tier=quick
	args=" --quick"
	shift
fi
case ${1:-} in
	-*)
		echo "usage: bash scripts/test-versions.sh [--quick] [SUITE...]" >&2
		exit 2
		;;
esac
suites=${*:-bookworm trixie sid}

check_tool=${FRESH_DEBIAN_CHECK:-$(command -v fresh-debian-check || echo ../shared/scripts/fresh-debian-check)}
if [ ! -x "$check_tool" ]; then
	echo "no fresh-debian-check ($check_tool); set FRESH_DEBIAN_CHECK" >&2
	exit 2
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "# uncommitted changes are not tested: the roots get a clone of HEAD" >&2
fi

LOG_DIR=${LOG_DIR:-$(mktemp -d /tmp/test-versions.XXXX)}
mkdir -p "$LOG_DIR"
echo "# testing $(git rev-parse --short HEAD), $tier tier; logs in $LOG_DIR"

# The command run in each root: the test run, then the server's version,
# from the same pg_config the build used.
command="bash scripts/test.sh$args; status=\$?; echo \"# server: \$(pg_config --version)\"; exit \$status"

summaries=()
all_passed=yes
for suite in $suites; do
	log=$LOG_DIR/$suite-$tier.txt
	echo "# $suite: SUITE=$suite fresh-debian-check 'bash scripts/test.sh$args'"
	start=$(date +%s)
	SUITE=$suite "$check_tool" "$command" >"$log" 2>&1
	status=$?
	seconds=$(($(date +%s) - start))
	version=$(sed -n 's/^# server: PostgreSQL \([^ ]*\).*/\1/p' "$log" | tail -n 1)
	result=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -z "$result" ]; then
		result="no result line (exit status $status)"
	fi
	if [ $status -ne 0 ] || ! echo "$result" | grep -qE '^[0-9]+ passed, 0 failed$'; then
		all_passed=""
		# What failed, as scripts/test.sh showed it.
		grep -E '^(== .*[1-9][0-9]* failed|not ok|build failed)' "$log" | sed "s/^/#   $suite: /"
	fi
	summaries+=("PostgreSQL ${version:-?} ($suite), $tier: $result, in $((seconds / 60)) min $((seconds % 60)) s")
	echo "${summaries[-1]}"
done

echo
echo "# summary, $(git rev-parse --short HEAD), $tier tier"
printf '%s\n' "${summaries[@]}"
[ -n "$all_passed" ]
