#!/bin/bash
# test/docs/run.sh: executes every ```sql block (and ```python run block) of
# README.md and docs/*.md
# against the installed extension, so that documented SQL cannot rot.
#
#   bash test/docs/run.sh                       # as root, from anywhere; 10-25 s
#   DOCS_TEST_VERBOSE=1 bash test/docs/run.sh   # also show each block's output
#
# How a document is run:
#   - each document gets its own fresh database in one throwaway cluster
#     (unix socket only, in a private temporary directory; removed on exit);
#   - then its fixture, test/docs/fixtures/<name>.sql, if that file exists
#     (docs/client.md -> fixtures/client.sql),
#     counted as one check;
#   - then its ```sql blocks, in document order, one psql -X -v ON_ERROR_STOP=1
#     per block, each block one check ("ok - README.md block 3 (line 40)").
#     Blocks share the database but not the session: a block must not rely
#     on a SET, a PREPARE or a temporary table of an earlier block.
#
# CREATE EXTENSION: a document that installs the extension in one of its own
# blocks is taken at its word and starts from a database without it; for any
# other document the runner installs it first, as a reader who followed the
# README's installation section would have it.  Fixtures therefore never
# create the extension.  This keeps every block verbatim (no rewriting of
# CREATE EXTENSION into IF NOT EXISTS).
#
# Opting out: a block fenced as ```sql norun (any info string after "sql"
# that contains the word norun) is an illustration, not a recipe: it is
# reported as skipped and not counted.  Markdown renderers still highlight it
# as SQL, since they only read the first word of the info string.
#
# Python: a block fenced as ```python run is a program that runs as pasted,
# in document order among the sql blocks (after them, it sees their
# tables): Debian's python3 (python3-psycopg) with python/ on PYTHONPATH (the client built by make
# client) and PG* variables naming the document's database.  Each line it
# prints must be the comment of its print() call, up to a ':'
# ("print(x)  # True: why" expects "True").  Other python blocks are left
# to test/client, which runs docs/client.md's.
#
# Output: one line per check, then "N passed, N failed" as the last line;
# the exit status is non-zero if any check failed.
set -u
# Fixed collation for the order of docs/*.md and for messages in logs.
export LC_ALL=C

repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/test/docs"
. "$repo/test/lib.sh"
# Only names the socket file inside our private directory: no TCP listener.
port=${DOCS_TEST_PORT:-5562}

# Shows a log file indented under its check line, so a failure explains itself.
show_log() {
	sed 's/^/#   /' "$1"
}

# A throwaway cluster listening only on a unix socket.
start_cluster() {
	make_workdir docs && cluster_create "$WORK" "$port" -c fsync=off
}

# psql against the throwaway cluster; a runaway block cannot hang CI.
run_psql() {
	PGOPTIONS="-c statement_timeout=60s" "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$WORK" -p "$port" -U postgres "$@"
}

# Writes the ```sql blocks of a markdown file to $2/NNN.sql and prints one
# manifest line per block: "number line run|norun".  Fences follow
# CommonMark: up to three spaces of indent, three or more backticks (or
# tildes), a backtick fence's info string has no backtick (so an inline
# ```` ```sql ```` at the start of a line is not a fence), and a block ends at
# a bare fence of the same character at least as long.  Fences of other
# languages are tracked too, so that a ```sql line shown inside, say, a
# ```markdown example is not mistaken for a block.
extract_blocks() {
	awk -v dir="$2" '
		# Length of the fence that opens the line (0 if none); sets
		# fence_char and fence_rest (the info string, or what follows).
		function fence_length(line,    indent, c, n) {
			indent = 0
			while (substr(line, indent + 1, 1) == " " && indent < 4)
				indent++
			if (indent > 3)
				return 0
			c = substr(line, indent + 1, 1)
			if (c != "`" && c != "~")
				return 0
			n = 0
			while (substr(line, indent + n + 1, 1) == c)
				n++
			if (n < 3)
				return 0
			fence_char = c
			fence_rest = substr(line, indent + n + 1)
			return n
		}
		!inside {
			len = fence_length($0)
			if (len == 0 || (fence_char == "`" && index(fence_rest, "`") > 0))
				next
			inside = 1
			open_char = fence_char
			open_len = len
			info = fence_rest
			sub(/^[ \t]+/, "", info)
			is_python = (info ~ /^python[ \t]+(.*[ \t])?run([ \t]|$)/)
			is_sql = (info ~ /^sql([ \t]|$)/) || is_python
			if (is_sql) {
				n_blocks++
				out = sprintf("%s/%03d.%s", dir, n_blocks, is_python ? "py" : "sql")
				printf "" > out
				if (is_python)
					mode = "python"
				else
					mode = (info ~ /[ \t]norun([ \t]|$)/) ? "norun" : "run"
				print n_blocks, NR, mode
			}
			next
		}
		{
			len = fence_length($0)
			if (len >= open_len && fence_char == open_char && fence_rest ~ /^[ \t]*$/) {
				if (is_sql)
					close(out)
				inside = 0
				is_sql = 0
				next
			}
			if (is_sql)
				print > out
		}
	' "$1"
}

# Creates the document's database and, unless one of its runnable blocks
# does it, the extension in it.  Output goes to $3; false on any error.
prepare_database() {
	local db=$1 blocks=$2 log=$3 manifest=$4
	run_psql -d postgres -c "CREATE DATABASE $db" >"$log" 2>&1 || return 1
	documents_create_extension "$blocks" "$manifest" && return 0
	run_psql -d "$db" -c "CREATE EXTENSION bloomfilter" >>"$log" 2>&1
}

# Runs one document: fresh database, extension unless the document creates
# it, fixture, then every runnable block in order.
run_document() {
	local doc=$1 label name db blocks manifest number line mode
	label=${doc#"$repo"/}
	name=$(basename "$doc" .md)
	db="doc_$(echo "$name" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_\n' '_')"
	blocks="$WORK/blocks/$name"
	mkdir -p "$blocks"
	manifest=$(extract_blocks "$doc" "$blocks")
	[ -n "$manifest" ] || return 0

	if ! prepare_database "$db" "$blocks" "$blocks/setup.log" "$manifest"; then
		not_ok "$label: database and extension"
		show_log "$blocks/setup.log"
		return
	fi

	if [ -f "$here/fixtures/$name.sql" ]; then
		if run_psql -d "$db" -f "$here/fixtures/$name.sql" >"$blocks/fixture.log" 2>&1; then
			ok "$label fixture (test/docs/fixtures/$name.sql)"
		else
			not_ok "$label fixture (test/docs/fixtures/$name.sql)"
			show_log "$blocks/fixture.log"
		fi
	fi

	while read -r number line mode; do
		if [ "$mode" = norun ]; then
			echo "# skipped: $label block $number (line $line), marked norun"
			continue
		fi
		if [ "$mode" = python ]; then
			run_python_block "$label" "$db" "$blocks/$(printf %03d "$number").py" "$number" "$line"
			continue
		fi
		if run_psql -d "$db" -f "$blocks/$(printf %03d "$number").sql" >"$blocks/$number.log" 2>&1; then
			ok "$label block $number (line $line)"
			if [ -n "${DOCS_TEST_VERBOSE:-}" ]; then
				show_log "$blocks/$number.log"
			fi
		else
			not_ok "$label block $number (line $line)"
			show_log "$blocks/$number.log"
		fi
	done <<<"$manifest"
}

# Runs a ```python run block as a program against the document's database
# and compares what it prints with its print() lines' comments.
run_python_block() {
	local label=$1 db=$2 file=$3 number=$4 line=$5
	sed -n 's|^print(.*) *# *\([^:]*\).*$|\1|p' "$file" | sed 's/ *$//' >"$file.expected"
	if (cd "$WORK" && PYTHONPATH="$repo/python" PGHOST=$WORK PGPORT=$port PGUSER=postgres \
		PGDATABASE=$db timeout 60 /usr/bin/python3 "$file") >"$file.out" 2>"$file.err" &&
		[ -s "$file.expected" ] && diff "$file.expected" "$file.out" >"$file.diff"; then
		ok "$label block $number (line $line), python, prints what its comments say"
	else
		not_ok "$label block $number (line $line), python, prints what its comments say"
		cat "$file.err" "$file.diff" 2>/dev/null | tail -n 15 | sed 's/^/#   /'
	fi
}

# The client library, for the python blocks' module: built once.
build_client() {
	make -s -C "$repo" client >"$WORK/client.log" 2>&1 && return 0
	show_log "$WORK/client.log"
	return 1
}

# True if a runnable block of the document installs the extension itself.
documents_create_extension() {
	local blocks=$1 manifest=$2 number line mode
	while read -r number line mode; do
		[ "$mode" = run ] || continue
		grep -Eiq 'create[[:space:]]+extension[[:space:]]+(if[[:space:]]+not[[:space:]]+exists[[:space:]]+)?"?bloomfilter' \
			"$blocks/$(printf %03d "$number").sql" && return 0
	done <<<"$manifest"
	return 1
}

main() {
	local doc
	shopt -s nullglob
	cleanup_on_exit
	if [ "$(id -u)" -ne 0 ]; then
		# runuser to the postgres user needs root.
		not_ok "run as root"
		finish
	fi
	# The server of pg_config's major; sets PGBIN.
	if ! ensure_postgresql gcc libc6-dev libxxhash-dev libpq-dev make python3 python3-psycopg; then
		not_ok "postgresql-${PG_MAJOR:-NN}, gcc, libxxhash-dev, libpq-dev, make, python3 and python3-psycopg installed"
		finish
	fi
	if ! start_cluster; then
		not_ok "start a throwaway cluster"
		finish
	fi
	if ! build_client; then
		not_ok "make client builds the library the python blocks use"
		finish
	fi
	for doc in "$repo/README.md" "$repo"/docs/*.md; do
		run_document "$doc"
	done
	finish
}

main "$@"
