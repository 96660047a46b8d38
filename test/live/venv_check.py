"""test/live/venv_check.py: the bloomfilter package as pip installed it into
a venv (run.sh's venv_install), against the throwaway cluster: the module
is the venv's compiled one, not the source tree's; a LiveFilter follows an
index as rows arrive; a Filter's answers equal the server's for present and
absent keys of several kinds.  One "ok"/"not ok" line per check.

    V/bin/python venv_check.py --host DIR --port PORT --venv V
"""

import argparse
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--host", required=True)
parser.add_argument("--port", required=True)
parser.add_argument("--venv", required=True)
args = parser.parse_args()

import bloomfilter          # noqa: E402  (the venv's, by its sys.path)
import _bloomfilter         # noqa: E402
import psycopg              # noqa: E402  (Debian's python3-psycopg, through the system site)

failures = 0


def check(name, passed):
    global failures
    print("%s - %s" % ("ok" if passed else "not ok", name))
    failures += 0 if passed else 1


venv = os.path.realpath(args.venv)
check("import bloomfilter takes the venv's module and its compiled _bloomfilter",
      os.path.realpath(bloomfilter.__file__).startswith(venv) and
      os.path.realpath(_bloomfilter.__file__).startswith(venv) and
      _bloomfilter.__file__.endswith(".so"))
check("Filter.contains is the compiled module's method",
      bloomfilter.Filter.contains is _bloomfilter.Filter.contains)

conn = psycopg.connect("host=%s port=%s user=postgres dbname=postgres" % (args.host, args.port),
                       autocommit=True)
conn.execute("CREATE EXTENSION IF NOT EXISTS bloomfilter")
conn.execute("DROP TABLE IF EXISTS venv_keys")
conn.execute("CREATE TABLE venv_keys (id bigint)")
conn.execute("INSERT INTO venv_keys SELECT g * 3 FROM generate_series(1, 2000) g")
conn.execute("CREATE INDEX venv_keys_guard ON venv_keys USING bloomfilter (id) "
             "WITH (capacity = 10000, fpr = 0.01)")

guard = bloomfilter.LiveFilter(psycopg.connect(
    "host=%s port=%s user=postgres dbname=postgres" % (args.host, args.port)),
    "venv_keys_guard", max_staleness=60)
conn.execute("INSERT INTO venv_keys SELECT g * 3 FROM generate_series(2001, 3000) g")
result = guard.sync()
present = list(range(3, 9001, 3))
check("LiveFilter follows the index: every key inserted before and after its first sync found "
      "(%s)" % (result,), all(guard.contains(k) for k in present) and
      all(guard.contains_many(present)))
snapshot = bytes(conn.execute("SELECT filter::bytea FROM bloom_index_snapshot('venv_keys_guard')")
                 .fetchone()[0])
check("its copy equals the index's filter byte for byte",
      guard.to_filter().to_bytes() == snapshot)

probes = list(range(1, 20001))
server = conn.execute("SELECT array_agg(bloom_contains(f, k) ORDER BY k) FROM "
                      "(SELECT %s::bytea::bloom AS f) s, unnest(%s::bigint[]) k",
                      (snapshot, probes)).fetchone()[0]
local = bloomfilter.Filter.from_bytes(snapshot)
check("Filter answers 20,000 number keys as the server does, false positives included",
      local.contains_many(probes) == server and [k in local for k in probes] == server)

words = ["w%d" % i for i in range(3000)]
built = conn.execute("SELECT bloom_agg(w, 1000, 0.01)::bytea FROM unnest(%s::text[]) w",
                     (words[:1000],)).fetchone()[0]
text_server = conn.execute("SELECT array_agg(bloom_contains(%s::bytea::bloom, w) ORDER BY n) "
                           "FROM unnest(%s::text[]) WITH ORDINALITY u(w, n)",
                           (built, words)).fetchone()[0]
text_filter = bloomfilter.Filter.from_bytes(built)
check("Filter answers 3,000 text keys as the server does",
      [text_filter.contains(w) for w in words] == text_server)
try:
    text_filter.contains(5)
    check("a number key on a text filter raises KindError", False)
except bloomfilter.KindError:
    check("a number key on a text filter raises KindError", True)
guard.close()
conn.execute("DROP TABLE venv_keys")
sys.exit(1 if failures else 0)
