"""test/sync/follow.py: one client that follows a bloomfilter index, checked
after every sync against what the table says it must hold.

    python3 follow.py live  PRIMARY_DSN INDEX SECONDS [FOLLOW_DSN]
    python3 follow.py cli   PRIMARY_DSN FILE SECONDS    (reads the CLI's lines on stdin)

Writers insert a key into `keys` and then, in a transaction of its own that
starts after the key's has committed, the key and the WAL position then
current into `commits`: the key's commit ended before that position.  So
every key whose `commits` position is at or before a sync's `upto` was
committed before `upto`, and the copy must hold it.  After each sync the
keys whose positions fall in (previous upto, upto] are checked: a copy only
ever gains keys (a reload takes a snapshot that holds every key committed
before its position), so a key checked once stays checked.  Keys that
committed before `upto` but wrote their position after it are checked at a
later sync.

`live` syncs a bloomfilter.LiveFilter (from FOLLOW_DSN, a standby, if given)
as fast as it can; `cli` follows `bloomfilter-cli sync` through the lines it
prints and the file it replaces.  Connections are made anew after a failure
(the primary is stopped and restarted during the run).  Prints "# ..." lines
and, last, "syncs N reloads N checked N misses N errors N".
"""

import sys
import time

import psycopg

import bloomfilter


def lsn_value(text):
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


class Checker:
    """The keys whose positions a copy must cover, fetched from the primary."""

    def __init__(self, dsn):
        self.dsn = dsn
        self.conn = None
        self.checked_upto = "0/0"
        self.checked = 0
        self.misses = 0

    def _keys_between(self, low, high):
        if self.conn is None:
            self.conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=5)
        with self.conn.cursor() as cur:
            cur.execute("SELECT id FROM commits WHERE lsn > %s::pg_lsn AND lsn <= %s::pg_lsn",
                        (low, high))
            return [row[0] for row in cur.fetchall()]

    def check(self, copy, upto):
        """Checks copy (a bloomfilter.Filter) against the keys up to upto;
        False if the primary could not be asked (checked at the next sync)."""
        if lsn_value(upto) <= lsn_value(self.checked_upto):
            return True
        try:
            keys = self._keys_between(self.checked_upto, upto)
        except psycopg.Error:
            self.conn = None
            return False
        answers = copy.contains_many(keys)
        missing = [k for k, present in zip(keys, answers) if not present]
        if missing:
            print("# MISS: %d of %d keys committed before %s are absent, e.g. %s"
                  % (len(missing), len(keys), upto, missing[:5]), flush=True)
        self.misses += len(missing)
        self.checked += len(keys)
        self.checked_upto = upto
        return True


def follow_live(primary, index, seconds, follow):
    checker = Checker(primary)
    dsn = follow or primary
    guard = bloomfilter.LiveFilter(
        lambda: psycopg.connect(dsn, connect_timeout=5), index,
        max_staleness=3600, initial_sync=False)
    syncs = reloads = errors = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            result = guard.sync()
        except (psycopg.Error, OSError) as error:
            errors += 1
            if errors % 20 == 1:
                print("# sync failed (retrying): %s" % str(error).strip().splitlines()[0],
                      flush=True)
            time.sleep(0.2)
            continue
        syncs += 1
        reloads += bool(result.reload)
        # the copy itself, not the staleness-guarded answers
        checker.check(guard.to_filter(), guard.lsn)
        time.sleep(0.01)
    guard.close()
    return syncs, reloads, checker, errors


def follow_cli(primary, path, seconds):
    checker = Checker(primary)
    syncs = reloads = errors = 0
    end = time.monotonic() + seconds
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 4 or parts[0] != "synced":
            continue
        syncs += 1
        reloads += parts[2] == "reload"
        # the file may be a later sync's already: a copy only gains keys
        with open(path, "rb") as f:
            copy = bloomfilter.Filter.from_bytes(f.read())
        if not checker.check(copy, parts[1]):
            errors += 1
        if time.monotonic() > end:
            break
    return syncs, reloads, checker, errors


def main():
    mode = sys.argv[1]
    if mode == "live":
        primary, index, seconds = sys.argv[2], sys.argv[3], float(sys.argv[4])
        follow = sys.argv[5] if len(sys.argv) > 5 else None
        syncs, reloads, checker, errors = follow_live(primary, index, seconds, follow)
    elif mode == "cli":
        primary, path, seconds = sys.argv[2], sys.argv[3], float(sys.argv[4])
        syncs, reloads, checker, errors = follow_cli(primary, path, seconds)
    else:
        sys.exit("usage: follow.py live|cli ...")
    print("syncs %d reloads %d checked %d misses %d errors %d"
          % (syncs, reloads, checker.checked, checker.misses, errors), flush=True)


if __name__ == "__main__":
    main()
