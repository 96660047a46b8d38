"""Bloom filters of the bloomfilter PostgreSQL extension, in Python.

Load a filter the database built once, then answer "could this key be
there?" locally, with exactly the server's answers (its false positives
included), without a round trip per key::

    import bloomfilter

    row = conn.execute("SELECT f::bytea FROM filters WHERE name = 'users'").fetchone()
    users = bloomfilter.Filter.from_bytes(row[0])

    def find_user(user_id):
        # A cache guard: a key the filter does not hold is certainly not in
        # the table, so the query is skipped.  A "maybe" still asks.
        if not users.contains(user_id):
            return None
        return conn.execute("SELECT * FROM users WHERE id = %s", (user_id,)).fetchone()

To follow a ``bloomfilter`` index as rows arrive, without reloading its
filter, :class:`LiveFilter` keeps a copy current from the index's changes
and answers "maybe" for every key once its copy is older than a bound::

    guard = bloomfilter.LiveFilter(psycopg.connect(dsn), "users_id_guard",
                                   max_staleness=2.0, refresh_interval=0.5)
    if not guard.contains(user_id):     # False only for keys certainly absent
        return None

Filters built here load into the server (``%s::bytea::bloom``, or the text
form ``to_text()`` as a ``bloom`` literal) and combine there with filters
of the same parameters (``bloom_empty(capacity, fpr)``'s, or
``bloom_empty(capacity, fpr, growth)``'s for a filter that grows: a chain
of segments, each ``growth`` times larger than the one before).

Keys map to the server's key kinds by their Python type: ``int`` and
``decimal.Decimal`` to number (``42`` finds ``42::bigint`` and
``42.0::numeric``), ``float`` to float, ``str`` to text (trailing blanks
ignored, as the server does), ``bytes`` to bytea, ``uuid.UUID`` to uuid,
``bool`` to boolean, ``datetime.date`` to date, a naive
``datetime.datetime`` to timestamp and an aware one to timestamptz.  A key
of another kind than the filter's raises :class:`KindError`, as the server
raises an error: a silent "absent" would be a false negative.

The module is this file over a compiled module, ``_bloomfilter``, built
from the extension's own C sources (the client library and the core) by
``pip install ./python`` or, in the source tree, ``make client``.
"""

import collections as _collections
import logging as _logging
import re as _re
import threading as _threading
import time as _time

try:
    import _bloomfilter as _c
except ImportError as _missing:
    raise ImportError(
        "bloomfilter: the compiled module _bloomfilter is missing or cannot load (%s); "
        "install the package with `pip install ./python`, or build it beside "
        "bloomfilter.py with `make client` in the source tree" % (_missing,)) from _missing

# What this file expects of the compiled module (its BFPY_INTERFACE): a
# module built from other sources, such as a stale in-place build, is refused.
_INTERFACE = 1
if getattr(_c, "INTERFACE", None) != _INTERFACE:
    raise ImportError(
        "bloomfilter: the compiled module %s is stale (interface %s, this bloomfilter.py "
        "needs %d); rebuild it with `make client` in the source tree, or reinstall "
        "with `pip install ./python`" % (getattr(_c, "__file__", "_bloomfilter"),
                                         getattr(_c, "INTERFACE", "none"), _INTERFACE))

__all__ = [
    "Filter", "LiveFilter", "SyncResult", "BloomFilterError", "InvalidFilterError",
    "KindError", "UnsupportedKeyError", "KeySyntaxError", "IncompatibleFiltersError",
    "DeltaMismatchError", "ExtensionError", "KINDS",
]

#: The key kinds, by bloom_info's names, with their stored numbers.
KINDS = {
    "none": 0, "number": 1, "float": 2, "text": 3, "bytea": 4, "uuid": 5,
    "boolean": 6, "date": 7, "timestamp": 8, "timestamptz": 9, "other": 10,
}
_KIND_NAMES = {number: name for name, number in KINDS.items()}

_INT64_MAX = (1 << 63) - 1

class BloomFilterError(Exception):
    """An error of the client library; ``code`` is its bfc_code."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class InvalidFilterError(BloomFilterError, ValueError):
    """Bytes or text that are not a valid bloom value (the server refuses them too)."""


class KindError(BloomFilterError, TypeError):
    """A key of another kind than the filter holds."""


class UnsupportedKeyError(BloomFilterError):
    """A key the client cannot hash for this filter: kind "other", or a
    non-ASCII text key for a version 1 filter of an unknown encoding."""


class KeySyntaxError(BloomFilterError, ValueError):
    """A key that is not a value of its kind (a decimal.Decimal sNaN, say)."""


class IncompatibleFiltersError(BloomFilterError, ValueError):
    """A union of filters with different parameters or kinds."""


class DeltaMismatchError(BloomFilterError, ValueError):
    """A delta of another filter than the copy it was applied to (another
    build of the index after a REINDEX, or another index): load a new
    snapshot."""


_ERRORS = {
    1: InvalidFilterError, 2: KindError, 3: UnsupportedKeyError,
    4: KeySyntaxError, 5: ValueError, 6: ValueError,
    7: IncompatibleFiltersError, 8: MemoryError, 9: DeltaMismatchError,
}
_c.set_error_classes(_ERRORS)

# The forms _bloomfilter.Filter._from_form reads.
_FORM_BYTES, _FORM_TEXT, _FORM_ANY = 0, 1, 2


class Filter(_c.Filter):
    """A bloom filter, as the server's ``bloom`` type holds it.

    Build one with :meth:`from_bytes`, :meth:`from_text`, :meth:`load` or
    :meth:`empty`.  Probing is safe from several threads at once; adding,
    :meth:`update` and :meth:`apply_changes` are not (:class:`LiveFilter`
    serialises them for you).

    The probes and adds (``contains``, ``in``, ``contains_many``, ``add``,
    ...) are the compiled module's methods themselves.
    """

    __slots__ = ()

    # ---- construction -------------------------------------------------

    @classmethod
    def from_bytes(cls, data, *, v1_utf8=False):
        """The binary form (``SELECT f::bytea``), validated as the server's
        ``bytea::bloom`` cast validates it.

        ``v1_utf8``: for a version 1 filter, that the database it was built
        in had the UTF8 encoding (its non-ASCII text keys are refused
        otherwise).  Raises :class:`InvalidFilterError`."""
        return cls._wrap(cls._from_form(_FORM_BYTES, bytes(data)), v1_utf8)

    @classmethod
    def from_text(cls, text, *, v1_utf8=False):
        """The text form (``bloom:`` and base64, as ``SELECT f`` returns
        it), validated as the server's text input validates it."""
        if isinstance(text, str):
            text = text.encode("utf-8")
        return cls._wrap(cls._from_form(_FORM_TEXT, text), v1_utf8)

    @classmethod
    def load(cls, data, *, v1_utf8=False):
        """Any form: binary, text, or hex (``\\x...``, psql's way of
        printing a bytea), told apart by how it starts."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        return cls._wrap(cls._from_form(_FORM_ANY, bytes(data)), v1_utf8)

    @classmethod
    def empty(cls, kind, capacity, fpr=0.01, growth=0):
        """A new filter for ``capacity`` keys at false-positive rate
        ``fpr``, sized exactly as ``bloom_empty(capacity, fpr, growth)``
        sizes it (so the two can be unioned).  ``kind`` is the kind of its
        keys: "number", "float", "text", "bytea", "uuid", "boolean", "date",
        "timestamp", "timestamptz", or None for whatever comes first.

        ``growth`` 0 makes a filter of fixed size; 2 to 16, one that grows
        as keys come: once ``capacity`` keys are in, it adds a segment
        ``growth`` times larger, and so on, keeping its false-positive rate
        below ``fpr``."""
        number = 0 if kind is None else KINDS.get(kind)
        if number is None or number == KINDS["other"]:
            raise ValueError("unknown key kind %r; one of %s" % (
                kind, ", ".join(k for k in KINDS if k not in ("none", "other"))))
        if not isinstance(capacity, int) or capacity < 1 or capacity > _INT64_MAX:
            raise ValueError("capacity must be an integer from 1 to 2^63 - 1")
        if not isinstance(growth, int) or isinstance(growth, bool) or \
                not (growth == 0 or 2 <= growth <= 16):
            raise ValueError("growth must be 0 (a filter of fixed size) or an integer "
                             "from 2 to 16")
        return cls._create(number, capacity, float(fpr), growth)

    @classmethod
    def _wrap(cls, result, v1_utf8):
        if v1_utf8:
            result._set_v1_utf8(True)
        return result

    # ---- combining ------------------------------------------------------

    def union(self, other):
        """A new filter holding the keys of both, as the server's
        ``self | other``: both need the same capacity, rate, growth, format
        version and kind (filters from ``bloom_empty(capacity, fpr,
        growth)`` and ``Filter.empty(kind, capacity, fpr, growth)`` with
        equal arguments do).  Growing filters may differ in how far they
        grew."""
        result = self.copy()
        result.update(other)
        return result

    __or__ = union
    __ior__ = _c.Filter.update
    __bytes__ = _c.Filter.to_bytes

    # ---- inspecting -----------------------------------------------------

    @property
    def kind(self):
        """The kind of the filter's keys ("number", ...), or "none"."""
        return _KIND_NAMES.get(self._kind_number(), "unknown")

    def __eq__(self, other):
        if not isinstance(other, Filter):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    __hash__ = None

    def __repr__(self):
        info = self.info()
        return "<bloomfilter.Filter %s, capacity %d, fpr %g, %d bytes>" % (
            info["key_kind"], info["capacity"], info["target_fpr"], info["bytes"])


# ---- following an index ----------------------------------------------------

#: What :meth:`LiveFilter.sync` did: the position the copy is now consistent
#: with, whether it loaded a whole snapshot, and the bytes it fetched.
SyncResult = _collections.namedtuple("SyncResult", ["lsn", "reload", "bytes"])

_log = _logging.getLogger("bloomfilter")

_LSN = _re.compile(r"^[0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8}$")


def _first_line(error):
    """An error's message without the server's LINE/HINT lines, for a log line."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _sql_literal(text):
    """``text`` as an E'' string literal, whatever standard_conforming_strings
    says: the index name is spliced into the query, so that no paramstyle
    (which differs between DB-API drivers) is needed."""
    return "E'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _checked_lsn(value, function):
    """A position as the server returned it (pg_lsn as text), checked: it
    goes back into the next query's text."""
    text = None if value is None else str(value)
    if text is None or not _LSN.match(text):
        raise BloomFilterError("%s returned no position: %r" % (function, value))
    return text


def _lsn_number(text):
    """A checked position ("16/B374D848") as a number, to compare."""
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


def _timeline_of(value):
    """A timeline as the server returned it (bigint, or NULL), checked: it
    goes back into the next query's text."""
    if value is None:
        return None
    timeline = int(value)
    if timeline < 0 or timeline > _INT64_MAX:
        raise BloomFilterError("the server returned no timeline: %r" % (value,))
    return timeline


class ExtensionError(BloomFilterError):
    """The database a :class:`LiveFilter` syncs from lacks the extension's
    functions for following an index: no ``bloomfilter`` extension, one
    older than 1.1, or one outside the connection's search_path.  The
    message says which, and what to run; ``__cause__`` is the driver's
    error."""


def _sqlstate(error):
    """The SQLSTATE of a driver's error, where the driver tells it:
    psycopg 3 (``sqlstate``), psycopg2 (``pgcode``), pg8000 (the server's
    fields in ``args[0]``); None for any other error."""
    for attribute in ("sqlstate", "pgcode"):
        code = getattr(error, attribute, None)
        if isinstance(code, str):
            return code
    fields = error.args[0] if error.args else None
    return fields.get("C") if isinstance(fields, dict) else None


_UNDEFINED_FUNCTION = "42883"
_UNDEFINED_TABLE = "42P01"

#: The extension version that has bloom_index_snapshot and bloom_index_changes.
_FOLLOWING_VERSION = (1, 1)


def _version_tuple(text):
    return tuple(int(part) for part in _re.findall(r"\d+", text))


def _positive_seconds(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


class LiveFilter:
    """A copy of a ``bloomfilter`` index's filter kept current from the
    index's changes, with a bound on how stale its answers may be.

    ``conn`` is any DB-API connection (psycopg 3, psycopg2, pg8000, ...) to
    the database or a standby of it, for this object alone: each sync ends
    its transaction (``rollback()``), so it must not share one with the
    application's work.  Or it is a function of no arguments that returns
    such a connection (``lambda: psycopg.connect(dsn)``): then a sync that
    fails closes the connection and the next one connects anew, so that
    the guard resumes after a restart or a failover by itself; a plain
    connection that broke stays broken.  ``index`` names the index
    (``"users_id_guard"``, or schema-qualified).

    The first :meth:`sync` loads the index's snapshot
    (``bloom_index_snapshot``); each later one fetches only what the index
    took since (``bloom_index_changes``), about 8 bytes a key, and loads a
    snapshot again when the server says so (the index was rebuilt by
    REINDEX, TRUNCATE or VACUUM FULL, the copy is of another build of it,
    older than the index keeps changes for, or a failover came since: each
    sync passes the copy's timeline and build).  A sync is applied whole or not at all: one that
    fails leaves the previous copy.

    Staleness bound: once the last successful sync started more than
    ``max_staleness`` seconds ago, :meth:`contains` and
    :meth:`contains_many` answer True ("maybe") for every key until a sync
    succeeds.  A stalled connection, a failover or a dead database turns the
    guard off; it never turns a key committed more than ``max_staleness``
    seconds before a probe into a "definitely absent".

    ``refresh_interval`` (seconds): sync in a background daemon thread that
    often (below ``max_staleness``, a ValueError otherwise; a quarter of
    it, say); its failures are kept in
    :attr:`last_error`, and the next round tries again.  Without it, call
    :meth:`sync` yourself.  :meth:`close` (or leaving a ``with`` block)
    stops the thread; a connection given stays open, as it is the
    caller's.

    Write-through: :meth:`add` a key your application has just committed,
    and this instance finds it at once, before the index's changes bring it
    (it is kept apart from the copy until a sync that started after the add
    has completed, so a snapshot loaded meanwhile cannot lose it).  From a
    standby, whose position may be behind the primary's commit, pass the
    commit's position, ``add(key, lsn)``: the key is then kept until the
    copy's position reaches it (a key added without one is kept as long as
    the copy follows a standby).

    Saying when it is off: the guard's state is "fresh" (answers from the
    copy) or "stale" (every answer forced to True).  Each change is logged
    once on the ``bloomfilter`` logger, a WARNING when it turns stale with
    the reason (a sync failed, with the error; the index was dropped; the
    copy went stale with no sync failing, a sync hanging), an INFO when it
    is fresh again, and passed to ``on_state_change(state, reason)`` if
    given (what it raises is logged, never stops a sync).  Each failed
    sync is a DEBUG record.  :meth:`stats` counts syncs, errors and the
    answers forced to True.

    Thread-safe: probes, adds and syncs may come from any threads.  The
    first sync runs in the constructor (``initial_sync=False`` starts with
    the guard off, answering True until a sync succeeds).  A database
    without the extension's functions (none, or older than 1.1) is an
    :class:`ExtensionError` saying what to run.
    """

    def __init__(self, conn, index, max_staleness=2.0, refresh_interval=None, *,
                 initial_sync=True, on_state_change=None):
        self._check_timing(max_staleness, refresh_interval)
        if on_state_change is not None and not callable(on_state_change):
            raise TypeError("on_state_change must be a function of (state, reason), or None")
        self._connect, self._conn = self._connection_of(conn)
        self._on_state_change = on_state_change
        self._index = str(index)
        self._name = "bloomfilter.LiveFilter(%s)" % self._index
        self.max_staleness = float(max_staleness)
        self.refresh_interval = refresh_interval
        self._lock = _threading.Lock()      # the copy, the written keys, the times
        self._sync_lock = _threading.Lock()   # one sync at a time on the connection
        self._filter = None
        self._lsn = None
        self._timeline = None
        self._build = None                  # the build of the index the copy is of
        self._synced_at = None              # time.monotonic() when it started
        self._last_sync = None              # time.time() likewise
        self._written = []                  # (time.monotonic(), key, lsn) of add()
        self._standby = False               # the last sync's server was in recovery
        self._side = None                   # a Filter of the written keys
        self._side_room = 0
        self.last_error = None
        self._counts = _collections.Counter()   # stats(): syncs, reloads, errors, bytes
        self._forced_maybes = 0             # answers forced to True, counted under _lock
        self._state = None                  # as last reported: None (no sync tried), "fresh", "stale"
        self._state_lock = _threading.RLock()   # reports in order; a callback may ask stats()
        self._stop = _threading.Event()
        self._thread = None
        if initial_sync:
            self.sync()
        if refresh_interval is not None:
            self._thread = _threading.Thread(
                target=self._refresh_loop, name="bloomfilter.LiveFilter(%s)" % self._index,
                daemon=True)
            self._thread.start()

    @staticmethod
    def _check_timing(max_staleness, refresh_interval):
        if not _positive_seconds(max_staleness):
            raise ValueError("max_staleness must be a positive number of seconds")
        if refresh_interval is None:
            return
        if not _positive_seconds(refresh_interval):
            raise ValueError("refresh_interval must be a positive number of seconds or None")
        if refresh_interval >= max_staleness:
            raise ValueError(
                "refresh_interval (%g s) must be below max_staleness (%g s): the copy would go "
                "stale before each sync, and the guard answer True for every key between syncs; "
                "a quarter of max_staleness leaves room for a slow or failed sync"
                % (refresh_interval, max_staleness))

    @staticmethod
    def _connection_of(conn):
        """(connection function, connection): one of them None."""
        if isinstance(conn, (str, bytes)):
            raise TypeError(
                "LiveFilter takes a connection, not a connection string: pass a DB-API "
                "connection, or better a function returning one, e.g. "
                "lambda: psycopg.connect(dsn), so that the guard reconnects by itself")
        if hasattr(conn, "cursor"):
            return None, conn
        if callable(conn):
            return conn, None
        raise TypeError("LiveFilter takes a DB-API connection (with cursor()) or a function "
                        "returning one, not %s" % type(conn).__name__)

    # ---- syncing ------------------------------------------------------------

    def _query(self, sql):
        if self._conn is None:
            self._conn = self._connect()
        cursor = self._conn.cursor()
        try:
            cursor.execute(sql)
            return cursor.fetchone()
        finally:
            cursor.close()

    def _end_transaction(self):
        try:
            if self._conn is not None:
                self._conn.rollback()
        except Exception:
            pass

    def _drop_connection(self):
        """After a failed sync, when there is a way to connect anew: the
        connection may be dead (a restart, a failover)."""
        if self._connect is None or self._conn is None:
            return
        try:
            self._conn.close()
        except Exception:
            pass
        self._conn = None

    def _fetch_snapshot(self):
        row = self._query("SELECT lsn::text, filter::bytea, timeline, build::text, "
                          "pg_is_in_recovery() "
                          "FROM bloom_index_snapshot(%s)" % _sql_literal(self._index))
        data = bytes(row[1])
        build = None if row[3] is None else _checked_lsn(row[3], "bloom_index_snapshot")
        return (_checked_lsn(row[0], "bloom_index_snapshot"), Filter.from_bytes(data), len(data),
                _timeline_of(row[2]), build, bool(row[4]))

    def sync(self):
        """Brings the copy up to date: a snapshot when there is none or the
        server says to reload, else the changes since the copy's position.
        Returns a :class:`SyncResult`; raises what the driver raises, or
        :class:`ExtensionError` for a database without the functions (the
        copy and its age are then unchanged).  Runs in the caller's thread,
        one sync at a time."""
        with self._sync_lock:
            started = _time.monotonic()
            started_wall = _time.time()
            with self._lock:
                lsn = self._lsn
                timeline = self._timeline
                build = self._build
                have = self._filter is not None
            try:
                reload = True
                fetched = 0
                if have:
                    # the copy's timeline and build: a failover or another
                    # build of the index (REINDEX CONCURRENTLY) says reload
                    row = self._query(
                        "SELECT upto::text, reload, delta, timeline, pg_is_in_recovery() "
                        "FROM bloom_index_changes(%s, '%s', %s, %s::pg_lsn)"
                        % (_sql_literal(self._index), lsn,
                           "NULL" if timeline is None else "%d" % timeline,
                           "NULL" if build is None else "'%s'" % build))
                    upto = _checked_lsn(row[0], "bloom_index_changes")
                    reload, delta = bool(row[1]), row[2]
                    standby = bool(row[4])
                    if not reload:
                        delta = bytes(delta)
                        fetched = len(delta)
                        with self._lock:
                            try:
                                self._filter.apply_changes(delta)
                                self._lsn = upto
                                self._timeline = _timeline_of(row[3])
                            except (DeltaMismatchError, InvalidFilterError) as refused:
                                # another build of the index (a REINDEX that
                                # swapped it in), or worse: a new snapshot
                                # mends either
                                if not isinstance(refused, DeltaMismatchError):
                                    _log.warning("bloomfilter.LiveFilter(%s): delta refused, "
                                                 "loading a snapshot: %s", self._index, refused)
                                reload = True
                if reload:
                    upto, copy, size, timeline, build, standby = self._fetch_snapshot()
                    fetched += size
                    with self._lock:
                        self._filter = copy
                        self._lsn = upto
                        self._timeline = timeline
                        self._build = build
            except BaseException as error:
                self._end_transaction()
                explained = self._explained(error)
                self._drop_connection()
                if isinstance(error, Exception):
                    self._sync_failed(explained)
                if explained is error:
                    raise
                raise explained from error
            self._end_transaction()
            with self._lock:
                self._synced_at = started
                self._last_sync = started_wall
                self._standby = standby
                self._forget_written(started)
                result = SyncResult(self._lsn, reload, fetched)
                self._count_sync(result)
            self.last_error = None
            self._report_state()
            return result

    def _explained(self, error):
        """What a failed sync raises: the driver's error, but for functions
        the server lacks (SQLSTATE 42883: no extension, or one too old) an
        ExtensionError that says what to run."""
        if not isinstance(error, Exception) or _sqlstate(error) != _UNDEFINED_FUNCTION:
            return error
        return ExtensionError(self._missing_functions_advice())

    def _missing_functions_advice(self):
        """Why the server has no bloom_index_snapshot, from pg_extension."""
        try:
            row = self._query("SELECT e.extversion, n.nspname FROM pg_extension e "
                              "JOIN pg_namespace n ON n.oid = e.extnamespace "
                              "WHERE e.extname = 'bloomfilter'")
        except Exception:
            return ("the server has no bloom_index_snapshot(regclass) for LiveFilter: run "
                    "CREATE EXTENSION bloomfilter in the database, or ALTER EXTENSION "
                    "bloomfilter UPDATE if it is older than 1.1")
        finally:
            self._end_transaction()
        if row is None:
            return ("the database has no bloomfilter extension, which LiveFilter follows the "
                    "index through: run CREATE EXTENSION bloomfilter in it")
        version, schema = str(row[0]), str(row[1])
        if _version_tuple(version) < _FOLLOWING_VERSION:
            return ("the database's bloomfilter extension is version %s, and LiveFilter needs "
                    "1.1 or later (bloom_index_snapshot, bloom_index_changes): run ALTER "
                    "EXTENSION bloomfilter UPDATE" % version)
        return ("the bloomfilter extension is in schema %s, which is not on the connection's "
                "search_path: add it there (ALTER ROLE ... SET search_path)" % schema)

    def _count_sync(self, result):
        """Counts a successful sync for stats(); under _lock."""
        self._counts["syncs"] += 1
        self._counts["reloads"] += result.reload
        self._counts["bytes_fetched"] += result.bytes

    def _sync_failed(self, error):
        self.last_error = error
        with self._lock:
            self._counts["errors"] += 1
        _log.debug("%s: sync failed: %s", self._name, _first_line(error))
        self._report_state()

    def _refresh_loop(self):
        wait = 0 if self._synced_at is None else self.refresh_interval
        while not self._stop.wait(wait):
            try:
                self.sync()
            except Exception as error:   # the guard turns off; the next round retries
                self.last_error = error
            wait = self.refresh_interval

    def close(self):
        """Stops the background refresh, if any (waiting for a sync under
        way, at most a few seconds).  A connection given stays open; one
        this object made through a connection function is closed."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not _threading.current_thread():
            thread.join(timeout=max(5.0, 2 * (self.refresh_interval or 0)))
        self._thread = None
        # a sync stuck in a dead connection keeps it: the process's exit ends both
        if self._connect is not None and self._sync_lock.acquire(timeout=5.0):
            try:
                if self._conn is not None:
                    try:
                        self._conn.close()
                    except Exception:
                        pass
                    self._conn = None
            finally:
                self._sync_lock.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- write-through ------------------------------------------------------

    def _rebuild_side(self, room):
        """The written keys in a filter of their own, of the copy's kind (so
        that they hash and compare as the copy's keys do), with room."""
        side = Filter.empty(self._filter.kind, room, 0.001)
        kept = []
        for entry in self._written:
            try:
                side.add(entry[1])
            except (BloomFilterError, TypeError):
                continue        # added before the first sync, of another kind: never there
            kept.append(entry)
        self._written = kept
        self._side = side
        self._side_room = room

    def _still_written(self, entry, started):
        """Whether a written key may still be missing from the copy, after a
        sync that started at started.  With the commit's position: until the
        copy's reaches it.  Without: until a sync that started after the add
        has completed, as the key committed before that sync began; but a
        standby's position may be behind the primary's commit, so a copy
        that follows one keeps such keys."""
        at, _key, lsn = entry
        if lsn is not None:
            return _lsn_number(self._lsn) < lsn
        return self._standby or at >= started

    def _forget_written(self, started):
        """Drops the keys the copy now holds (_still_written)."""
        self._written = [entry for entry in self._written
                         if self._still_written(entry, started)]
        if self._written:
            self._rebuild_side(max(1024, 2 * len(self._written)))
        else:
            self._side = None
            self._side_room = 0

    def add(self, key, lsn=None):
        """Write-through: a key this application has just committed to the
        indexed table is found from now on, before a sync brings it.
        ``lsn``, the commit's WAL position as text (``SELECT
        pg_current_wal_lsn()`` on the committing connection, after the
        commit), keeps the key until the copy's position reaches it, which a
        copy that follows a standby needs.  Raises :class:`KindError` for a
        key of another kind than the index's."""
        entry = (_time.monotonic(), key,
                 None if lsn is None else _lsn_number(_checked_lsn(lsn, "add")))
        with self._lock:
            if self._filter is None:
                self._written.append(entry)     # the guard is off until a sync
                return
            if self._side is None or len(self._written) >= self._side_room:
                self._rebuild_side(max(1024, 4 * (len(self._written) + 1)))
            self._side.add(key)
            self._written.append(entry)

    # ---- probing ------------------------------------------------------------

    def _guard_off(self):
        return self._synced_at is None or \
            _time.monotonic() - self._synced_at > self.max_staleness

    def _noticed_off(self):
        """A probe found the guard off: the first to see it reports it."""
        if self._state != "stale":
            self._report_state()

    def contains(self, key):
        """False only if ``key`` is certainly not in the index: the copy
        lacks it, no write-through added it, and the copy is fresh (its last
        successful sync started at most ``max_staleness`` seconds ago);
        True otherwise."""
        # the probe path, kept short: it runs once per request
        lock = self._lock
        lock.acquire()
        try:
            synced_at = self._synced_at
            if synced_at is not None and _time.monotonic() - synced_at <= self.max_staleness:
                if self._filter._call(key, True) == 1:
                    return True
                side = self._side
                return side is not None and side._call(key, True) == 1
            self._forced_maybes += 1
        finally:
            lock.release()
        self._noticed_off()
        return True

    __contains__ = contains

    def contains_many(self, keys):
        """``[self.contains(k) for k in keys]``, in one call into the library
        for keys of one type (see :meth:`Filter.contains_many`)."""
        keys = keys if isinstance(keys, (list, tuple)) else list(keys)
        with self._lock:
            off = self._guard_off()
            if off:
                self._forced_maybes += len(keys)
            else:
                found = self._filter._probe_many(keys)
                if self._side is not None and keys:
                    # either filter's "maybe", OR-ed a machine word at a time
                    either = int.from_bytes(found, "little") | \
                        int.from_bytes(self._side._probe_many(keys), "little")
                    found = either.to_bytes(len(found), "little")
        if off:
            self._noticed_off()
            return [True] * len(keys)
        return list(map(bool, found))

    # ---- state ----------------------------------------------------------------

    @property
    def lsn(self):
        """The WAL position (``'0/1A2B3C4D'``) the copy is consistent with:
        every key committed before it is in; None before the first sync."""
        with self._lock:
            return self._lsn

    @property
    def timeline(self):
        """The timeline of :attr:`lsn` (a failover starts a new one, and the
        next sync then loads a snapshot); None before the first sync."""
        with self._lock:
            return self._timeline

    @property
    def last_sync(self):
        """When the last successful sync started (``time.time()``), or
        None."""
        with self._lock:
            return self._last_sync

    @property
    def staleness(self):
        """Seconds since the last successful sync started (how old the
        copy's view of the index may be), or None before the first; past
        ``max_staleness`` every probe answers True."""
        with self._lock:
            if self._synced_at is None:
                return None
            return _time.monotonic() - self._synced_at

    def stats(self):
        """Counters since construction, to export to a monitor: ``syncs``
        (successful), ``reloads`` (those that loaded a snapshot),
        ``errors`` (failed syncs), ``forced_maybes`` (answers forced to True
        by a stale or missing copy), ``bytes_fetched``, ``staleness`` (as
        :attr:`staleness`) and ``fresh`` (whether the guard is on)."""
        self._report_state()    # a monitor polling this sees a change as it comes
        with self._lock:
            staleness = None if self._synced_at is None else _time.monotonic() - self._synced_at
            return {
                "syncs": self._counts["syncs"],
                "reloads": self._counts["reloads"],
                "errors": self._counts["errors"],
                "forced_maybes": self._forced_maybes,
                "bytes_fetched": self._counts["bytes_fetched"],
                "staleness": staleness,
                "fresh": staleness is not None and staleness <= self.max_staleness,
            }

    # ---- saying when the guard is off ----------------------------------------

    def _current_state(self):
        """("fresh" or "stale", why), or (None, None) before any sync was
        tried: the guard starts off, which is no news."""
        with self._lock:
            synced_at = self._synced_at
            lsn = self._lsn
        error = self.last_error
        if synced_at is not None and _time.monotonic() - synced_at <= self.max_staleness:
            return "fresh", "a sync succeeded, the copy is at %s" % lsn
        if synced_at is None and error is None:
            return None, None
        return "stale", self._stale_reason(synced_at, error)

    def _stale_reason(self, synced_at, error):
        if synced_at is None:
            age = "no sync has succeeded"
        else:
            age = "no sync succeeded for %.1f s, max_staleness %g s" % (
                _time.monotonic() - synced_at, self.max_staleness)
        if error is not None and _sqlstate(error) == _UNDEFINED_TABLE:
            gone = "the index does not exist" if synced_at is None else "the index was dropped"
            return "%s (%s): %s; the guard resumes if an index of that name is created" % (
                gone, _first_line(error), age)
        if error is not None:
            return "a sync failed (%s: %s): %s" % (type(error).__name__, _first_line(error), age)
        return "the copy went stale past max_staleness, a sync under way has not ended: " + age

    def _report_state(self):
        """Logs a change of the guard's state, and passes it to
        on_state_change, once: whoever notices it first (a probe, a sync,
        stats()) reports it; the others find it reported."""
        with self._state_lock:
            state, reason = self._current_state()
            if state is None or state == self._state:
                return
            self._state = state
            if state == "stale":
                _log.warning("%s: guard off, every key answers True: %s", self._name, reason)
            else:
                _log.info("%s: guard on: %s", self._name, reason)
            if self._on_state_change is not None:
                try:
                    self._on_state_change(state, reason)
                except Exception:
                    _log.exception("%s: on_state_change raised; the guard goes on", self._name)

    def to_filter(self):
        """An independent :class:`Filter`, the copy as the last sync left it
        (without write-through keys), or None before the first sync."""
        with self._lock:
            return None if self._filter is None else self._filter.copy()

    def __repr__(self):
        return "<bloomfilter.LiveFilter %s at %s, %s>" % (
            self._index, self._lsn,
            "never synced" if self._synced_at is None
            else "synced %.3f s ago" % (_time.monotonic() - self._synced_at))
