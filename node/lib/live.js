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

const { performance } = require('perf_hooks');
const { Filter } = require('./filter');
const {
  BloomFilterError, DeltaMismatchError, InvalidFilterError, ParameterError,
} = require('./errors');

const SNAPSHOT = 'SELECT lsn::text AS lsn, filter::bytea AS filter, timeline::text AS timeline, '
  + 'build::text AS build, pg_is_in_recovery() AS standby FROM bloom_index_snapshot($1::regclass)';
const CHANGES = 'SELECT upto::text AS upto, reload, delta, timeline::text AS timeline, '
  + 'pg_is_in_recovery() AS standby '
  + 'FROM bloom_index_changes($1::regclass, $2::pg_lsn, $3::bigint, $4::pg_lsn)';
const LSN = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;

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
class LiveFilter {
  constructor(connection, index, { maxStaleness = 2, refreshInterval = null } = {}) {
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
    this.maxStaleness = seconds(maxStaleness, 'maxStaleness', false);
    this.refreshInterval = seconds(refreshInterval, 'refreshInterval', true);
    this.lastError = null;
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
  static async open(connection, index, options = {}) {
    const live = new LiveFilter(connection, index, { ...options, refreshInterval: null });
    try {
      await live.sync();
    } catch (error) {
      await live.close();
      throw error;
    }
    if (options.refreshInterval !== null && options.refreshInterval !== undefined) {
      live.refreshInterval = seconds(options.refreshInterval, 'refreshInterval', true);
      live._schedule(live.refreshInterval);
    }
    return live;
  }

  // ---- syncing ------------------------------------------------------------

  async _query(text, values) {
    if (this._conn === null) this._conn = await this._connect();
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
      await this._dropConnection();
      throw error;
    }
    this._syncedAt = started;
    this._lastSync = startedWall;
    this._standby = standby;
    this._forgetWritten(started);
    this.lastError = null;
    return { lsn: this._lsn, reload, bytes: fetched };
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

  _guardOff() {
    return this._syncedAt === null || performance.now() - this._syncedAt > this.maxStaleness * 1000;
  }

  /** false only if `key` is certainly not in the index: the copy lacks
   * it, no add() brought it, and the copy is fresh (its last successful
   * sync started at most maxStaleness seconds ago); true otherwise. */
  contains(key) {
    if (this._guardOff()) return true;
    if (this._filter.contains(key)) return true;
    return this._side !== null && this._side.contains(key);
  }

  /** keys.map((k) => this.contains(k)), in batches; `out` as
   * Filter.containsMany takes it. */
  containsMany(keys, out) {
    const list = Array.isArray(keys) || ArrayBuffer.isView(keys) ? keys : Array.from(keys);
    if (this._guardOff()) {
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
