#!/usr/bin/python3
"""test/client/exact.py: the client library, CLI and Python module against
the server, in the throwaway cluster test/client/run.sh started.

For every kind the client hashes, the server builds filters from the keys
of keys.sql and answers for every key; the CLI and the Python module must
give exactly the same answers (true for every present key, and the very
same false positives among the absent ones).  Filters built by the CLI and
the module must equal the server's byte for byte, answer the same when the
server probes them, and union with server-built filters into the server's
union.  Growing filters (chains of segments, bloom_empty(capacity, fpr,
growth)) are compared likewise: the server's, read by the client; the
client's, built and grown to the server's bytes; their unions.  Version 1
filters, a LATIN1 database, bloom_info's fields and damaged binary and text
values (the fuzz corpus and mutants) are compared likewise.

Prints "ok - ..." / "not ok - ..." lines, which run.sh counts, and "#"
lines of detail.
"""

import argparse
import datetime
import decimal
import os
import random
import re
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
import bloomfilter  # noqa: E402

CLI = os.path.join(REPO, "client", "bloomfilter-cli")

SQL_TYPES = {
    "number": "numeric", "float": "float8", "text": "text", "bytea": "bytea",
    "uuid": "uuid", "boolean": "boolean", "date": "date", "timestamp": "timestamp",
    "timestamptz": "timestamptz",
}

passed = 0
failed = 0


def check(description, condition, detail=None):
    global passed, failed
    if condition:
        passed += 1
        print("ok - " + description, flush=True)
    else:
        failed += 1
        print("not ok - " + description, flush=True)
        if detail:
            for line in str(detail).splitlines()[:15]:
                print("#   " + line, flush=True)
    return condition


class Server:
    def __init__(self, psql, host, port):
        self.base = [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-h", host, "-p",
                     str(port), "-U", "postgres"]

    def run(self, sql, db="client", stdin=None, variables=()):
        command = self.base + ["-d", db]
        for name, value in variables:
            command += ["-v", "%s=%s" % (name, value)]
        if stdin is None:
            # the statement on stdin: a filter literal can pass the
            # 128 kB limit of one command-line argument
            stdin = sql.encode("utf-8")
        else:
            command += ["-c", sql]
        env = dict(os.environ, PGCLIENTENCODING="UTF8",
                   PGOPTIONS="-c client_min_messages=warning -c extra_float_digits=1")
        result = subprocess.run(command, input=stdin, capture_output=True, env=env)
        if result.returncode != 0:
            raise RuntimeError("psql failed: %s\n%s" % (sql and sql[:200],
                                                         result.stderr.decode(errors="replace")))
        return result.stdout.decode("utf-8")

    def file(self, path, db="client", variables=()):
        command = self.base + ["-d", db, "-f", path]
        for name, value in variables:
            command += ["-v", "%s=%s" % (name, value)]
        env = dict(os.environ, PGCLIENTENCODING="UTF8",
                   PGOPTIONS="-c client_min_messages=warning")
        result = subprocess.run(command, capture_output=True, env=env)
        if result.returncode != 0:
            raise RuntimeError(result.stderr.decode(errors="replace"))

    def rows(self, sql, db="client"):
        out = self.run("COPY (%s) TO STDOUT" % sql, db=db)
        return [line.split("\t") for line in out.splitlines()]


def cli(*args, stdin=b"", expect=0):
    result = subprocess.run([CLI] + list(args), input=stdin, capture_output=True)
    if expect is not None and result.returncode != expect:
        raise RuntimeError("bloomfilter-cli %s exited %d: %s" % (
            " ".join(args[:3]), result.returncode, result.stderr.decode(errors="replace")))
    return result


def cli_answers(filter_path, keys, *options):
    """The CLI's answers for keys (text), checked to echo each key."""
    stdin = "".join(k + "\n" for k in keys).encode("utf-8")
    out = cli("contains", filter_path, *options, stdin=stdin).stdout.decode("utf-8")
    lines = out.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    if len(lines) != len(keys):
        raise RuntimeError("CLI gave %d lines for %d keys" % (len(lines), len(keys)))
    answers = []
    for key, line in zip(keys, lines):
        echoed, answer = line.rsplit("\t", 1)
        if echoed != key or answer not in ("t", "f"):
            raise RuntimeError("CLI line %r for key %r" % (line, key))
        answers.append(answer == "t")
    return answers


# ---------------------------------------------------------------------------
# Keys as Python values

def native(kind, s, present):
    """The Python value a user would probe with, or None where Python has
    no such value (infinite dates)."""
    if kind == "number":
        try:
            return int(s)
        except ValueError:
            return decimal.Decimal(s.strip())
    if kind == "float":
        return float(s)
    if kind == "text":
        return s
    if kind == "bytea":
        return bytes.fromhex(s[2:])
    if kind == "uuid":
        return uuid.UUID(s)
    if kind == "boolean":
        return present            # keys.sql: the true spellings are the present ones
    s = s.strip()
    if s.lower() in ("infinity", "-infinity"):
        return None
    if kind == "date":
        return datetime.date(1970, 1, 1) if s == "epoch" else datetime.date.fromisoformat(s)
    if s == "epoch":
        return (datetime.datetime(1970, 1, 1) if kind == "timestamp"
                else datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc))
    return datetime.datetime.fromisoformat(s.replace(" +", "+").replace(" -", "-"))


def differences(keys, got, expected, limit=5):
    out = []
    for key, g, e in zip(keys, got, expected):
        if g != e:
            out.append("%r: client %s, server %s" % (key, g, e))
            if len(out) >= limit:
                break
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Per kind

def info_matches(server_info, client_info):
    """bloom_info's row (text, as psql prints it) against the client's dict."""
    problems = []
    for name, text in server_info.items():
        value = client_info[name]
        if text == "\\N":
            same = value is None
        elif isinstance(value, bool):
            same = (text == "t") == value
        elif isinstance(value, float):
            same = float(text) == value or (value != value and text == "NaN")
        elif isinstance(value, int):
            same = int(text) == value
        else:
            same = text == value
        if not same:
            problems.append("%s: server %s, client %r" % (name, text, value))
    return "\n".join(problems)


INFO_FIELDS = ["format_version", "layout", "bits", "bytes", "hashes", "capacity", "target_fpr",
               "inserted", "bits_set", "fill_ratio", "estimated_distinct", "estimated_fpr",
               "key_kind", "seed", "key_environment", "over_capacity", "segments", "growth"]


def server_info(server, expression, db="client"):
    row = server.rows("SELECT %s FROM bloom_info(%s) i" % (
        ", ".join("i." + f for f in INFO_FIELDS), expression), db=db)[0]
    return dict(zip(INFO_FIELDS, row))


def cli_info(path):
    out = cli("info", path).stdout.decode()
    result = {}
    for line in out.splitlines():
        name, value = line.split("\t", 1)
        result[name] = value
    return result


def cli_info_as_values(info):
    """The CLI's info lines typed like the Python module's dict."""
    typed = {}
    for name, text in info.items():
        if name in ("layout", "key_kind"):
            typed[name] = text
        elif name == "key_environment":
            typed[name] = text or None
        elif name == "growth":
            typed[name] = int(text) if text else None
        elif name == "over_capacity":
            typed[name] = text == "t"
        elif name in ("target_fpr", "fill_ratio", "estimated_distinct", "estimated_fpr"):
            typed[name] = float(text.replace("Infinity", "inf"))
        else:
            typed[name] = int(text)
    return typed


def test_kind(server, work, kind, rows):
    sql_type = SQL_TYPES[kind]
    keys = [r[2] for r in rows]
    present = [r[1] for r in rows]
    ids = [r[0] for r in rows]
    npresent = sum(present)
    capacity = max(npresent, 1)
    label = "%s (%d present, %d absent keys)" % (kind, npresent, len(rows) - npresent)

    # the server's filters: self-sized, fixed size, and the half a union gets from it
    server.run("""
        CREATE TABLE f_{k} AS
        SELECT bloom_agg(s::{t}) AS agg,
               bloom_add_all(bloom_empty({c}, 0.01), array_agg(s::{t} ORDER BY id)) AS fixed,
               bloom_add_all(bloom_empty({c}, 0.01),
                             coalesce(array_agg(s::{t} ORDER BY id) FILTER (WHERE hashint4(id) & 1 = 1),
                                      '{{}}')) AS half_b
        FROM keys WHERE kind = '{k}' AND present""".format(k=kind, t=sql_type, c=capacity))
    answers = {int(i): a == "t" for i, a in server.rows(
        "SELECT k.id, bloom_contains(f.agg, k.s::{t}) FROM keys k, f_{k} f "
        "WHERE k.kind = '{k}' ORDER BY k.id".format(k=kind, t=sql_type))}
    expected = [answers[i] for i in ids]
    answered_t = sum(1 for e, p in zip(expected, present) if e and not p)
    # absent rows whose value equals no present one: the real false positives
    false_positives = int(server.run(
        "SELECT count(*) FROM keys k, f_{k} f WHERE k.kind = '{k}' AND NOT k.present "
        "AND bloom_contains(f.agg, k.s::{t}) AND k.s::{t} NOT IN "
        "(SELECT s::{t} FROM keys WHERE kind = '{k}' AND present)".format(k=kind, t=sql_type)))
    agg_hex, agg_text, fixed_hex, half_b_hex = server.rows(
        "SELECT encode(agg::bytea, 'hex'), agg::text, encode(fixed::bytea, 'hex'), "
        "encode(half_b::bytea, 'hex') FROM f_%s" % kind)[0]
    check("%s: the server finds every present key" % label,
          all(e for e, p in zip(expected, present) if p))

    paths = {form: os.path.join(work, "%s.%s" % (kind, form)) for form in ("bin", "txt", "hex")}
    with open(paths["bin"], "wb") as f:
        f.write(bytes.fromhex(agg_hex))
    with open(paths["txt"], "w") as f:
        f.write(agg_text + "\n")
    with open(paths["hex"], "w") as f:
        f.write("\\x" + agg_hex + "\n")

    # the CLI on the server's filter, in its three forms
    got = cli_answers(paths["bin"], keys)
    check("%s: CLI answers t for every present key" % label,
          all(g for g, p in zip(got, present) if p), differences(keys, got, expected))
    check("%s: CLI gives the server's answer for every key (%d absent keys answered t, "
          "%d of them equal to no present key)" % (label, answered_t, false_positives),
          got == expected, differences(keys, got, expected))
    check("%s: CLI answers alike from the text and hex forms" % kind,
          cli_answers(paths["txt"], keys) == got and cli_answers(paths["hex"], keys) == got)

    # the Python module on the same filter
    f = bloomfilter.Filter.from_bytes(bytes.fromhex(agg_hex))
    values = [native(kind, s, p) for s, p in zip(keys, present)]
    usable = [i for i, v in enumerate(values) if v is not None]
    py_keys = [values[i] for i in usable]
    py_expected = [expected[i] for i in usable]
    one_by_one = [f.contains(v) for v in py_keys]
    check("%s: Python contains() gives the server's answer for %d keys"
          % (kind, len(py_keys)), one_by_one == py_expected,
          differences(py_keys, one_by_one, py_expected))
    many = f.contains_many(py_keys)
    check("%s: Python contains_many() likewise" % kind, many == py_expected,
          differences(py_keys, many, py_expected))
    same_type = {}
    for v, e in zip(py_keys, py_expected):
        same_type.setdefault(type(v), ([], []))
        same_type[type(v)][0].append(v)
        same_type[type(v)][1].append(e)
    batches_ok = all(f.contains_many(vs) == es for vs, es in same_type.values())
    check("%s: Python contains_many() of one type at a time (%s) likewise" % (
        kind, ", ".join(sorted(t.__name__ for t in same_type))), batches_ok)
    check("%s: Python from_text() equals from_bytes()" % kind,
          bloomfilter.Filter.from_text(agg_text) == f and f.to_text() == agg_text)

    # bloom_info
    s_info = server_info(server, "(SELECT agg FROM f_%s)" % kind)
    problems = info_matches(s_info, f.info())
    check("%s: Python info() equals bloom_info" % kind, not problems, problems)
    problems = info_matches(s_info, cli_info_as_values(cli_info(paths["bin"])))
    check("%s: CLI info equals bloom_info" % kind, not problems, problems)

    # filters built by the CLI and by Python equal the server's, byte for byte
    present_keys = [k for k, p in zip(keys, present) if p]
    built = cli("build", "--kind", kind, "--capacity", str(capacity), "--fpr", "0.01",
                stdin="".join(k + "\n" for k in present_keys).encode()).stdout
    check("%s: CLI build equals bloom_add_all(bloom_empty(%d, 0.01), keys) byte for byte"
          % (kind, capacity), built == bytes.fromhex(fixed_hex))
    present_values = [values[i] for i in range(len(rows)) if present[i]]
    if None not in present_values:
        g = bloomfilter.Filter.empty(kind, capacity, 0.01)
        g.add_many(present_values)
        check("%s: Python empty() + add_many() equals the server's filter byte for byte" % kind,
              g.to_bytes() == bytes.fromhex(fixed_hex))

    # the server probes the CLI's filter, loaded through the bytea cast and text input
    built_text = cli("convert", "-", "--format", "text", stdin=built).stdout.decode().strip()
    server.run("CREATE TABLE c_{k} AS SELECT decode('{h}', 'hex')::bloom AS by_bytea, "
               "'{t}'::bloom AS by_text".format(k=kind, h=built.hex(), t=built_text))
    mismatch = server.run(
        "SELECT count(*) FROM keys k, c_{k} c, f_{k} f WHERE k.kind = '{k}' AND "
        "(bloom_contains(c.by_bytea, k.s::{t}) IS DISTINCT FROM bloom_contains(f.fixed, k.s::{t}) OR "
        " bloom_contains(c.by_text, k.s::{t}) IS DISTINCT FROM bloom_contains(f.fixed, k.s::{t}) OR "
        " NOT bloom_contains(c.by_bytea, k.s::{t}) AND k.present)".format(k=kind, t=sql_type)).strip()
    check("%s: the server's probes of the CLI-built filter equal those of its own" % kind,
          mismatch == "0", "%s keys differ" % mismatch)

    # unions: half A built by the client, half B by the server
    half_a_keys = [k for k, p, i in zip(keys, present, ids) if p and not hash_bit(server, i)]
    half_a = cli("build", "--kind", kind, "--capacity", str(capacity), "--fpr", "0.01",
                 stdin="".join(k + "\n" for k in half_a_keys).encode()).stdout
    a_path = os.path.join(work, kind + ".a")
    b_path = os.path.join(work, kind + ".b")
    with open(a_path, "wb") as out:
        out.write(half_a)
    with open(b_path, "w") as out:
        out.write("\\x" + half_b_hex + "\n")
    union = cli("union", a_path, b_path).stdout
    server_union = server.run("SELECT encode((decode('%s', 'hex')::bloom | decode('%s', 'hex')::bloom)::bytea, 'hex')"
                              % (half_a.hex(), half_b_hex)).strip()
    check("%s: CLI union of a client-built and a server-built half equals the server's union"
          % kind, union.hex() == server_union)
    check("%s: ... and the server's filter of all the keys" % kind, union.hex() == fixed_hex)
    py_union = bloomfilter.Filter.from_bytes(half_a).union(
        bloomfilter.Filter.from_bytes(bytes.fromhex(half_b_hex)))
    check("%s: Python union likewise" % kind, py_union.to_bytes().hex() == server_union)


_hash_bits = {}


def hash_bit(server, i):
    return _hash_bits[i]


def load_hash_bits(server):
    for i, bit in server.rows("SELECT DISTINCT id, hashint4(id) & 1 FROM keys"):
        _hash_bits[int(i)] = bit == "1"


# ---------------------------------------------------------------------------
# Growing filters: chains of segments

# The server's chains: bloom_add_all over bloom_empty(capacity, fpr, growth)
# of the present keys in id order, or bloom_agg(key, capacity, fpr, growth).
SERVER_CHAINS = [
    ("number", "bloom_add_all(bloom_empty(1000, 0.01, 2), array_agg(s::numeric ORDER BY id))",
     "bloom_add_all(bloom_empty(1000, 0.01, 2), keys)"),
    ("text", "bloom_agg(s::text, 1000, 0.01, 2)", "bloom_agg(key, 1000, 0.01, 2)"),
    ("uuid", "bloom_agg(s::uuid, 1000, 0.001, 4)", "bloom_agg(key, 1000, 0.001, 4)"),
]


def write_forms(work, name, hex_value, text):
    """The value in its binary, text and hex forms, in files; their paths."""
    paths = {form: os.path.join(work, "%s.%s" % (name, form)) for form in ("bin", "txt", "hex")}
    with open(paths["bin"], "wb") as f:
        f.write(bytes.fromhex(hex_value))
    with open(paths["txt"], "w") as f:
        f.write(text + "\n")
    with open(paths["hex"], "w") as f:
        f.write("\\x" + hex_value + "\n")
    return paths


def test_server_chain(server, work, kind, expression, description, rows):
    """A chain the server built, read by the CLI and the module: the
    server's answers for every key, the forms, bloom_info."""
    sql_type = SQL_TYPES[kind]
    keys = [r[2] for r in rows]
    present = [r[1] for r in rows]
    ids = [r[0] for r in rows]
    server.run("CREATE TABLE chain_{k} AS SELECT {e} AS f FROM keys WHERE kind = '{k}' AND present"
               .format(k=kind, e=expression))
    hex_value, text, segments = server.rows(
        "SELECT encode(f::bytea, 'hex'), f::text, (bloom_info(f)).segments FROM chain_%s" % kind)[0]
    label = "%s chain %s (%s segments)" % (kind, description, segments)
    check("%s: the server's has 4 segments or more" % label, int(segments) >= 4)
    answers = {int(i): a == "t" for i, a in server.rows(
        "SELECT k.id, bloom_contains(c.f, k.s::{t}) FROM keys k, chain_{k} c "
        "WHERE k.kind = '{k}'".format(k=kind, t=sql_type))}
    expected = [answers[i] for i in ids]
    answered_t = sum(1 for e, p in zip(expected, present) if e and not p)
    check("%s: the server finds every present key" % label,
          all(e for e, p in zip(expected, present) if p))

    paths = write_forms(work, "chain_" + kind, hex_value, text)
    got = cli_answers(paths["bin"], keys)
    check("%s: CLI gives the server's answer for every key (%d present, %d absent of which "
          "%d answered t)" % (label, sum(present), len(rows) - sum(present), answered_t),
          got == expected, differences(keys, got, expected))
    check("%s: CLI answers alike from the text and hex forms" % label,
          cli_answers(paths["txt"], keys) == got and cli_answers(paths["hex"], keys) == got)

    f = bloomfilter.Filter.from_bytes(bytes.fromhex(hex_value))
    values = [native(kind, k, p) for k, p in zip(keys, present)]
    usable = [i for i, v in enumerate(values) if v is not None]
    py_keys = [values[i] for i in usable]
    py_expected = [expected[i] for i in usable]
    one_by_one = [f.contains(v) for v in py_keys]
    check("%s: Python contains() gives the server's answer for %d keys" % (label, len(py_keys)),
          one_by_one == py_expected, differences(py_keys, one_by_one, py_expected))
    many = f.contains_many(py_keys)
    check("%s: Python contains_many() likewise" % label, many == py_expected,
          differences(py_keys, many, py_expected))
    check("%s: Python from_text() equals from_bytes(), and to_text() the server's text" % label,
          bloomfilter.Filter.from_text(text) == f and f.to_text() == text and
          f.to_bytes().hex() == hex_value)
    converted = cli("convert", paths["bin"]).stdout.decode().strip()
    check("%s: CLI convert binary -> text gives the server's text" % label, converted == text)

    s_info = server_info(server, "(SELECT f FROM chain_%s)" % kind)
    problems = info_matches(s_info, f.info())
    check("%s: Python info() equals bloom_info (layout %s, segments %s, growth %s)"
          % (label, s_info["layout"], s_info["segments"], s_info["growth"]),
          not problems, problems)
    problems = info_matches(s_info, cli_info_as_values(cli_info(paths["bin"])))
    check("%s: CLI info equals bloom_info" % label, not problems, problems)


def server_hex(server, expression):
    return server.run("SELECT encode((%s)::bytea, 'hex')" % expression).strip()


def test_client_chains(server, work, rows):
    """Chains the client builds and grows, from the number keys: the
    server's bytes when it adds the same keys in the same order (repeated
    keys and false positives among them take no room), its unions."""
    ordered = sorted(r for r in rows if r[1])        # present keys, by id
    keys = [r[2] for r in ordered]
    values = [native("number", k, True) for k in keys]
    server_chain = server.rows("SELECT encode(f::bytea, 'hex') FROM chain_number")[0][0]
    label = "number chain of %d keys" % len(keys)

    # built: the module (one key at a time, mixed int and Decimal) and the CLI
    g = bloomfilter.Filter.empty("number", 1000, 0.01, growth=2)
    g.add_many(values)
    check("%s: Python empty(growth=2) + add_many() equals bloom_add_all(bloom_empty(1000, "
          "0.01, 2), keys) byte for byte (%d segments)" % (label, g.info()["segments"]),
          g.to_bytes().hex() == server_chain)
    built = cli("build", "--kind", "number", "--capacity", "1000", "--fpr", "0.01",
                "--growth", "2", stdin="".join(k + "\n" for k in keys).encode()).stdout
    check("%s: CLI build --growth 2 likewise" % label, built.hex() == server_chain)

    # int keys in one batch (bfc_add_int64_many), repeated ones among them
    ints = [(i * 7919) % 12007 - 6000 for i in range(1, 20001)]
    expected = server_hex(server, "bloom_add_all(bloom_empty(500, 0.001, 3), ARRAY[%s]::bigint[])"
                          % ",".join(map(str, ints)))
    g = bloomfilter.Filter.empty("number", 500, 0.001, growth=3)
    g.add_many(ints)
    check("20000 int keys (12007 distinct) in one batch: Python add_many() equals "
          "bloom_add_all(bloom_empty(500, 0.001, 3), keys) byte for byte (%d segments)"
          % g.info()["segments"], g.to_bytes().hex() == expected)
    h = bloomfilter.Filter.empty("number", 500, 0.001, growth=3)
    for v in ints:
        h.add(v)
    check("... and add() one key at a time likewise", h == g)

    # grown: a server chain of the first half, the second half added by the client
    half = len(keys) // 2
    first_half = server.rows(
        "SELECT encode(bloom_add_all(bloom_empty(1000, 0.01, 2), array_agg(s::numeric ORDER BY id) "
        "FILTER (WHERE rank <= %d))::bytea, 'hex') FROM (SELECT s, id, rank() OVER (ORDER BY id) "
        "FROM keys WHERE kind = 'number' AND present) k" % half)[0][0]
    f = bloomfilter.Filter.from_bytes(bytes.fromhex(first_half))
    before = f.info()["segments"]
    f.add_many(values[half:])
    check("%s: the server's chain of the first %d keys (%d segments), grown by Python with the "
          "rest (%d segments), equals the server's of all the keys byte for byte"
          % (label, half, before, f.info()["segments"]), f.to_bytes().hex() == server_chain)
    path = os.path.join(work, "chain_half.hex")
    with open(path, "w") as out:
        out.write("\\x" + first_half + "\n")
    grown = cli("add", path, stdin="".join(k + "\n" for k in keys[half:]).encode()).stdout
    check("%s: ... and grown by CLI add likewise (in the input's hex form)" % label,
          grown.decode().strip() == "\\x" + server_chain)

    # unions of client chains of different lengths, both ways, with the server's
    ids = [r[0] for r in ordered]
    a_values = [v for v, i in zip(values, ids) if not hash_bit(server, i)]
    b_values = [v for v, i in zip(values, ids) if hash_bit(server, i)][:2500]
    a = bloomfilter.Filter.empty("number", 1000, 0.01, growth=2)
    a.add_many(a_values)
    b = bloomfilter.Filter.empty("number", 1000, 0.01, growth=2)
    b.add_many(b_values)
    a_hex, b_hex = a.to_bytes().hex(), b.to_bytes().hex()
    both = "decode('%s', 'hex')::bloom | decode('%s', 'hex')::bloom"
    for first, second, first_hex, second_hex, name in ((a, b, a_hex, b_hex, "a | b"),
                                                       (b, a, b_hex, a_hex, "b | a")):
        expected = server_hex(server, both % (first_hex, second_hex))
        union = first.union(second)
        check("union of client chains of %d and %d segments, %s: Python equals the server's "
              "byte for byte" % (first.info()["segments"], second.info()["segments"], name),
              union.to_bytes().hex() == expected)
        paths = []
        for n, value in enumerate((first, second)):
            paths.append(os.path.join(work, "chain_union_%d.bin" % n))
            with open(paths[-1], "wb") as out:
                out.write(value.to_bytes())
        check("... CLI union likewise", cli("union", *paths).stdout.hex() == expected)
        s_info = server_info(server, "(%s)" % (both % (first_hex, second_hex)))
        problems = info_matches(s_info, union.info())
        check("... and its info() equals bloom_info (%s segments, inserted %s)"
              % (s_info["segments"], s_info["inserted"]), not problems, problems)
    expected = server_hex(server, "decode('%s', 'hex')::bloom | (SELECT f FROM chain_number)" % b_hex)
    check("union of a client chain and the server's: Python equals the server's byte for byte",
          b.union(bloomfilter.Filter.from_bytes(bytes.fromhex(server_chain))).to_bytes().hex()
          == expected)

    # refused as the server refuses them
    for other, what in ((bloomfilter.Filter.empty("number", 1000, 0.01), "a filter of fixed size"),
                        (bloomfilter.Filter.empty("number", 1000, 0.01, growth=4),
                         "a chain of growth 4"),
                        (bloomfilter.Filter.empty("number", 999, 0.01, growth=2),
                         "a chain of capacity 999")):
        other.add(1)
        try:
            a.union(other)
            client_refused = False
        except bloomfilter.IncompatibleFiltersError:
            client_refused = True
        try:
            server_hex(server, both % (a_hex, other.to_bytes().hex()))
            server_refused = False
        except RuntimeError as e:
            server_refused = "different parameters" in str(e)
        check("union of a growth 2 chain and %s: refused by the client as by the server" % what,
              client_refused and server_refused)


def test_chains(server, work, by_kind):
    for kind, expression, description in SERVER_CHAINS:
        try:
            test_server_chain(server, work, kind, expression, description, by_kind[kind])
        except Exception as e:
            check("%s chain: the comparison ran to its end" % kind, False, repr(e))
    test_client_chains(server, work, by_kind["number"])


# ---------------------------------------------------------------------------
# Version 1 filters, LATIN1

def forge_version_1(work, hex_value):
    """An empty filter's bytes made version 1, checksum recomputed."""
    value = bytearray.fromhex(hex_value)
    value[2] = 1
    rechecksum = os.path.join(work, "rechecksum")
    out = subprocess.run([rechecksum], input=("1\t%s\n" % value.hex()).encode(),
                         capture_output=True, check=True).stdout.decode()
    return out.split("\t")[1].strip()


def test_version_1(server, work, by_kind):
    empty = server.run("SELECT encode(bloom_empty(60000, 0.01)::bytea, 'hex')").strip()
    v1 = forge_version_1(work, empty)
    for kind in ("number", "text"):
        rows = by_kind[kind]
        keys = [r[2] for r in rows]
        server.run("CREATE TABLE v1_{k} AS SELECT bloom_add_all(decode('{v}', 'hex')::bloom, "
                   "array_agg(s::{t} ORDER BY id)) AS f FROM keys WHERE kind = '{k}' AND present"
                   .format(k=kind, v=v1, t=SQL_TYPES[kind]))
        version, hex_value = server.rows(
            "SELECT (bloom_info(f)).format_version, encode(f::bytea, 'hex') FROM v1_%s" % kind)[0]
        check("version 1 %s: the server keeps the filter at version 1" % kind, version == "1")
        answers = {int(i): a == "t" for i, a in server.rows(
            "SELECT k.id, bloom_contains(v.f, k.s::{t}) FROM keys k, v1_{k} v WHERE k.kind = '{k}'"
            .format(k=kind, t=SQL_TYPES[kind]))}
        expected = [answers[r[0]] for r in rows]
        path = os.path.join(work, "v1_%s.bin" % kind)
        with open(path, "wb") as out:
            out.write(bytes.fromhex(hex_value))
        if kind == "number":
            got = cli_answers(path, keys)
            check("version 1 number: CLI answers as the server (numerics by their text)",
                  got == expected, differences(keys, got, expected))
            f = bloomfilter.Filter.from_bytes(bytes.fromhex(hex_value))
            values = [native(kind, r[2], r[1]) for r in rows]
            got = [f.contains(v) for v in values]
            check("version 1 number: Python answers as the server", got == expected,
                  differences(keys, got, expected))
        else:
            ascii_rows = [i for i, k in enumerate(keys) if k.isascii()]
            got = cli_answers(path, [keys[i] for i in ascii_rows])
            check("version 1 text: CLI answers ASCII keys as the server",
                  got == [expected[i] for i in ascii_rows])
            non_ascii = next(k for k in keys if not k.isascii())
            refused = cli("contains", path, non_ascii, expect=None)
            check("version 1 text: CLI refuses a non-ASCII key (exit 1, says why)",
                  refused.returncode == 1 and b"version 1" in refused.stderr,
                  refused.stderr.decode())
            got = cli_answers(path, keys, "--v1-utf8")
            check("version 1 text: with --v1-utf8 (a UTF8 database) the CLI answers every key "
                  "as the server", got == expected, differences(keys, got, expected))
            f = bloomfilter.Filter.from_bytes(bytes.fromhex(hex_value), v1_utf8=True)
            check("version 1 text: Python with v1_utf8 likewise",
                  [f.contains(k) for k in keys] == expected)
            try:
                bloomfilter.Filter.from_bytes(bytes.fromhex(hex_value)).contains(non_ascii)
                check("version 1 text: Python refuses a non-ASCII key", False)
            except bloomfilter.UnsupportedKeyError:
                check("version 1 text: Python refuses a non-ASCII key", True)


def test_latin1(server, work):
    rng = random.Random(1)
    strings = set()
    while len(strings) < 4000:
        n = rng.randrange(0, 12)
        s = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(160, 256)]))
                    for _ in range(n))
        strings.add(s + " " * rng.randrange(0, 3))
    keys = sorted(strings)
    present = [i % 2 == 0 for i in range(len(keys))]
    server.run("CREATE DATABASE latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    server.run("CREATE EXTENSION bloomfilter", db="latin1")
    server.run("CREATE TABLE k (id int, present bool, s text)", db="latin1")
    data = "".join("%d\t%s\t%s\n" % (i, "t" if p else "f", k.replace("\\", "\\\\"))
                   for i, (k, p) in enumerate(zip(keys, present)))
    server.run("COPY k FROM STDIN", db="latin1", stdin=data.encode("utf-8"))
    server.run("CREATE TABLE f AS SELECT bloom_agg(s) AS f FROM k WHERE present", db="latin1")
    answers = {int(i): a == "t" for i, a in server.rows(
        "SELECT k.id, bloom_contains(f.f, k.s) FROM k, f", db="latin1")}
    expected = [answers[i] for i in range(len(keys))]
    hex_value = server.run("SELECT encode(f::bytea, 'hex') FROM f", db="latin1").strip()
    path = os.path.join(work, "latin1.bin")
    with open(path, "wb") as out:
        out.write(bytes.fromhex(hex_value))
    got = cli_answers(path, keys)
    check("LATIN1 database: the CLI, given UTF-8 keys, answers as the server (%d keys, %d non-ASCII)"
          % (len(keys), sum(1 for k in keys if not k.isascii())), got == expected,
          differences(keys, got, expected))
    check("LATIN1 database: every present key is found",
          all(g for g, p in zip(got, present) if p))


# ---------------------------------------------------------------------------
# Key syntax: junk near the valid spellings

SPELLINGS = {
    "number": ["1", "-42", "0.50", "1e3", " 7 ", ".5", "5.", "+1.5E-3", "NaN", "Infinity",
               "-inf", "1e 5", "9223372036854775808", "0x10", "1_000", "\u0661", "--1",
               "1e", "e1", "1.2.3", "+NaN", "infinityx", "1e-16384", "1e131072", ""],
    "float": ["1", "-0", "0.1", "1e308", "1e309", "4.9e-324", "1e-400", "NaN", "-Infinity",
              "inf", "+inf", "nan(123)", "0x1p3", " 2.5 ", "1e", ".", "1.5.5", "infinit",
              "\uff11", ""],
    "uuid": ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}",
             "a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
             "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "{a0eebc999c0b4ef8bb6d6bb9bd380a11",
             "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", " a0eebc999c0b4ef8bb6d6bb9bd380a11"],
    "boolean": ["t", "true", "TRUE", "yes", "on", "1", "f", "of", "o", "off", "no", "0", " y ",
                "tru", "truex", "yes ", "2", "", "On"],
    "bytea": ["\\x", "\\x00", "\\x0", "\\x 00 ff", "\\xZZ", "abc", "\\\\", "\\123",
              "\\400", "\\", "a\\b", "\\x00\n"],
    "date": ["2000-01-01", "0001-01-01", "9999-12-31", "2023-02-29", "2024-02-29", "infinity",
             "-infinity", "epoch", " 2000-01-01 ", "2000-1-1", "01/02/2000", "2000-01-01 00:00",
             "10000-01-01", "0000-01-01", "today", "2000-13-01"],
    "timestamp": ["2000-01-01 00:00", "2000-01-01T12:34:56.789", "2000-01-01 24:00",
                  "2000-01-01 23:59:60", "2000-01-01 00:00:00.1234567", "2000-01-01",
                  "2000-01-01 00:00+05", "infinity", "epoch", "2000-01-01 1:2:3"],
    "timestamptz": ["2000-01-01 00:00Z", "2000-01-01 00:00+05:30", "2000-01-01 00:00 -08",
                    "2000-01-01 00:00+0530", "2000-01-01 00:00", "2000-01-01 00:00+05:",
                    "2000-01-01 00:00+16", "2000-01-01 00:00 UTC", "2000-01-01T00:00:00z"],
}

# Kinds whose client reader takes exactly what the server's input function
# takes; the others (ISO dates and times) may refuse more, never accept more.
SAME_SYNTAX = {"number", "float", "uuid", "boolean", "bytea"}


def numeric_in_changed(spelling, server_accepts, client_accepts):
    """Whether the server and the client disagree on a number's spelling
    only because PostgreSQL 16 changed numeric_in, while the client reads
    15's syntax (client/keyparse.c): 16 accepts non-decimal integers (0x1F,
    0o17, 0b101) and underscores between digits (1_000), which the client
    refuses, and refuses blanks between an exponent's e and its digits
    (1e 5), which 15 skipped (strtol) and the client skips too."""
    if server_accepts and not client_accepts:
        bare = spelling.strip(" \t\n\r\v\f").lstrip("+-").lower()
        return "_" in spelling or bare.startswith(("0x", "0o", "0b"))
    if client_accepts and not server_accepts:
        return re.search(r"[eE][ \t\n\r\v\f]", spelling) is not None
    return False


def near_spellings(kind, rng, count):
    seeds = SPELLINGS[kind]
    alphabet = "0123456789eE+-. \t{}abcdfABCDFxXnNiIyYoOtTZz:\\\u00e9"
    out = list(seeds)
    while len(out) < count:
        s = rng.choice(seeds)
        for _ in range(rng.randrange(1, 3)):
            at = rng.randrange(len(s) + 1)
            op = rng.randrange(3)
            if op == 0:
                s = s[:at] + rng.choice(alphabet) + s[at:]
            elif op == 1:
                s = s[:at] + s[at + 1:]
            else:
                s = s[:at] + rng.choice(alphabet) + s[at + 1:]
        out.append(s)
    return out


def test_syntax(server):
    server.run("""
        CREATE FUNCTION accepts(s text, type regtype) RETURNS boolean LANGUAGE plpgsql AS $$
        BEGIN
            EXECUTE format('SELECT %L::%s', s, type);
            RETURN true;
        EXCEPTION WHEN OTHERS THEN
            RETURN false;
        END $$;
        CREATE TABLE spelled (kind text, id int, s text);""")
    server_major = int(server.run("SHOW server_version_num").strip()) // 10000
    rng = random.Random(5)
    for kind in SPELLINGS:
        spellings = near_spellings(kind, rng, 2500)
        server.run("DELETE FROM spelled")
        server.run("COPY spelled FROM STDIN", stdin="".join(
            "%s\t%d\t%s\n" % (kind, i, s.replace("\\", "\\\\").replace("\t", "\\t")
                                .replace("\n", "\\n"))
            for i, s in enumerate(spellings)).encode("utf-8"))
        accepted = {int(i): a == "t" for i, a in server.rows(
            "SELECT id, accepts(s, '%s') FROM spelled" % SQL_TYPES[kind])}
        hex_value = server.run(
            "SELECT encode(bloom_agg(s::{t})::bytea, 'hex') FROM spelled "
            "WHERE accepts(s, '{t}')".format(t=SQL_TYPES[kind])).strip()
        f = bloomfilter.Filter.from_bytes(bytes.fromhex(hex_value))
        wrong = []
        client_refused = 0
        changed = 0
        for i, s in enumerate(spellings):
            try:
                found = f.contains_str(s)
                client_accepts = True
            except bloomfilter.KeySyntaxError:
                client_accepts = False
                client_refused += 1
            if kind == "number" and server_major >= 16 and \
                    numeric_in_changed(s, accepted[i], client_accepts):
                changed += 1
                continue
            if kind in SAME_SYNTAX and client_accepts != accepted[i] or \
                    client_accepts and not accepted[i] or \
                    client_accepts and accepted[i] and not found:
                wrong.append("%r: server %s, client %s" % (
                    s, "accepts" if accepted[i] else "refuses",
                    ("finds it" if found else "misses it") if client_accepts else "refuses"))
        n_accepted = sum(accepted.values())
        check("%s: %d spellings near the valid ones (%d accepted by the server, %d refused by "
              "the client): the client %s, and finds every value the server added"
              % (kind, len(spellings), n_accepted, client_refused,
                 ("accepts exactly what the server's input function accepts"
                  + (" but for %d spellings PostgreSQL 16 changed" % changed if changed else ""))
                 if kind in SAME_SYNTAX else "accepts nothing the server refuses"),
              not wrong, "\n".join(wrong[:10]))


# ---------------------------------------------------------------------------
# Damaged values

def client_verdict_bytes(value):
    try:
        bloomfilter.Filter.from_bytes(value)
        return "ok"
    except bloomfilter.InvalidFilterError as e:
        return str(e)


def client_verdict_text(value):
    try:
        bloomfilter.Filter.from_text(value)
        return "ok"
    except bloomfilter.InvalidFilterError as e:
        return str(e)


def same_verdict(server_verdict, client_verdict):
    """The server's "ok" or "SQLSTATE detail" against the client's "ok" or message."""
    if server_verdict == "ok" or client_verdict == "ok":
        return server_verdict == client_verdict
    sqlstate, _, detail = server_verdict.partition(" ")
    return sqlstate in ("22P02", "22P03") and client_verdict.endswith(detail)


def test_damaged(server, work):
    server.run("""
        CREATE FUNCTION try_bytea(h text) RETURNS text LANGUAGE plpgsql AS $$
        DECLARE detail text;
        BEGIN
            PERFORM decode(h, 'hex')::bloom;
            RETURN 'ok';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            RETURN SQLSTATE || ' ' || detail;
        END $$;
        CREATE FUNCTION try_text(t text) RETURNS text LANGUAGE plpgsql AS $$
        DECLARE detail text;
        BEGIN
            PERFORM t::bloom;
            RETURN 'ok';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            RETURN SQLSTATE || ' ' || detail;
        END $$;
        CREATE TABLE damaged (id int, value text);""")

    # the fuzz corpus: through the CLI and the module
    corpus = os.path.join(REPO, "test", "fuzz", "corpus", "validate")
    names = sorted(os.listdir(corpus))
    values = [open(os.path.join(corpus, n), "rb").read() for n in names]
    server.run("COPY damaged FROM STDIN", stdin="".join(
        "%d\t%s\n" % (i, v.hex()) for i, v in enumerate(values)).encode())
    verdicts = dict((int(i), v) for i, v in server.rows(
        "SELECT id, try_bytea(value) FROM damaged ORDER BY id"))
    bad = []
    for i, (name, value) in enumerate(zip(names, values)):
        client = client_verdict_bytes(value)
        run = cli("info", os.path.join(corpus, name), expect=None)
        cli_ok = run.returncode == 0
        if not same_verdict(verdicts[i], client) or cli_ok != (verdicts[i] == "ok") or \
                (not cli_ok and run.returncode != 1):
            bad.append("%s: server %s, client %s, CLI exit %d" % (
                name, verdicts[i], client, run.returncode))
    check("fuzz corpus (%d values, %d valid): the library and the CLI accept and refuse "
          "exactly what the server's bytea cast does, for the same reason"
          % (len(names), sum(1 for v in verdicts.values() if v == "ok")), not bad, "\n".join(bad))

    # mutants of valid filters of several kinds
    bases = [bytes.fromhex(h) for (h,) in server.rows("""
        SELECT encode(f::bytea, 'hex') FROM (
            SELECT bloom_agg(s::numeric) FROM (SELECT s FROM keys WHERE kind = 'number' LIMIT 300) k
            UNION ALL SELECT bloom_agg(s) FROM (SELECT s FROM keys WHERE kind = 'text' LIMIT 100) k
            UNION ALL SELECT bloom_empty(10)
            UNION ALL SELECT bloom_empty(10, 0.01, 2)
            UNION ALL SELECT bloom_add_all(bloom_empty(20, 0.01, 3), ARRAY(SELECT generate_series(1, 300)))
            UNION ALL SELECT bloom_agg(jsonb_build_object('a', i)) FROM generate_series(1, 50) i
            UNION ALL SELECT bloom_agg(int4range(i, i + 2)) FROM generate_series(1, 50) i
            UNION ALL SELECT f FROM v1_number) s(f)""")]
    rng = random.Random(42)
    mutants = []
    for base in bases:
        for n in range(400):
            value = bytearray(base)
            choice = n % 8
            if choice == 0:
                position = rng.randrange(56)
                value[position] ^= 1 << rng.randrange(8)
            elif choice == 1:
                value[rng.randrange(56)] = rng.randrange(256)
            elif choice == 2:
                value = value[:rng.randrange(len(value))]
            elif choice == 3:
                value += bytes(rng.randrange(256) for _ in range(rng.choice([1, 63, 64, 128])))
            elif choice == 4:
                value[56 + rng.randrange(len(value) - 56)] ^= 0xFF
            else:
                # a header field changed and the checksum made right again,
                # so that the checks behind the checksum are reached
                position = rng.choice([2, 3, 4, 5, 6, 7, 8, 12, 13, 15, 24, 31, 32, 39, 40, 47, 52, 55])
                value[position] = rng.choice([0, 1, 2, 3, 10, 11, 32, 33, 64, 127, 128, 255,
                                              rng.randrange(256)])
                value = bytearray.fromhex(forge_checksum(work, bytes(value).hex()))
            mutants.append(bytes(value))
    server.run("TRUNCATE damaged")
    server.run("COPY damaged FROM STDIN", stdin="".join(
        "%d\t%s\n" % (i, v.hex()) for i, v in enumerate(mutants)).encode())
    verdicts = dict((int(i), v) for i, v in server.rows("SELECT id, try_bytea(value) FROM damaged"))
    bad = ["%s...: server %s, client %s" % (m[:60].hex(), verdicts[i], client_verdict_bytes(m))
           for i, m in enumerate(mutants) if not same_verdict(verdicts[i], client_verdict_bytes(m))]
    reasons = set(v for v in verdicts.values())
    check("%d mutants of %d filters (%d accepted, %d distinct reasons): the library accepts and "
          "refuses exactly what the server does, for the same reason"
          % (len(mutants), len(bases), sum(1 for v in verdicts.values() if v == "ok"), len(reasons)),
          not bad, "\n".join(bad))

    # damaged text forms, base64 quirks included
    texts = []
    for base in bases:
        text = "bloom:" + server.run("SELECT encode(decode('%s', 'hex'), 'base64')" % base.hex()) \
            .replace("\n", "").strip()
        texts.append(text)
        for n in range(150):
            t = text
            choice = n % 10
            position = rng.randrange(6, len(t) + 1)
            if choice == 0:
                t = t[:position] + rng.choice([" ", "\t", "\n", "\r"]) + t[position:]
            elif choice == 1:
                t = t[:position] + rng.choice(["-", "_", "!", "é", "\x7f", "*", "~"]) + t[position + 1:]
            elif choice == 2:
                t = t[:position] + t[position + 1:]
            elif choice == 3:
                t = t[:position] + "=" + t[position + 1:]
            elif choice == 4:
                t = t + rng.choice(["AAAA", "====", "=", "AA==", "AAA=", "A===", "QQ==QQ=="])
            elif choice == 5:
                t = rng.choice(["BLOOM:", "bloom", "bloom: ", "", " bloom:", "bloom::"]) + t[6:]
            elif choice == 6:
                t = t[:position]
            elif choice == 7:
                # padding inside: later groups then yield fewer bytes
                group = rng.randrange(1, max(2, (len(t) - 6) // 4))
                at = 6 + 4 * group
                t = t[:at - 2] + rng.choice(["==", "A=", "=A"]) + t[at:]
            elif choice == 8:
                t = t.rstrip("=") + rng.choice(["", "=", "==", "==="])
            else:
                t = t[:position] + rng.choice("ABab+/09") + t[position + 1:]
            texts.append(t)
    server.run("TRUNCATE damaged")
    server.run("COPY damaged FROM STDIN", stdin="".join(
        "%d\t%s\n" % (i, t.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
                      .replace("\r", "\\r")) for i, t in enumerate(texts)).encode())
    verdicts = dict((int(i), v) for i, v in server.rows("SELECT id, try_text(value) FROM damaged"))
    bad = ["%r: server %s, client %s" % (t[:70], verdicts[i], client_verdict_text(t))
           for i, t in enumerate(texts) if not same_verdict(verdicts[i], client_verdict_text(t))]
    check("%d text forms, damaged and quirky (%d accepted): the library's text input accepts and "
          "refuses exactly what bloom_in does, for the same reason"
          % (len(texts), sum(1 for v in verdicts.values() if v == "ok")), not bad, "\n".join(bad))


def forge_checksum(work, hex_value):
    out = subprocess.run([os.path.join(work, "rechecksum")], input=("1\t%s\n" % hex_value).encode(),
                         capture_output=True, check=True).stdout.decode()
    return out.split("\t")[1].strip()


# ---------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--psql", required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--keys", type=int, default=100000)
    args = parser.parse_args()
    server = Server(args.psql, args.host, args.port)

    server.file(os.path.join(HERE, "keys.sql"), variables=[("n", args.keys)])
    load_hash_bits(server)
    by_kind = {}
    for kind, i, present, hex_value in server.rows(
            "SELECT kind, id, present, encode(convert_to(s, 'UTF8'), 'hex') FROM keys "
            "ORDER BY kind, id"):
        by_kind.setdefault(kind, []).append((int(i), present == "t",
                                             bytes.fromhex(hex_value).decode("utf-8")))
    work = args.work
    for kind in SQL_TYPES:
        try:
            test_kind(server, work, kind, by_kind[kind])
        except Exception as e:  # a stage that stops is one failure, with its reason
            check("%s: the comparison ran to its end" % kind, False, repr(e))
    for stage in (lambda: test_chains(server, work, by_kind),
                  lambda: test_version_1(server, work, by_kind),
                  lambda: test_latin1(server, work),
                  lambda: test_damaged(server, work),
                  lambda: test_syntax(server)):
        try:
            stage()
        except Exception as e:
            check("a stage ran to its end", False, repr(e))
    print("# exact.py: %d passed, %d failed" % (passed, failed))


if __name__ == "__main__":
    main()
