"""test/live/live_test.py: copies that follow a bloomfilter index, end to end,
against a server with the extension's 1.1 functions (started by run.sh).

Checks, one "ok - ..." / "not ok - ..." line each:
  - LiveFilter's first sync is the index's snapshot, byte for byte;
  - rounds of inserts from another session, the index growing segments:
    after every sync each committed key is found (0 misses), the copy is
    the index's filter byte for byte, and a delta costs at most 16 bytes a
    key over its header;
  - writers inserting while three copies follow (LiveFilter synced by
    hand, LiveFilter refreshing in the background, bloomfilter-cli sync
    into a file): every key committed before a sync's upto (known by the
    WAL position read after its commit) is in the copy, 0 misses;
  - REINDEX and REINDEX CONCURRENTLY make the next sync a reload;
  - Filter.apply_changes by hand: a damaged delta and another filter's are
    refused with the copy unchanged, the index's makes the copy its bytes;
  - write-through: a key committed and add()ed while a reload's snapshot
    is in flight (taken before the commit) survives the reload;
  - the staleness bound: with the server stopped, probes answer True for
    absent keys once max_staleness has passed, a background refresh
    records its failures, and after a restart the guard resumes by itself
    (connection function), and the CLI's follower reconnects;
  - saying when the guard is off: one WARNING record (logger
    "bloomfilter") when it turns off after DROP INDEX ("the index was
    dropped") and after a dead connection (a connection function that
    raises), whatever the failed rounds and probes, one INFO when it is
    back; on_state_change called once per change, its exceptions logged;
    stats() counting syncs, errors and every answer forced to True;
  - construction errors: refresh_interval >= max_staleness, a DSN string,
    a database without the extension ("CREATE EXTENSION bloomfilter") and
    one of version 1.0 ("ALTER EXTENSION bloomfilter UPDATE");
  - bloomfilter-cli sync: --count, the file always whole while replaced,
    no temporary file left, an unknown index is status 1.
"""
import argparse
import logging
import os
import subprocess
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--host", required=True)
parser.add_argument("--port", required=True)
parser.add_argument("--repo", required=True)
parser.add_argument("--work", required=True)
parser.add_argument("--stop", required=True, help="script that stops the server")
parser.add_argument("--start", required=True, help="script that starts it again")
args = parser.parse_args()

sys.path.insert(0, os.path.join(args.repo, "python"))
import bloomfilter  # noqa: E402
import psycopg  # noqa: E402

DSN = "host=%s port=%s user=postgres dbname=live" % (args.host, args.port)
CLI = os.path.join(args.repo, "client", "bloomfilter-cli")
INDEX = "users_guard"
failures = 0


def check(ok, what):
    global failures
    print("%s - %s" % ("ok" if ok else "not ok", what), flush=True)
    if not ok:
        failures += 1


def note(text):
    print("# " + text, flush=True)


def connect():
    return psycopg.connect(DSN)


def lsn_value(text):
    high, low = text.split("/")
    return int(high, 16) << 32 | int(low, 16)


class Table:
    """The indexed table as the tests know it: every key committed, with
    the WAL position read after its commit (its commit record lies below)."""

    def __init__(self):
        self.conn = psycopg.connect(DSN, autocommit=True)
        self.lock = threading.Lock()
        self.keys = []          # (position after commit, key)
        self.next_key = 1

    def insert(self, count, conn=None):
        conn = conn or self.conn
        with self.lock:
            first = self.next_key
            self.next_key += count
        # spread out, so that keys are no run of integers
        keys = [k * 7 + 3 for k in range(first, first + count)]
        if keys:
            with conn.cursor() as cursor:
                cursor.execute("INSERT INTO users SELECT unnest(%s::bigint[])", (keys,))
                cursor.execute("SELECT pg_current_wal_lsn()::text")
                after = lsn_value(cursor.fetchone()[0])
            with self.lock:
                self.keys.extend((after, k) for k in keys)
        return keys

    def committed_before(self, upto):
        limit = lsn_value(upto)
        with self.lock:
            return [k for at, k in self.keys if at <= limit]

    def all_keys(self):
        with self.lock:
            return [k for _, k in self.keys]

    def server_filter(self):
        return bytes(self.conn.execute(
            "SELECT bloom_index_filter(%s)::bytea", (INDEX,)).fetchone()[0])

    def absent_key(self, copy):
        """A key not in the table that the copy answers absent for."""
        key = -1
        while copy.contains(key):
            key -= 1
        return key


def bits_of(value):
    """A bloom value's segments as (blocks, k, bits), and their counts, read
    from the format in bloom.h: layout 2 chains its segments after the
    header; layout 1 is one segment."""
    if value[3] != 2:
        return [(None, value[4], value[56:])], [int.from_bytes(value[40:48], "little")]
    segments, counts, at = [], [], 56
    while at < len(value):
        blocks = int.from_bytes(value[at:at + 4], "little")
        segments.append((blocks, value[at + 4], value[at + 16:at + 16 + 64 * blocks]))
        counts.append(int.from_bytes(value[at + 8:at + 16], "little"))
        at += 16 + 64 * blocks
    return segments, counts


def same_bits(copy, index):
    """Whether a copy has the index's segments and bits, and no smaller
    count: deltas read while keys are being added may repeat an entry,
    which sets no new bit but counts again (exact equality holds when the
    index was quiet, as test_rounds checks)."""
    copy_segments, copy_counts = bits_of(copy)
    index_segments, index_counts = bits_of(index)
    return copy_segments == index_segments and len(copy) == len(index) and \
        all(c >= i for c, i in zip(copy_counts, index_counts))


def misses(copy, keys):
    return sum(1 for found in copy.contains_many(keys) if not found)


def setup(table):
    with table.conn.cursor() as cursor:
        cursor.execute("CREATE TABLE users (id bigint PRIMARY KEY)")
        cursor.execute("CREATE INDEX users_guard ON users USING bloomfilter (id) "
                       "WITH (capacity = 5000)")
    table.insert(3000)


def test_rounds(table):
    guard = bloomfilter.LiveFilter(connect, INDEX, max_staleness=30)
    check(guard.lsn is not None and guard.timeline is not None and
          guard.to_filter().to_bytes() == table.server_filter() and
          misses(guard, table.all_keys()) == 0,
          "LiveFilter: the first sync is the index's snapshot, byte for byte, every key found")
    total_misses = 0
    equal = True
    cheap = True
    deltas = True
    rounds = 0
    added = 0
    for batch in [1, 0, 17, 500, 2, 3000, 0, 8000, 40, 1, 12000, 5]:
        keys = table.insert(batch)
        added += len(keys)
        result = guard.sync()
        rounds += 1
        deltas = deltas and not result.reload
        cheap = cheap and result.bytes <= 48 + 16 * len(keys)
        total_misses += misses(guard, table.all_keys())
        equal = equal and guard.to_filter().to_bytes() == table.server_filter()
    segments = guard.to_filter().info()["segments"]
    check(deltas and total_misses == 0,
          "LiveFilter: %d syncs after %d inserted keys, all deltas, 0 misses of every committed key"
          % (rounds, added))
    check(equal and segments >= 3,
          "LiveFilter: after each sync the copy is the index's filter byte for byte "
          "(grown with it to %d segments)" % segments)
    check(cheap, "LiveFilter: each delta is at most 48 + 16 bytes per key inserted")
    guard.close()


def test_concurrent(table, cli_file):
    stop = threading.Event()
    errors = []

    def write():
        conn = psycopg.connect(DSN, autocommit=True)
        n = 0
        try:
            while not stop.is_set():
                table.insert(1 if n % 3 else 20, conn)
                n += 1
        except Exception as error:
            errors.append(error)
        finally:
            conn.close()

    by_hand = bloomfilter.LiveFilter(connect, INDEX, max_staleness=30)
    background = bloomfilter.LiveFilter(connect, INDEX, max_staleness=30, refresh_interval=0.1)
    cli = subprocess.Popen([CLI, "sync", DSN, INDEX, cli_file, "--interval", "0.2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cli_lines = []
    cli_misses = [0]
    cli_checked = [0]

    def follow_cli():
        for line in cli.stdout:
            parts = line.split()
            cli_lines.append(parts)
            if len(parts) == 4 and parts[0] == "synced":
                with open(cli_file, "rb") as f:
                    copy = bloomfilter.Filter.load(f.read())
                cli_misses[0] += misses(copy, table.committed_before(parts[1]))
                cli_checked[0] += 1

    follower = threading.Thread(target=follow_cli, daemon=True)
    follower.start()
    writers = [threading.Thread(target=write, daemon=True) for _ in range(3)]
    for w in writers:
        w.start()

    total = 0
    syncs = 0
    started = time.monotonic()
    background_misses = 0
    while time.monotonic() - started < 8:
        result = by_hand.sync()
        syncs += 1
        total += misses(by_hand, table.committed_before(result.lsn))
        lsn = background.lsn
        background_misses += misses(background, table.committed_before(lsn))
        time.sleep(0.05)
    stop.set()
    for w in writers:
        w.join()
    check(not errors, "concurrent: three writers inserted without error (%s)" % (errors[:1],))
    check(syncs >= 50 and total == 0,
          "concurrent: %d syncs by hand while 3 writers insert, %d keys: 0 misses of keys "
          "committed before each sync's upto" % (syncs, len(table.all_keys())))
    check(background_misses == 0,
          "concurrent: LiveFilter refreshing in the background: 0 misses at each position it reached")

    final = table.conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (
            background.lsn is None or lsn_value(background.lsn) < lsn_value(final)):
        time.sleep(0.05)
    check(misses(background, table.all_keys()) == 0 and background.last_error is None,
          "concurrent: the background refresh catches up with the last insert, every key found")
    background.close()
    check(background._thread is None and not any(
        t.name.startswith("bloomfilter.LiveFilter") and t.is_alive()
        for t in threading.enumerate()),
        "concurrent: close() stops the refresh thread")

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(
            len(p) == 4 and lsn_value(p[1]) >= lsn_value(final) for p in cli_lines):
        time.sleep(0.05)
    cli.terminate()
    cli.wait()
    follower.join(timeout=5)
    synced = [p for p in cli_lines if len(p) == 4 and p[0] == "synced"]
    check(cli_checked[0] >= 20 and cli_misses[0] == 0,
          "concurrent: bloomfilter-cli sync, %d syncs: 0 misses in its file of keys committed "
          "before each line's upto" % cli_checked[0])
    check(synced and synced[0][2] == "reload" and all(p[2] == "delta" for p in synced[1:]),
          "concurrent: the CLI's first sync is a reload, every later one a delta")
    with open(cli_file, "rb") as f:
        copy = bloomfilter.Filter.load(f.read())
    check(misses(copy, table.all_keys()) == 0,
          "concurrent: the CLI's file holds every key once it passed the last insert")
    by_hand.sync()
    check(same_bits(by_hand.to_filter().to_bytes(), table.server_filter()),
          "concurrent: quiet again, the copy synced by hand has the index's segments and bits, "
          "byte for byte")
    by_hand.close()


def test_reindex(table):
    guard = bloomfilter.LiveFilter(connect, INDEX, max_staleness=30)
    ok = True
    for statement in ["REINDEX INDEX users_guard", "REINDEX INDEX CONCURRENTLY users_guard"]:
        table.conn.execute(statement)
        table.insert(10)
        result = guard.sync()
        ok = ok and result.reload and guard.to_filter().to_bytes() == table.server_filter() and \
            misses(guard, table.all_keys()) == 0
        result = guard.sync()
        ok = ok and not result.reload
    check(ok, "REINDEX and REINDEX CONCURRENTLY: the next sync reloads, the one after is a "
          "delta again, every key found")
    guard.close()


class PausingConnection:
    """A DB-API connection that runs a hook once, right after a snapshot
    was fetched and before LiveFilter installs it."""

    def __init__(self, conn, hook):
        self.conn = conn
        self.hook = hook

    def cursor(self):
        return PausingCursor(self, self.conn.cursor())

    def rollback(self):
        self.conn.rollback()

    def close(self):
        self.conn.close()


class PausingCursor:
    def __init__(self, owner, cursor):
        self.owner = owner
        self.cursor = cursor
        self.snapshot = False

    def execute(self, sql, *rest):
        self.snapshot = "bloom_index_snapshot" in sql
        return self.cursor.execute(sql, *rest)

    def fetchone(self):
        row = self.cursor.fetchone()
        if self.snapshot and self.owner.hook is not None:
            hook, self.owner.hook = self.owner.hook, None
            hook()
        return row

    def close(self):
        self.cursor.close()


def test_write_through(table):
    guard = bloomfilter.LiveFilter(lambda: PausingConnection(connect(), None),
                                   INDEX, max_staleness=30)
    table.conn.execute("REINDEX INDEX users_guard")
    copy = guard.to_filter()
    late = []

    def commit_and_add():
        key = -1000000
        while copy.contains(key):
            key -= 1
        table.conn.execute("INSERT INTO users VALUES (%s)", (key,))
        with table.lock:
            table.keys.append((0, key))
        guard.add(key)
        late.append(key)

    # the connection exists already: give it the hook
    guard._conn.hook = commit_and_add
    result = guard.sync()
    key = late[0]
    check(result.reload and not guard.to_filter().contains(key) and guard.contains(key),
          "write-through: a key committed and added while a reload's snapshot was in flight "
          "is missing from that snapshot, and still found")
    check(guard.contains_many([key, 1 * 7 + 3]) == [True, True],
          "write-through: ... by contains_many too")
    guard.sync()
    check(guard.to_filter().contains(key) and guard.contains(key) and not guard._written,
          "write-through: the next sync brings it in the copy, and the written key is let go")
    try:
        guard.add("a text key")
        wrong_kind = False
    except bloomfilter.KindError:
        wrong_kind = True
    check(wrong_kind, "write-through: a key of another kind than the index's is a KindError")
    guard.close()


class StandbyConnection(PausingConnection):
    """A connection whose server says it is a standby (pg_is_in_recovery()
    answers true): a standby's position may be behind the primary's
    commits, which the written keys must outlast."""

    def cursor(self):
        return StandbyCursor(self, self.conn.cursor())


class StandbyCursor(PausingCursor):
    def execute(self, sql, *rest):
        return super().execute(sql.replace("pg_is_in_recovery()", "true"), *rest)


def absent_key(guard, start):
    key = start
    while guard.to_filter().contains(key):
        key -= 1
    return key


def test_write_through_positions(table):
    """Written keys stand in for commits the copy may not hold yet: keys
    that were never committed show how long each is kept."""
    guard = bloomfilter.LiveFilter(lambda: StandbyConnection(connect(), None),
                                   INDEX, max_staleness=30)
    unknown = absent_key(guard, -3000000)
    guard.add(unknown)
    far = absent_key(guard, unknown - 1)
    guard.add(far, "FFFFFFFF/0")
    near = absent_key(guard, far - 1)
    guard.add(near, guard.lsn)
    guard.sync()
    guard.sync()
    check(guard.contains(unknown) and guard.contains(far) and not guard.contains(near),
          "write-through from a standby: a key added without its commit's position stays "
          "after syncs, one with a position ahead stays, one the copy has passed goes")
    guard.close()
    guard = bloomfilter.LiveFilter(connect(), INDEX, max_staleness=30)
    far = absent_key(guard, -4000000)
    guard.add(far, "FFFFFFFF/0")
    plain = absent_key(guard, far - 1)
    guard.add(plain)
    guard.sync()
    check(guard.contains(far) and not guard.contains(plain),
          "write-through from a primary: a key with a position ahead stays; one without goes "
          "at the next sync, as its commit came before that sync began")
    try:
        guard.add(1, "not a position")
        refused = False
    except bloomfilter.BloomFilterError:
        refused = True
    check(refused, "write-through: a position that is not one is refused")
    guard.close()


def test_apply_changes(table):
    """Filter.apply_changes by hand, as LiveFilter uses it."""
    conn = table.conn
    lsn, data, timeline, build = conn.execute(
        "SELECT lsn::text, filter::bytea, timeline, build::text FROM bloom_index_snapshot(%s)",
        (INDEX,)).fetchone()
    copy = bloomfilter.Filter.from_bytes(bytes(data))
    keys = table.insert(100)
    upto, reload, delta = conn.execute(
        "SELECT upto::text, reload, delta FROM bloom_index_changes(%s, %s::pg_lsn, %s, %s::pg_lsn)",
        (INDEX, lsn, timeline, build)).fetchone()
    delta = bytes(delta)
    before = copy.to_bytes()
    damaged = bytearray(delta)
    damaged[-1] ^= 1
    try:
        copy.apply_changes(bytes(damaged))
        refused = False
    except bloomfilter.InvalidFilterError:
        refused = True
    check(refused and copy.to_bytes() == before,
          "Filter.apply_changes: a damaged delta raises InvalidFilterError, the copy unchanged")
    other = bloomfilter.Filter.empty("number", 1000, 0.01)
    other.add(1)
    other_bytes = other.to_bytes()
    try:
        other.apply_changes(delta)
        mismatch = False
    except bloomfilter.DeltaMismatchError:
        mismatch = True
    check(mismatch and other.to_bytes() == other_bytes,
          "Filter.apply_changes: another filter's delta raises DeltaMismatchError, unchanged")
    copy.apply_changes(delta)
    # a chain logs no key it held already (a false positive): at most 856 bytes
    check(not reload and len(delta) <= 48 + 8 + 8 * len(keys) and misses(copy, keys) == 0 and
          copy.to_bytes() == table.server_filter(),
          "Filter.apply_changes: a delta of 100 keys (%d bytes) makes the snapshot the index's "
          "filter again" % len(delta))


class Records(logging.Handler):
    """The bloomfilter logger's records about one index's guards."""

    def __init__(self, index):
        super().__init__(logging.DEBUG)
        self.tag = "bloomfilter.LiveFilter(%s)" % index
        self.records = []
        logger = logging.getLogger("bloomfilter")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self)

    def emit(self, record):
        if self.tag in record.getMessage():
            self.records.append(record)

    def at(self, level):
        return [r.getMessage() for r in self.records if r.levelno == level]

    def close(self):
        logging.getLogger("bloomfilter").removeHandler(self)
        super().close()


def fail_for(guard, seconds):
    """Syncs by hand, each failing, and probes, for a while: the guard's
    state changes once however many rounds fail."""
    failures = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            guard.sync()
        except Exception:
            failures += 1
        guard.contains(-1)
        guard.contains_many([-1, -2])
        time.sleep(0.05)
    return failures


def test_dropped_index(table):
    table.conn.execute("CREATE TABLE gone (id bigint)")
    table.conn.execute("INSERT INTO gone SELECT generate_series(1, 100)")
    table.conn.execute("CREATE INDEX gone_guard ON gone USING bloomfilter (id)")
    records = Records("gone_guard")
    changes = []
    guard = bloomfilter.LiveFilter(connect, "gone_guard", max_staleness=0.5,
                                   on_state_change=lambda state, why: changes.append((state, why)))
    absent = table.absent_key(guard.to_filter())
    table.conn.execute("DROP INDEX gone_guard")
    failures = fail_for(guard, 1.0)
    warnings = records.at(logging.WARNING)
    check(failures >= 10 and len(warnings) == 1 and "the index was dropped" in warnings[0] and
          guard.contains(absent),
          "observing: after DROP INDEX, %d failed syncs and the probes between them log one "
          "WARNING, which says the index was dropped: %s" % (failures, warnings))
    check(len(records.at(logging.DEBUG)) == failures,
          "observing: each failed sync is a DEBUG record")
    table.conn.execute("CREATE INDEX gone_guard ON gone USING bloomfilter (id)")
    guard.sync()
    guard.sync()
    infos = records.at(logging.INFO)
    check(len(infos) == 2 and not guard.contains(absent),
          "observing: a new index of that name: the next sync turns the guard on, one INFO "
          "record (and one at the first sync)")
    check([state for state, _ in changes] == ["fresh", "stale", "fresh"] and
          "the index was dropped" in changes[1][1],
          "observing: on_state_change is called once per change: %s" % [s for s, _ in changes])
    guard.close()
    records.close()


def test_dead_connection(table):
    records = Records(INDEX)
    refused = threading.Event()

    def connect_unless_refused():
        if refused.is_set():
            raise psycopg.OperationalError("connection refused (the test's)")
        return psycopg.connect(DSN + " application_name=observed")

    guard = bloomfilter.LiveFilter(connect_unless_refused, INDEX, max_staleness=0.6,
                                   refresh_interval=0.1)
    refused.set()
    table.conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE application_name = 'observed'")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not records.at(logging.WARNING):
        time.sleep(0.05)
    time.sleep(0.5)
    warnings = records.at(logging.WARNING)
    stats = guard.stats()
    check(len(warnings) == 1 and "a sync failed" in warnings[0] and stats["errors"] >= 5 and
          not stats["fresh"],
          "observing: a dead database (connection terminated, reconnects refused): one WARNING "
          "over %d failed rounds of the background refresh: %s" % (stats["errors"], warnings))
    refused.clear()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(records.at(logging.INFO)) < 2:
        time.sleep(0.05)
    time.sleep(0.3)
    check(len(records.at(logging.INFO)) == 2 and guard.stats()["fresh"] and
          len(records.at(logging.WARNING)) == 1,
          "observing: connections accepted again, the background refresh turns the guard on, "
          "one INFO record")
    guard.close()
    records.close()


def test_stats(table):
    records = Records(INDEX)
    guard = bloomfilter.LiveFilter(connect, INDEX, max_staleness=0.3)
    keys = table.insert(10)
    guard.sync()
    absent = table.absent_key(guard.to_filter())
    fresh = [guard.contains(absent), guard.contains_many([absent, keys[0]])]
    stats = guard.stats()
    check(fresh == [False, [False, True]] and stats["forced_maybes"] == 0 and
          stats["syncs"] == 2 and stats["reloads"] == 1 and stats["errors"] == 0 and
          stats["bytes_fetched"] > len(guard.to_filter().to_bytes()) and stats["fresh"] and
          0 <= stats["staleness"] < 0.3,
          "stats(): two syncs (a reload, a delta), their bytes, no answer forced while fresh: %s"
          % stats)
    time.sleep(0.35)
    answers = [guard.contains(absent), guard.contains(absent), guard.contains_many([absent] * 5)]
    stats = guard.stats()
    check(answers == [True, True, [True] * 5] and stats["forced_maybes"] == 7 and
          not stats["fresh"] and stats["staleness"] > 0.3,
          "stats(): stale, 2 probes and a batch of 5 are 7 answers forced to True")
    warnings = records.at(logging.WARNING)
    check(len(warnings) == 1 and "the copy went stale past max_staleness" in warnings[0],
          "observing: no sync failing, a copy older than max_staleness logs one WARNING "
          "saying so: %s" % warnings)

    def broken(state, reason):
        raise RuntimeError("the callback's own bug")

    records.records.clear()
    guard.close()
    guard = bloomfilter.LiveFilter(connect, INDEX, max_staleness=30, on_state_change=broken)
    errors = records.at(logging.ERROR)
    check(guard.sync() is not None and len(errors) == 1 and "on_state_change raised" in errors[0],
          "observing: an on_state_change that raises is logged as an ERROR, the syncs go on")
    guard.close()
    records.close()


def raises(expected, words, call):
    try:
        call()
    except expected as error:
        return all(word in str(error) for word in words), error
    except Exception as error:
        return False, error
    return False, None


def test_construction(table):
    ok, error = raises(ValueError, ["refresh_interval", "max_staleness"],
                       lambda: bloomfilter.LiveFilter(connect, INDEX, max_staleness=1.0,
                                                      refresh_interval=1.0))
    check(ok, "construction: refresh_interval >= max_staleness is a ValueError saying why (%s)"
          % error)
    ok, error = raises(TypeError, ["lambda: psycopg.connect(dsn)"],
                       lambda: bloomfilter.LiveFilter(DSN, INDEX))
    check(ok, "construction: a DSN string is a TypeError saying what to pass (%s)" % error)
    for database, version, words in [("noext", None, "CREATE EXTENSION bloomfilter"),
                                     ("oldext", "1.0", "ALTER EXTENSION bloomfilter UPDATE")]:
        table.conn.execute("CREATE DATABASE %s" % database)
        dsn = "host=%s port=%s user=postgres dbname=%s" % (args.host, args.port, database)
        if version is not None:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION bloomfilter VERSION '%s'" % version)
        for how, conn in [("a connection", lambda: psycopg.connect(dsn)),
                          ("a connection function", lambda: (lambda: psycopg.connect(dsn)))]:
            ok, error = raises(bloomfilter.ExtensionError, [words],
                               lambda: bloomfilter.LiveFilter(conn(), INDEX))
            cause = getattr(error, "__cause__", None)
            check(ok and getattr(cause, "sqlstate", None) == "42883",
                  "construction: a database %s, through %s: ExtensionError saying %s, the "
                  "server's error as its cause (%s)"
                  % ("without the extension" if version is None else "of extension 1.0", how,
                     words, error))


def run_script(path):
    return subprocess.run(["bash", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True).returncode == 0


def test_staleness(table, cli_file):
    guard = bloomfilter.LiveFilter(connect, INDEX, max_staleness=1.0)
    background = bloomfilter.LiveFilter(connect, INDEX, max_staleness=1.0, refresh_interval=0.2)
    cli = subprocess.Popen([CLI, "sync", DSN, INDEX, cli_file, "--interval", "0.2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    threading.Thread(target=lambda: [lines.append(l) for l in cli.stdout], daemon=True).start()
    absent = table.absent_key(guard.to_filter())
    absent2 = absent - 1
    while guard.to_filter().contains(absent2) or absent2 == absent:
        absent2 -= 1
    check(not guard.contains(absent) and guard.contains_many([absent, absent2]) == [False, False],
          "staleness: fresh, an absent key is absent")

    check(run_script(args.stop), "staleness: the server stops")
    stopped = time.monotonic()
    lsn = guard.lsn
    try:
        guard.sync()
        failed = False
    except Exception:
        failed = True
    check(failed and guard.lsn == lsn and guard.to_filter() is not None,
          "staleness: a sync with the server down fails, and the copy stays as it was")
    while time.monotonic() - stopped < 1.3:
        time.sleep(0.1)
    check(guard.staleness > 1.0 and guard.contains(absent) and
          guard.contains_many([absent, absent2]) == [True, True],
          "staleness: past max_staleness, contains and contains_many answer True for absent keys")
    check(background.contains(absent) and background.last_error is not None,
          "staleness: the background refresh records its failure, and its guard is off too")
    lines_before = len(lines)

    check(run_script(args.start), "staleness: the server starts again")
    table.conn = psycopg.connect(DSN, autocommit=True)
    result = guard.sync()
    check(result is not None and not guard.contains(absent) and guard.staleness < 1.0,
          "staleness: after the restart a sync succeeds (a new connection) and the guard resumes")
    keys = table.insert(50)
    # a sync that began after the keys committed: the second line from now
    lines_at_insert = len(lines)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (background.last_error is not None or
                                           background.contains(absent) or
                                           misses(background, keys) != 0):
        time.sleep(0.1)
    check(background.last_error is None and not background.contains(absent) and
          misses(background, keys) == 0,
          "staleness: the background refresh resumes by itself, new keys found")
    while time.monotonic() < deadline and len(lines) <= max(lines_before, lines_at_insert) + 1:
        time.sleep(0.1)
    cli.terminate()
    _, err = cli.communicate()
    check(len(lines) > lines_before + 1 and "sync:" in err and cli.returncode != 1,
          "staleness: bloomfilter-cli sync reported the outage on stderr and synced again "
          "after the restart")
    with open(cli_file, "rb") as f:
        copy = bloomfilter.Filter.load(f.read())
    check(misses(copy, keys) == 0, "staleness: the CLI's file has the keys inserted after the restart")
    guard.close()
    background.close()


def test_cli(table):
    path = os.path.join(args.work, "count.bloom")
    run = subprocess.run([CLI, "sync", DSN, INDEX, path, "--interval", "0.05", "--count", "3"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    lines = run.stdout.splitlines()
    check(run.returncode == 0 and len(lines) == 3 and
          all(l.startswith("synced ") for l in lines),
          "CLI: --count 3 prints three synced lines and exits 0")
    check(sorted(os.listdir(args.work)) == sorted(
        n for n in os.listdir(args.work) if ".bloom." not in n),
        "CLI: no temporary file is left beside FILE")
    with open(path, "rb") as f:
        data = f.read()
    check(data == table.server_filter(), "CLI: FILE holds the index's filter in binary form")

    text_path = os.path.join(args.work, "count.txt")
    run = subprocess.run([CLI, "sync", DSN, INDEX, text_path, "--count", "1", "--format", "text"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    with open(text_path) as f:
        text = f.read()
    check(run.returncode == 0 and text.startswith("bloom:") and
          bloomfilter.Filter.load(text).to_bytes() == table.server_filter(),
          "CLI: --format text writes the text form")
    mode = os.stat(text_path).st_mode & 0o777
    check(mode == 0o666 & ~current_umask(), "CLI: FILE gets the usual mode (0666 less the umask)")

    # a round that waits (here for a lock on the table) dates FILE by its
    # start, when the copy was at least that recent, not by its end:
    # readers bound their staleness by FILE's modification time
    slow_path = os.path.join(args.work, "slow.bloom")
    locker = psycopg.connect(DSN)
    locker.execute("LOCK TABLE users IN ACCESS EXCLUSIVE MODE")
    releaser = threading.Timer(1.5, locker.commit)
    started = time.time()
    releaser.start()
    run = subprocess.run([CLI, "sync", DSN, INDEX, slow_path, "--count", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    ended = time.time()
    releaser.join()
    locker.close()
    mtime = os.stat(slow_path).st_mtime if os.path.exists(slow_path) else 0
    check(run.returncode == 0 and ended - started >= 1.4 and
          started - 0.5 <= mtime <= started + 0.5,
          "CLI: FILE's modification time is its round's start (%.2f s after the call), not "
          "the end of a round that waited %.2f s for a lock" % (mtime - started, ended - started))

    # read the file over and over while it is replaced 20 times a second
    reads = [0, 0]
    stop = threading.Event()
    cli = subprocess.Popen([CLI, "sync", DSN, INDEX, path, "--interval", "0.02"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def read_loop():
        while not stop.is_set():
            try:
                with open(path, "rb") as f:
                    bloomfilter.Filter.load(f.read())
                reads[0] += 1
            except Exception:
                reads[1] += 1

    reader = threading.Thread(target=read_loop)
    reader.start()
    for _ in range(20):
        table.insert(5)
        time.sleep(0.05)
    stop.set()
    reader.join()
    cli.terminate()
    cli.wait()
    check(reads[0] > 50 and reads[1] == 0,
          "CLI: %d reads while the file was replaced every 20 ms, each a whole filter" % reads[0])

    run = subprocess.run([CLI, "sync", DSN, "no_such_index", path, "--count", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    check(run.returncode == 1 and "no_such_index" in run.stderr and "not retrying" in run.stderr,
          "CLI: an unknown index is status 1, not retried")
    run = subprocess.run([CLI, "sync", DSN, INDEX], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    check(run.returncode == 2, "CLI: sync without FILE is a usage error")


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main():
    admin = psycopg.connect("host=%s port=%s user=postgres dbname=postgres" % (args.host, args.port),
                            autocommit=True)
    admin.execute("CREATE DATABASE live")
    admin.close()
    setup_conn = psycopg.connect(DSN, autocommit=True)
    setup_conn.execute("CREATE EXTENSION bloomfilter")
    setup_conn.close()
    table = Table()
    setup(table)
    cli_file = os.path.join(args.work, "users.bloom")
    test_rounds(table)
    test_concurrent(table, cli_file)
    test_reindex(table)
    test_apply_changes(table)
    test_write_through(table)
    test_write_through_positions(table)
    test_dropped_index(table)
    test_dead_connection(table)
    test_stats(table)
    test_construction(table)
    test_staleness(table, cli_file)
    test_cli(table)
    return 1 if failures else 0


sys.exit(main())
