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

No pip: the module is one file over the C client library
(``libbloomfilter.so``, built by ``make client``) through ctypes.  It looks
for the library in ``$BLOOMFILTER_LIB``, then in ``../client/`` next to
this file, then where the system's loader finds ``libbloomfilter``.
"""

import array as _array
import ctypes as _ctypes
import ctypes.util as _ctypes_util
import datetime as _datetime
import decimal as _decimal
import itertools as _itertools
import os as _os
import uuid as _uuid

__all__ = [
    "Filter", "BloomFilterError", "InvalidFilterError", "KindError",
    "UnsupportedKeyError", "KeySyntaxError", "IncompatibleFiltersError",
    "KINDS",
]

#: The key kinds, by bloom_info's names, with their stored numbers.
KINDS = {
    "none": 0, "number": 1, "float": 2, "text": 3, "bytea": 4, "uuid": 5,
    "boolean": 6, "date": 7, "timestamp": 8, "timestamptz": 9, "other": 10,
}
_KIND_NAMES = {number: name for name, number in KINDS.items()}

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_EPOCH = _datetime.datetime(2000, 1, 1)
_EPOCH_UTC = _datetime.datetime(2000, 1, 1, tzinfo=_datetime.timezone.utc)
_EPOCH_DATE = _datetime.date(2000, 1, 1)


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


_ERRORS = {
    1: InvalidFilterError, 2: KindError, 3: UnsupportedKeyError,
    4: KeySyntaxError, 5: ValueError, 6: ValueError,
    7: IncompatibleFiltersError, 8: MemoryError,
}


class _Error(_ctypes.Structure):
    _fields_ = [("code", _ctypes.c_int), ("message", _ctypes.c_char * 320)]


class _Info(_ctypes.Structure):
    _fields_ = [
        ("format_version", _ctypes.c_int),
        ("layout", _ctypes.c_char_p),
        ("bits", _ctypes.c_int64),
        ("bytes", _ctypes.c_int64),
        ("hashes", _ctypes.c_int),
        ("capacity", _ctypes.c_int64),
        ("target_fpr", _ctypes.c_double),
        ("inserted", _ctypes.c_int64),
        ("bits_set", _ctypes.c_int64),
        ("fill_ratio", _ctypes.c_double),
        ("estimated_distinct", _ctypes.c_double),
        ("estimated_fpr", _ctypes.c_double),
        ("key_kind", _ctypes.c_char_p),
        ("seed", _ctypes.c_int64),
        ("key_environment", _ctypes.c_char * 96),
        ("over_capacity", _ctypes.c_bool),
    ]


def _find_library():
    candidates = []
    if _os.environ.get("BLOOMFILTER_LIB"):
        candidates.append(_os.environ["BLOOMFILTER_LIB"])
    here = _os.path.dirname(_os.path.abspath(__file__))
    candidates.append(_os.path.join(here, "..", "client", "libbloomfilter.so.1"))
    found = _ctypes_util.find_library("bloomfilter")
    if found:
        candidates.append(found)
    for candidate in candidates:
        if _os.path.sep in candidate and not _os.path.exists(candidate):
            continue
        try:
            return _ctypes.CDLL(candidate)
        except OSError:
            continue
    raise ImportError(
        "bloomfilter: cannot find libbloomfilter.so (build it with `make client`, "
        "install it with `make install-client`, or set BLOOMFILTER_LIB)")


def _bind(lib):
    P = _ctypes.c_void_p
    E = _ctypes.POINTER(_Error)
    size = _ctypes.c_size_t
    u8p = _ctypes.c_char_p
    signatures = {
        "bfc_from_bytes": (P, [_ctypes.c_char_p, size, E]),
        "bfc_from_text": (P, [_ctypes.c_char_p, size, E]),
        "bfc_load": (P, [_ctypes.c_char_p, size, E]),
        "bfc_create": (P, [_ctypes.c_int, _ctypes.c_uint64, _ctypes.c_double, E]),
        "bfc_create_growing": (P, [_ctypes.c_int, _ctypes.c_uint64, _ctypes.c_double,
                                   _ctypes.c_int, E]),
        "bfc_copy": (P, [P, E]),
        "bfc_free": (None, [P]),
        "bfc_bytes": (_ctypes.POINTER(_ctypes.c_uint8), [P, _ctypes.POINTER(size)]),
        "bfc_text_size": (size, [P]),
        "bfc_write_text": (size, [P, _ctypes.c_char_p]),
        "bfc_get_info": (None, [P, _ctypes.POINTER(_Info)]),
        "bfc_segments": (_ctypes.c_int, [P]),
        "bfc_growth": (_ctypes.c_int, [P]),
        "bfc_filter_kind": (_ctypes.c_int, [P]),
        "bfc_set_v1_utf8": (None, [P, _ctypes.c_bool]),
        "bfc_union": (_ctypes.c_int, [P, P, E]),
        "bfc_contains_int64": (_ctypes.c_int, [P, _ctypes.c_int64, E]),
        "bfc_add_int64": (_ctypes.c_int, [P, _ctypes.c_int64, E]),
        "bfc_contains_double": (_ctypes.c_int, [P, _ctypes.c_double, E]),
        "bfc_add_double": (_ctypes.c_int, [P, _ctypes.c_double, E]),
        "bfc_contains_text": (_ctypes.c_int, [P, _ctypes.c_char_p, size, E]),
        "bfc_add_text": (_ctypes.c_int, [P, _ctypes.c_char_p, size, E]),
        "bfc_contains_bytea": (_ctypes.c_int, [P, _ctypes.c_char_p, size, E]),
        "bfc_add_bytea": (_ctypes.c_int, [P, _ctypes.c_char_p, size, E]),
        "bfc_contains_uuid": (_ctypes.c_int, [P, u8p, E]),
        "bfc_add_uuid": (_ctypes.c_int, [P, u8p, E]),
        "bfc_contains_bool": (_ctypes.c_int, [P, _ctypes.c_bool, E]),
        "bfc_add_bool": (_ctypes.c_int, [P, _ctypes.c_bool, E]),
        "bfc_contains_date": (_ctypes.c_int, [P, _ctypes.c_int32, E]),
        "bfc_add_date": (_ctypes.c_int, [P, _ctypes.c_int32, E]),
        "bfc_contains_timestamp": (_ctypes.c_int, [P, _ctypes.c_int, _ctypes.c_int64, E]),
        "bfc_add_timestamp": (_ctypes.c_int, [P, _ctypes.c_int, _ctypes.c_int64, E]),
        "bfc_contains_str": (_ctypes.c_int, [P, _ctypes.c_char_p, size, E]),
        "bfc_add_str": (_ctypes.c_int, [P, _ctypes.c_char_p, size, E]),
        "bfc_contains_str_as": (_ctypes.c_int, [P, _ctypes.c_int, _ctypes.c_char_p, size, E]),
        "bfc_add_str_as": (_ctypes.c_int, [P, _ctypes.c_int, _ctypes.c_char_p, size, E]),
        "bfc_contains_int64_many": (_ctypes.c_int, [P, P, size, P, E]),
        "bfc_add_int64_many": (_ctypes.c_int, [P, P, size, E]),
        "bfc_contains_double_many": (_ctypes.c_int, [P, P, size, P, E]),
        "bfc_contains_uuid_many": (_ctypes.c_int, [P, _ctypes.c_char_p, size, P, E]),
        "bfc_contains_packed": (_ctypes.c_int, [P, _ctypes.c_int, _ctypes.c_char_p, P, size, P, E]),
        "bfc_add_packed": (_ctypes.c_int, [P, _ctypes.c_int, _ctypes.c_char_p, P, size, E]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    return lib


_lib = _bind(_find_library())


def _raise(error):
    message = error.message.decode("utf-8", "replace")
    raise _ERRORS.get(error.code, BloomFilterError)(message, error.code)


def _checked(function, *args):
    """Calls a library function that returns NULL or -1 on failure, and
    raises the library's error then."""
    error = _Error()
    result = function(*args, _ctypes.byref(error))
    if result is None or (isinstance(result, int) and result < 0):
        _raise(error)
    return result


def _number_text(key):
    """A decimal.Decimal as numeric_in reads it."""
    if key.is_snan():
        raise KeySyntaxError("a signaling NaN is not a number the server stores", 4)
    if key.is_nan():
        return b"NaN"
    return str(key).encode("ascii")


def _microseconds(key):
    if key.tzinfo is not None and key.utcoffset() is not None:
        return 9, (key - _EPOCH_UTC) // _datetime.timedelta(microseconds=1)
    return 8, (key - _EPOCH) // _datetime.timedelta(microseconds=1)


class Filter:
    """A bloom filter, as the server's ``bloom`` type holds it.

    Build one with :meth:`from_bytes`, :meth:`from_text`, :meth:`load` or
    :meth:`empty`.  Probing is safe from several threads at once; adding
    and :meth:`update` are not.
    """

    __slots__ = ("_handle",)

    def __init__(self, handle):
        """Internal: use the class methods."""
        self._handle = handle

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _lib.bfc_free(handle)
            self._handle = None

    # ---- construction -------------------------------------------------

    @classmethod
    def from_bytes(cls, data, *, v1_utf8=False):
        """The binary form (``SELECT f::bytea``), validated as the server's
        ``bytea::bloom`` cast validates it.

        ``v1_utf8``: for a version 1 filter, that the database it was built
        in had the UTF8 encoding (its non-ASCII text keys are refused
        otherwise).  Raises :class:`InvalidFilterError`."""
        data = bytes(data)
        handle = _checked(_lib.bfc_from_bytes, data, len(data))
        return cls._wrap(handle, v1_utf8)

    @classmethod
    def from_text(cls, text, *, v1_utf8=False):
        """The text form (``bloom:`` and base64, as ``SELECT f`` returns
        it), validated as the server's text input validates it."""
        if isinstance(text, str):
            text = text.encode("utf-8")
        handle = _checked(_lib.bfc_from_text, text, len(text))
        return cls._wrap(handle, v1_utf8)

    @classmethod
    def load(cls, data, *, v1_utf8=False):
        """Any form: binary, text, or hex (``\\x...``, psql's way of
        printing a bytea), told apart by how it starts."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        data = bytes(data)
        handle = _checked(_lib.bfc_load, data, len(data))
        return cls._wrap(handle, v1_utf8)

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
        if growth == 0:
            handle = _checked(_lib.bfc_create, number, capacity, float(fpr))
        else:
            handle = _checked(_lib.bfc_create_growing, number, capacity, float(fpr), growth)
        return cls(handle)

    @classmethod
    def _wrap(cls, handle, v1_utf8):
        result = cls(handle)
        if v1_utf8:
            _lib.bfc_set_v1_utf8(handle, True)
        return result

    def copy(self):
        """An independent copy."""
        return Filter(_checked(_lib.bfc_copy, self._handle))

    # ---- keys ---------------------------------------------------------

    def _call(self, key, contains, error=None):
        """Dispatches one key by its Python type; 1 or 0 for a probe.

        The first attempt passes no error structure (building one costs as
        much as the probe); a failure is repeated with one, for its
        message: the library's functions fail the same way every time and
        change nothing when they do."""
        h = self._handle
        e = None if error is None else _ctypes.byref(error)
        if isinstance(key, bool):
            result = (_lib.bfc_contains_bool if contains else _lib.bfc_add_bool)(h, key, e)
        elif isinstance(key, int):
            if _INT64_MIN <= key <= _INT64_MAX:
                result = (_lib.bfc_contains_int64 if contains else _lib.bfc_add_int64)(h, key, e)
            else:
                text = str(key).encode("ascii")
                result = (_lib.bfc_contains_str_as if contains else _lib.bfc_add_str_as)(
                    h, 1, text, len(text), e)
        elif isinstance(key, float):
            result = (_lib.bfc_contains_double if contains else _lib.bfc_add_double)(h, key, e)
        elif isinstance(key, str):
            text = key.encode("utf-8")
            result = (_lib.bfc_contains_text if contains else _lib.bfc_add_text)(
                h, text, len(text), e)
        elif isinstance(key, (bytes, bytearray, memoryview)):
            data = bytes(key)
            result = (_lib.bfc_contains_bytea if contains else _lib.bfc_add_bytea)(
                h, data, len(data), e)
        elif isinstance(key, _uuid.UUID):
            result = (_lib.bfc_contains_uuid if contains else _lib.bfc_add_uuid)(h, key.bytes, e)
        elif isinstance(key, _decimal.Decimal):
            text = _number_text(key)
            result = (_lib.bfc_contains_str_as if contains else _lib.bfc_add_str_as)(
                h, 1, text, len(text), e)
        elif isinstance(key, _datetime.datetime):
            kind, value = _microseconds(key)
            result = (_lib.bfc_contains_timestamp if contains else _lib.bfc_add_timestamp)(
                h, kind, value, e)
        elif isinstance(key, _datetime.date):
            days = (key - _EPOCH_DATE).days
            result = (_lib.bfc_contains_date if contains else _lib.bfc_add_date)(h, days, e)
        else:
            raise TypeError("bloomfilter keys are int, decimal.Decimal, float, str, bytes, "
                            "uuid.UUID, bool, datetime.date or datetime.datetime, not %s"
                            % type(key).__name__)
        if result < 0:
            if error is None:
                error = _Error()
                self._call(key, contains, error)
            _raise(error)
        return result

    def contains(self, key):
        """False if ``key`` was certainly never added; True if it may have
        been (the same answer ``bloom_contains`` gives in the server)."""
        return self._call(key, True) == 1

    __contains__ = contains

    def add(self, key):
        """Adds ``key``; the filter takes the key's kind if it had none."""
        self._call(key, False)

    def contains_str(self, text):
        """The key spelled as text, read as the server's input function for
        the filter's kind would read it: "0.50" or "5e-1" for a number
        filter, a uuid in either case with or without braces, "yes" for a
        boolean, "\\x00ff" for bytea, ISO 8601 for dates and timestamps
        (see the README for what is refused).  For keys that arrive as
        strings.  A filter with no kind yet answers False."""
        data = text.encode("utf-8")
        return _checked(_lib.bfc_contains_str, self._handle, data, len(data)) == 1

    def add_str(self, text):
        """Adds the key spelled as text, read as :meth:`contains_str` reads
        it; the filter needs a kind (from :meth:`empty` or a first key)."""
        data = text.encode("utf-8")
        _checked(_lib.bfc_add_str, self._handle, data, len(data))

    def contains_many(self, keys):
        """``[self.contains(k) for k in keys]``, in one call into the
        library when the keys are all of one type (int, float, str, bytes
        or uuid.UUID)."""
        keys = keys if isinstance(keys, (list, tuple)) else list(keys)
        n = len(keys)
        if n == 0:
            return []
        types = set(map(type, keys))
        out = bytearray(n)
        out_pointer = (_ctypes.c_uint8 * n).from_buffer(out)
        error = _Error()
        e = _ctypes.byref(error)
        status = None
        if types == {int}:
            try:
                packed = _array.array("q", keys)
            except OverflowError:
                packed = None
            if packed is not None:
                status = _lib.bfc_contains_int64_many(
                    self._handle, packed.buffer_info()[0], n, out_pointer, e)
        elif types == {float}:
            packed = _array.array("d", keys)
            status = _lib.bfc_contains_double_many(
                self._handle, packed.buffer_info()[0], n, out_pointer, e)
        elif types == {_uuid.UUID}:
            status = _lib.bfc_contains_uuid_many(
                self._handle, b"".join([k.bytes for k in keys]), n, out_pointer, e)
        elif types == {str} or types <= {bytes, bytearray}:
            if types == {str}:
                encoded = [k.encode("utf-8") for k in keys]
                kind = 3
            else:
                encoded = keys
                kind = 4
            offsets = _array.array("Q", [0])
            offsets.extend(_itertools.accumulate(map(len, encoded)))
            status = _lib.bfc_contains_packed(
                self._handle, kind, b"".join(encoded), offsets.buffer_info()[0], n,
                out_pointer, e)
        if status is None:
            return [self._call(key, True) == 1 for key in keys]
        if status < 0:
            _raise(error)
        return [b == 1 for b in out]

    def add_many(self, keys):
        """Adds every key of ``keys``, in one call for a list of ints."""
        keys = keys if isinstance(keys, (list, tuple)) else list(keys)
        if keys and set(map(type, keys)) == {int}:
            try:
                packed = _array.array("q", keys)
            except OverflowError:
                packed = None
            if packed is not None:
                _checked(_lib.bfc_add_int64_many, self._handle, packed.buffer_info()[0],
                         len(keys))
                return
        for key in keys:
            self._call(key, False)

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

    def update(self, other):
        """Adds the keys of ``other`` to this filter (an in-place union)."""
        _checked(_lib.bfc_union, self._handle, other._handle)
        return self

    __ior__ = update

    # ---- serialising and inspecting -------------------------------------

    def to_bytes(self):
        """The binary form, for ``%s::bytea::bloom`` or a bytea column."""
        length = _ctypes.c_size_t()
        pointer = _lib.bfc_bytes(self._handle, _ctypes.byref(length))
        return _ctypes.string_at(pointer, length.value)

    __bytes__ = to_bytes

    def to_text(self):
        """The text form, ``bloom:`` and base64, as the server prints it."""
        buffer = _ctypes.create_string_buffer(_lib.bfc_text_size(self._handle))
        length = _lib.bfc_write_text(self._handle, buffer)
        return buffer.raw[:length].decode("ascii")

    @property
    def kind(self):
        """The kind of the filter's keys ("number", ...), or "none"."""
        return _KIND_NAMES.get(_lib.bfc_filter_kind(self._handle), "unknown")

    def info(self):
        """The fields of the server's ``bloom_info(filter)``, as a dict:
        for a growing filter, layout "chained", bits and capacity summed
        over its segments and hashes its last segment's; ``segments`` (1
        for a filter of fixed size) and ``growth`` (None for one)."""
        info = _Info()
        _lib.bfc_get_info(self._handle, _ctypes.byref(info))
        result = {}
        for name, _ in _Info._fields_:
            value = getattr(info, name)
            if isinstance(value, bytes):
                value = value.decode("ascii")
            result[name] = value
        if result["key_environment"] == "":
            result["key_environment"] = None
        result["segments"] = _lib.bfc_segments(self._handle)
        result["growth"] = _lib.bfc_growth(self._handle) or None
        return result

    def __eq__(self, other):
        if not isinstance(other, Filter):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    __hash__ = None

    def __repr__(self):
        info = self.info()
        return "<bloomfilter.Filter %s, capacity %d, fpr %g, %d bytes>" % (
            info["key_kind"], info["capacity"], info["target_fpr"], info["bytes"])
