'use strict';
// live.js: LiveFilter, a copy of a bloomfilter index's filter kept current
// from the index's changes through node-postgres, with a bound on how stale
// its answers may be; the contract of the Python module's LiveFilter
// (python/bloomfilter.py), in JavaScript's terms: syncs are promises, the
// background refresh is a timer that never keeps the process alive.
//
// node-postgres is not required here: a connection is anything with
// node-postgres's query(text, values) returning a promise of { rows } (a
// pg.Client or a pg.Pool), so the package depends on it only as an
// optional peer.

const { EventEmitter } = require('events');
const { performance } = require('perf_hooks');
const { Filter } = require('./filter');
const {
  BloomFilterError, DeltaMismatchError, ExtensionError, InvalidFilterError, ParameterError,
} = require('./errors');

const SNAPSHOT = 'SELECT lsn::text AS lsn, filter::bytea AS filter, timeline::text AS timeline, '
  + 'build::text AS build, pg_is_in_recovery() AS standby FROM bloom_index_snapshot($1::regclass)';
const CHANGES = 'SELECT upto::text AS upto, reload, delta, timeline::text AS timeline, '
  + 'pg_is_in_recovery() AS standby '
  + 'FROM bloom_index_changes($1::regclass, $2::pg_lsn, $3::bigint, $4::pg_lsn)';
const LSN = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;
const EXTENSION = 'SELECT e.extversion AS version, n.nspname AS schema FROM pg_extension e '
  + "JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'bloomfilter'";
const UNDEFINED_FUNCTION = '42883';
const UNDEFINED_TABLE = '42P01';
const OPTIONS = ['maxStaleness', 'refreshInterval'];

/** The options, checked: a misspelt one would leave a default in place
 * silently (a guard off 2 s after each sync). */
function checkedOptions(options) {
  if (options === undefined) return { maxStaleness: 2, refreshInterval: null };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`LiveFilter options must be an object of ${OPTIONS.join(', ')}`);
  }
  for (const name of Object.keys(options)) {
    if (!OPTIONS.includes(name)) {
      throw new TypeError(`LiveFilter: unknown option ${JSON.stringify(name)}; the options are ${OPTIONS.join(', ')}`);
    }
  }
  const maxStaleness = seconds(options.maxStaleness === undefined ? 2 : options.maxStaleness, 'maxStaleness', false);
  const refreshInterval = seconds(options.refreshInterval, 'refreshInterval', true);
  if (refreshInterval !== null && refreshInterval >= maxStaleness) {
    throw new ParameterError(`refreshInterval (${refreshInterval} s) must be below maxStaleness (${maxStaleness} s): `
      + 'the copy would go stale before each sync, and every answer be true between syncs');
  }
  return { maxStaleness, refreshInterval };
}

/** Whether a connection is a pg.Client never connected: node-postgres
 * queues its queries until connect(), which nobody will call. */
function unconnectedClient(conn) {
  return conn._connected === false && conn._connecting === false && typeof conn.connect === 'function';
}

/** What the extension's absence or age means, from pg_extension. */
function extensionAdvice(row) {
  if (row === undefined) {
    return 'the database has no bloomfilter extension, which LiveFilter follows the index through: '
      + 'run CREATE EXTENSION bloomfilter in it';
  }
  const [major, minor] = String(row.version).split('.').map(Number);
  if (major < 1 || (major === 1 && minor < 1)) {
    return `the database's bloomfilter extension is version ${row.version}, and LiveFilter needs 1.1 or later `
      + '(bloom_index_snapshot, bloom_index_changes): run ALTER EXTENSION bloomfilter UPDATE';
  }
  return `the bloomfilter extension is in schema ${row.schema}, which is not on the connection's search_path`;
}

function firstLine(error) {
  return String(error && error.message !== undefined ? error.message : error).split('\n')[0];
}

function seconds(value, name, allowNull) {
  if (allowNull && (value === null || value === undefined)) return null;
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new ParameterError(`${name} must be a positive number of seconds${allowNull ? ' or null' : ''}`);
  }
  return value;
}

function position(value, what) {
  if (typeof value !== 'string' || !LSN.test(value)) {
    throw new BloomFilterError(`${what} returned no position: ${JSON.stringify(value)}`);
  }
  return value;
}

/** A checked position ('16/B374D848') as a number, to compare. */
function positionNumber(text) {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/**
 * A copy of a bloomfilter index's filter, kept current from the index's
 * changes, with a bound on how stale its answers may be.
 *
 * `connection` is a node-postgres pg.Client or pg.Pool for this object's
 * queries, or a function of no arguments returning (a promise of) a
 * connected pg.Client: then a sync that fails ends that client and the
 * next one connects anew, so that the guard resumes after a restart or a
 * failover by itself; a client given that broke stays broken.  `index`
 * names the index ('users_id_guard', or schema-qualified).
 *
 * The first sync loads the index's snapshot (bloom_index_snapshot); each
 * later one fetches only what the index took since (bloom_index_changes,
 * about 8 bytes a key, passing the copy's timeline and build) and loads a
 * snapshot again when the server says so (REINDEX, a copy older than the
 * index keeps changes for, a failover) or when the delta is of another
 * filter.  A sync is applied whole or not at all: one that fails leaves the
 * previous copy.
 *
 * Staleness bound: once the last successful sync started more than
 * `maxStaleness` seconds ago, contains and containsMany answer true
 * ("maybe") for every key until a sync succeeds.  A stalled connection, a
 * failover or a dead database turns the guard off; it never turns a key
 * committed more than maxStaleness seconds before a probe into a
 * "definitely absent".
 *
 * `refreshInterval` (seconds): sync in the background that often (keep it
 * well below maxStaleness), on a timer that does not keep the process
 * alive; failures are kept in lastError and the next round tries again.
 * Without it, call sync() yourself.  close() stops it.
 *
 * Write-through: add() a key your application has just committed, and this
 * object finds it at once, before the index's changes bring it (it is kept
 * apart from the copy until a sync that started after the add has
 * completed, so that a snapshot loaded meanwhile cannot lose it).  From a
 * standby, whose position may be behind the primary's commit, pass the
 * commit's position, add(key, lsn): the key is then kept until the copy's
 * position reaches it (one added without is kept as long as the copy
 * follows a standby).
 *
 * LiveFilter.open(...) makes one and waits for its first sync; `new
 * LiveFilter(...)` starts with the guard off (every answer true) until a
 * sync succeeds.
 */
class LiveFilter extends EventEmitter {
  constructor(connection, index, options) {
    super();
    const { maxStaleness, refreshInterval } = checkedOptions(options);
    if (connection === null || connection === undefined) {
      throw new ParameterError('LiveFilter needs a pg.Client, a pg.Pool or a function that connects one');
    }
    if (typeof connection === 'function' && typeof connection.query !== 'function') {
      this._connect = connection;
      this._conn = null;
    } else if (typeof connection.query === 'function') {
      this._connect = null;
      this._conn = connection;
    } else {
      throw new ParameterError('LiveFilter needs a pg.Client, a pg.Pool or a function that connects one');
    }
    if (typeof index !== 'string' || index === '') throw new ParameterError('index must be the name of an index');
    this.index = index;
    this.maxStaleness = maxStaleness;
    this.refreshInterval = refreshInterval;
    this.lastError = null;
    this._counts = {
      syncs: 0, reloads: 0, errors: 0, forcedMaybes: 0, bytesFetched: 0,
    };
    this._state = null; // as last reported: null (no sync tried), 'fresh', 'stale' 
    this._filter = null;
    this._lsn = null;
    this._timeline = null;
    this._build = null;
    this._syncedAt = null; // performance.now() when the last successful sync started
    this._lastSync = null; // Date.now() likewise
    this._written = []; // [performance.now(), key, lsn] of add()
    this._standby = false; // the last sync's server was in recovery
    this._side = null; // a Filter of the written keys
    this._sideRoom = 0;
    this._queue = Promise.resolve(); // syncs, one at a time
    this._timer = null;
    this._closed = false;
    if (this.refreshInterval !== null) this._schedule(0);
  }

  /** A LiveFilter whose first sync has completed (its error thrown). */
  static async open(connection, index, options) {
    const { maxStaleness, refreshInterval } = checkedOptions(options);
    const live = new LiveFilter(connection, index, { maxStaleness });
    try {
      await live.sync();
    } catch (error) {
      await live.close();
      throw error;
    }
    if (refreshInterval !== null) {
      live.refreshInterval = refreshInterval;
      live._schedule(refreshInterval);
    }
    return live;
  }

  // ---- syncing ------------------------------------------------------------

  async _query(text, values) {
    if (this._conn === null) this._conn = await this._connect();
    if (unconnectedClient(this._conn)) {
      throw new ParameterError('LiveFilter was given a pg.Client that is not connected (its queries would wait '
        + 'forever): await client.connect() first, or pass a function that returns a connected client');
    }
    const result = await this._conn.query(text, values);
    return result.rows[0];
  }

  async _dropConnection() {
    // only a connection this object made: a client given is the caller's
    if (this._connect === null || this._conn === null) return;
    const conn = this._conn;
    this._conn = null;
    try {
      await conn.end();
    } catch (error) {
      // it was broken already
    }
  }

  async _fetchSnapshot() {
    const row = await this._query(SNAPSHOT, [this.index]);
    const data = row.filter;
    return {
      lsn: position(row.lsn, 'bloom_index_snapshot'),
      filter: Filter.fromBytes(data),
      bytes: data.length,
      timeline: row.timeline,
      build: row.build,
      standby: row.standby === true,
    };
  }

  /**
   * Brings the copy up to date: a snapshot when there is none or the
   * server says to reload, else the changes since the copy's position.
   * Resolves to { lsn, reload, bytes }: the position the copy is now
   * consistent with, whether a whole snapshot was loaded, and the bytes
   * fetched.  Rejects with what node-postgres throws (the copy and its age
   * are then unchanged).  Syncs run one at a time, in the order asked.
   */
  sync() {
    const run = this._queue.then(() => this._syncOnce());
    this._queue = run.catch(() => {});
    return run;
  }

  async _syncOnce() {
    const started = performance.now();
    const startedWall = Date.now();
    let reload = true;
    let fetched = 0;
    let standby = false;
    try {
      if (this._filter !== null) {
        const row = await this._query(CHANGES, [this.index, this._lsn, this._timeline, this._build]);
        const upto = position(row.upto, 'bloom_index_changes');
        reload = row.reload === true;
        standby = row.standby === true;
        if (!reload) {
          fetched = row.delta.length;
          try {
            this._filter.applyChanges(row.delta);
            this._lsn = upto;
            this._timeline = row.timeline;
          } catch (error) {
            // another build of the index (a REINDEX that swapped it in), or
            // damaged bytes: a new snapshot mends either
            if (!(error instanceof DeltaMismatchError || error instanceof InvalidFilterError)) throw error;
            reload = true;
          }
        }
      }
      if (reload) {
        const snapshot = await this._fetchSnapshot();
        fetched += snapshot.bytes;
        const old = this._filter;
        this._filter = snapshot.filter;
        this._lsn = snapshot.lsn;
        this._timeline = snapshot.timeline;
        this._build = snapshot.build;
        standby = snapshot.standby;
        if (old !== null) old.free();
      }
    } catch (error) {
      const explained = await this._explained(error);
      await this._dropConnection();
      this._syncFailed(explained);
      throw explained;
    }
    this._syncedAt = started;
    this._lastSync = startedWall;
    this._standby = standby;
    this._forgetWritten(started);
    this.lastError = null;
    this._counts.syncs++;
    if (reload) this._counts.reloads++;
    this._counts.bytesFetched += fetched;
    this._reportState();
    return { lsn: this._lsn, reload, bytes: fetched };
  }

  /** What a failed sync rejects with: node-postgres's error, but for
   * functions the server lacks (no extension, or one too old) a
   * BloomFilterError that says what to run, the server's as its cause. */
  async _explained(error) {
    if (!error || error.code !== UNDEFINED_FUNCTION) return error;
    let advice;
    try {
      advice = extensionAdvice(await this._query(EXTENSION, []));
    } catch (ignored) {
      advice = 'the server has no bloom_index_snapshot(regclass) for LiveFilter: run CREATE EXTENSION bloomfilter, '
        + 'or ALTER EXTENSION bloomfilter UPDATE if it is older than 1.1';
    }
    return new ExtensionError(advice, error);
  }

  _syncFailed(error) {
    this.lastError = error;
    this._counts.errors++;
    // with no listener, 'error' would throw: the failure is in lastError
    if (this.listenerCount('error') > 0) this._emitSafely('error', error);
    this._reportState();
  }

  // ---- saying when the guard is off ----------------------------------------

  /** [state, reason]: 'fresh' or 'stale', or null before any sync was
   * tried (the guard starts off, which is no news). */
  _currentState() {
    if (!this._guardOff()) return ['fresh', `a sync succeeded, the copy is at ${this._lsn}`];
    const error = this.lastError;
    if (this._syncedAt === null && error === null) return [null, null];
    const age = this._syncedAt === null ? 'no sync has succeeded'
      : `no sync succeeded for ${this.staleness.toFixed(1)} s, maxStaleness ${this.maxStaleness} s`;
    if (error !== null && error.code === UNDEFINED_TABLE) {
      const gone = this._syncedAt === null ? 'the index does not exist' : 'the index was dropped';
      return ['stale', `${gone} (${firstLine(error)}): ${age}; the guard resumes if an index of that name is created`];
    }
    if (error !== null) return ['stale', `a sync failed (${firstLine(error)}): ${age}`];
    return ['stale', `the copy went stale past maxStaleness, a sync under way has not ended: ${age}`];
  }

  /** Emits 'stale' or 'fresh' once per change, whoever notices it (a
   * probe, a sync, stats()); a listener that throws is a process warning,
   * never a failed sync or probe.  With no 'stale' listener, turning off is
   * a process warning, so that it never goes unsaid. */
  _reportState() {
    const [state, reason] = this._currentState();
    if (state === null || state === this._state) return;
    this._state = state;
    if (state === 'stale' && this.listenerCount('stale') === 0) {
      process.emitWarning(`LiveFilter(${this.index}): guard off, every key answers true: ${reason}`,
        { code: 'BLOOMFILTER_STALE' });
      return;
    }
    this._emitSafely(state, reason);
  }

  _emitSafely(event, value) {
    try {
      this.emit(event, value);
    } catch (error) {
      process.emitWarning(`LiveFilter(${this.index}): a '${event}' listener threw: ${firstLine(error)}`);
    }
  }

  /** Counters since construction, for a monitor: syncs (successful),
   * reloads, errors (failed syncs), forcedMaybes (answers forced to true),
   * bytesFetched, staleness and fresh (whether the guard is on). */
  stats() {
    this._reportState();
    return { ...this._counts, staleness: this.staleness, fresh: !this._guardOff() };
  }

  _schedule(delaySeconds) {
    if (this._closed) return;
    this._timer = setTimeout(() => {
      this._timer = null;
      this.sync().catch((error) => { this.lastError = error; })
        .then(() => this._schedule(this.refreshInterval));
    }, delaySeconds * 1000);
    this._timer.unref();
  }

  /**
   * Stops the background refresh and waits for a sync under way (at most
   * 5 seconds); ends a connection this object made through a connection
   * function.  A connection given stays open: it is the caller's.
   */
  async close() {
    this._closed = true;
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    let timeout;
    const waited = await Promise.race([
      this._queue.then(() => true),
      new Promise((resolve) => { timeout = setTimeout(resolve, 5000, false); }),
    ]);
    clearTimeout(timeout);
    // a sync stuck in a dead connection keeps it: the process's exit ends both
    if (waited) await this._dropConnection();
  }

  // ---- write-through ------------------------------------------------------

  /** The written keys in a filter of their own, of the copy's kind (so that
   * they hash and compare as the copy's keys do), with room. */
  _rebuildSide(room) {
    const kind = this._filter.kind;
    const side = Filter.empty(kind === 'none' ? null : kind, room, 0.001);
    const kept = [];
    for (const entry of this._written) {
      try {
        side.add(entry[1]);
        kept.push(entry);
      } catch (error) {
        // added before the first sync, of another kind: never there
        if (!(error instanceof BloomFilterError)) throw error;
      }
    }
    if (this._side !== null) this._side.free();
    this._written = kept;
    this._side = side;
    this._sideRoom = room;
  }

  /** Whether a written key may still be missing from the copy, after a
   * sync that started at started.  With the commit's position: until the
   * copy's reaches it.  Without: until a sync that started after the add
   * has completed, as the key committed before that sync began; but a
   * standby's position may be behind the primary's commit, so a copy that
   * follows one keeps such keys. */
  _stillWritten(entry, started) {
    const [at, , lsn] = entry;
    if (lsn !== null) return positionNumber(this._lsn) < lsn;
    return this._standby || at >= started;
  }

  /** Drops the keys the copy now holds (_stillWritten). */
  _forgetWritten(started) {
    this._written = this._written.filter((entry) => this._stillWritten(entry, started));
    if (this._written.length > 0) {
      this._rebuildSide(Math.max(1024, 2 * this._written.length));
    } else if (this._side !== null) {
      this._side.free();
      this._side = null;
      this._sideRoom = 0;
    }
  }

  /** Write-through: a key this application has just committed to the
   * indexed table is found from now on, before a sync brings it.  `lsn`,
   * the commit's WAL position as text (SELECT pg_current_wal_lsn() on the
   * committing connection, after the commit), keeps the key until the
   * copy's position reaches it, which a copy that follows a standby needs.
   * Throws KindError for a key of another kind than the index's. */
  add(key, lsn) {
    const entry = [performance.now(), key,
      lsn === undefined || lsn === null ? null : positionNumber(position(lsn, 'add'))];
    if (this._filter === null) {
      this._written.push(entry); // the guard is off until a sync
      return this;
    }
    if (this._side === null || this._written.length >= this._sideRoom) {
      this._rebuildSide(Math.max(1024, 4 * (this._written.length + 1)));
    }
    this._side.add(key);
    this._written.push(entry);
    return this;
  }

  // ---- probing ------------------------------------------------------------

  /** Counts answers forced to true; the first probe to find the guard off
   * reports it. */
  _forced(count, answer) {
    this._counts.forcedMaybes += count;
    if (this._state !== 'stale') this._reportState();
    return answer;
  }

  _guardOff() {
    return this._syncedAt === null || performance.now() - this._syncedAt > this.maxStaleness * 1000;
  }

  /** false only if `key` is certainly not in the index: the copy lacks
   * it, no add() brought it, and the copy is fresh (its last successful
   * sync started at most maxStaleness seconds ago); true otherwise. */
  contains(key) {
    if (this._guardOff()) return this._forced(1, true);
    if (this._filter.contains(key)) return true;
    return this._side !== null && this._side.contains(key);
  }

  /** keys.map((k) => this.contains(k)), in batches; `out` as
   * Filter.containsMany takes it. */
  containsMany(keys, out) {
    const list = Array.isArray(keys) || ArrayBuffer.isView(keys) ? keys : Array.from(keys);
    if (this._guardOff()) {
      this._forced(list.length);
      const answers = out === undefined ? new Uint8Array(list.length) : out;
      return answers.fill(answers instanceof Uint8Array ? 1 : true, 0, list.length);
    }
    const found = this._filter.containsMany(list, out);
    if (this._side !== null) {
      const side = this._side.containsMany(list);
      const yes = found instanceof Uint8Array ? 1 : true;
      for (let i = 0; i < list.length; i++) if (side[i]) found[i] = yes;
    }
    return found;
  }

  // ---- state --------------------------------------------------------------

  /** The WAL position ('0/1A2B3C4D') the copy is consistent with: every key
   * committed before it is in; null before the first sync. */
  get lsn() { return this._lsn; }

  /** The timeline of lsn (a failover starts a new one, and the next sync
   * then loads a snapshot), as a string; null before the first sync. */
  get timeline() { return this._timeline; }

  /** The build of the index the copy is of (the position its build ended
   * at); null before the first sync. */
  get build() { return this._build; }

  /** When the last successful sync started (a Date), or null. */
  get lastSync() { return this._lastSync === null ? null : new Date(this._lastSync); }

  /** Seconds since the last successful sync started, or null before the
   * first; past maxStaleness every probe answers true. */
  get staleness() {
    return this._syncedAt === null ? null : (performance.now() - this._syncedAt) / 1000;
  }

  /** An independent Filter, the copy as the last sync left it (without
   * write-through keys), or null before the first sync. */
  toFilter() {
    return this._filter === null ? null : this._filter.copy();
  }

  toString() {
    const age = this._syncedAt === null ? 'never synced'
      : `synced ${this.staleness.toFixed(3)} s ago`;
    return `LiveFilter ${this.index} at ${this._lsn}, ${age}`;
  }

  [Symbol.for('nodejs.util.inspect.custom')]() {
    return `<${this.toString()}>`;
  }
}

module.exports = { LiveFilter };
