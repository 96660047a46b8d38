// index.d.ts: the TypeScript declarations of @bloomfilter/client.

/// <reference types="node" />
import { EventEmitter } from 'events';

/** A key kind, as bloom_info names it. */
export type KindName =
  | 'none' | 'number' | 'float' | 'text' | 'bytea' | 'uuid' | 'boolean'
  | 'date' | 'timestamp' | 'timestamptz' | 'other';

/** The kinds a new filter may be made for (null: whatever comes first). */
export type CreatableKind = Exclude<KindName, 'none' | 'other'>;

/** The key kinds with their stored numbers. */
export const KINDS: Readonly<Record<KindName, number>>;

/** A key of an explicit kind, made by uuid(), numeric(), date(),
 * timestamp() or timestamptz(). */
export class Key {
  private constructor();
  readonly kind: 'uuid' | 'numeric' | 'date' | 'timestamp' | 'timestamptz';
  /** uuid: its 16 bytes; numeric: its text; date: days since 2000-01-01;
   * timestamps: microseconds since 2000-01-01 (UTC for timestamptz). */
  readonly value: Uint8Array | string | number | bigint;
}

/** A uuid key: text as uuid_in reads it, or its 16 bytes. */
export function uuid(value: string | Uint8Array): Key;
/** A number key of any size or precision: text as numeric_in reads it, a
 * bigint, or a number by its shortest text. */
export function numeric(value: string | number | bigint): Key;
/** A date key: ISO 8601 text, or a Date's calendar day in UTC. */
export function date(value: string | Date): Key;
/** A timestamp (without time zone) key: ISO 8601 text without an offset,
 * to the microsecond, or a Date's wall clock in UTC. */
export function timestamp(value: string | Date): Key;
/** A timestamptz key: ISO 8601 text with an offset, to the microsecond,
 * or a Date. */
export function timestamptz(value: string | Date): Key;

/**
 * What a key may be: number (an integer is a number key, any other value a
 * float key; every number is a float key for a float filter), bigint
 * (number), string (text), Buffer or Uint8Array (bytea), boolean, Date
 * (timestamptz), or a Key.
 */
export type KeyValue = number | bigint | string | Uint8Array | boolean | Date | Key;

/** The fields of the server's bloom_info(filter), by its column names. */
export interface FilterInfo {
  format_version: number;
  layout: 'blocked512' | 'chained';
  bits: number;
  bytes: number;
  hashes: number;
  capacity: number;
  target_fpr: number;
  inserted: number;
  bits_set: number;
  fill_ratio: number;
  estimated_distinct: number;
  estimated_fpr: number;
  key_kind: KindName;
  seed: bigint;
  key_environment: string | null;
  over_capacity: boolean;
  /** 1 for a filter of fixed size. */
  segments: number;
  /** null for a filter of fixed size. */
  growth: number | null;
}

export interface LoadOptions {
  /** A version 1 filter's database had the UTF8 encoding (its non-ASCII
   * text keys are refused otherwise). */
  v1Utf8?: boolean;
}

/** A bloom filter, as the server's `bloom` type holds it. */
export class Filter {
  private constructor();
  /** The binary form (`SELECT f::bytea`), validated as bytea::bloom is. */
  static fromBytes(data: Uint8Array | ArrayBuffer, options?: LoadOptions): Filter;
  /** The text form (`bloom:` and base64), validated as bloom_in does. */
  static fromText(text: string, options?: LoadOptions): Filter;
  /** Any form: binary, text, or hex (`\x...`). */
  static load(data: string | Uint8Array | ArrayBuffer, options?: LoadOptions): Filter;
  /** A new filter sized exactly as bloom_empty(capacity, fpr[, growth]). */
  static empty(kind: CreatableKind | null, capacity: number | bigint, fpr?: number,
    options?: { growth?: number }): Filter;

  /** false if the key was certainly never added; true if it may have been. */
  contains(key: KeyValue): boolean;
  add(key: KeyValue): this;
  /** The answers as a new Uint8Array (1: may be present, 0: certainly
   * absent), or into `out` (a Uint8Array, or an array of booleans, at
   * least as long as keys), which is returned. */
  containsMany(keys: Iterable<KeyValue> | Float64Array | BigInt64Array): Uint8Array;
  containsMany<Out extends boolean[] | Uint8Array>(
    keys: Iterable<KeyValue> | Float64Array | BigInt64Array, out: Out): Out;
  addMany(keys: Iterable<KeyValue> | Float64Array | BigInt64Array): this;
  /** The key spelled as text, read as the server's input function for the
   * filter's kind reads it. */
  containsStr(text: string): boolean;
  addStr(text: string): this;

  /** A new filter holding the keys of both, as `a | b` in SQL. */
  union(other: Filter): Filter;
  /** An in-place union. */
  update(other: Filter): this;
  /** Applies a delta of bloom_index_changes to a copy of the index's filter. */
  applyChanges(delta: Uint8Array | ArrayBuffer): this;

  toBytes(): Buffer;
  toText(): string;
  readonly kind: KindName;
  info(): FilterInfo;
  copy(): Filter;
  equals(other: Filter): boolean;
  /** Releases the filter's memory now (else when it is garbage collected). */
  free(): void;
}

/** What node-postgres's pg.Client and pg.Pool offer that LiveFilter uses. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** A connection LiveFilter made, which it ends when a sync fails. */
export interface Connection extends Queryable {
  end(): Promise<void>;
}

export interface LiveFilterOptions {
  /** Seconds after the last successful sync's start past which every
   * probe answers true; 2 by default. */
  maxStaleness?: number;
  /** Seconds between background syncs; none by default. */
  refreshInterval?: number | null;
}

export interface SyncResult {
  /** The position the copy is consistent with. */
  lsn: string;
  /** Whether a whole snapshot was loaded. */
  reload: boolean;
  /** Bytes fetched. */
  bytes: number;
}

/** LiveFilter.stats(): counters since construction. */
export interface LiveFilterStats {
  syncs: number;
  reloads: number;
  errors: number;
  /** Answers forced to true by a stale or missing copy. */
  forcedMaybes: number;
  bytesFetched: number;
  staleness: number | null;
  /** Whether the guard is on. */
  fresh: boolean;
}

/** A copy of a bloomfilter index's filter kept current from its changes,
 * with a bound on how stale its answers may be.  Events: 'stale' (the
 * guard turned off, with why) and 'fresh' (on again), once per change;
 * 'error' for each failed sync (only if listened to). */
export class LiveFilter extends EventEmitter {
  on(event: 'stale' | 'fresh', listener: (reason: string) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'stale' | 'fresh', listener: (reason: string) => void): this;
  once(event: 'error', listener: (error: Error) => void): this;
  stats(): LiveFilterStats;
  constructor(connection: Queryable | (() => Connection | Promise<Connection>), index: string,
    options?: LiveFilterOptions);
  /** A LiveFilter whose first sync has completed. */
  static open(connection: Queryable | (() => Connection | Promise<Connection>), index: string,
    options?: LiveFilterOptions): Promise<LiveFilter>;
  readonly index: string;
  maxStaleness: number;
  refreshInterval: number | null;
  /** The error of the last background sync that failed, until one succeeds. */
  lastError: Error | null;
  sync(): Promise<SyncResult>;
  close(): Promise<void>;
  /**
   * Write-through: a key this application has just committed; `lsn`, the
   * commit's WAL position ('16/B374D848'), keeps it until the copy reaches
   * that position (needed when the copy follows a standby).
   */
  add(key: KeyValue, lsn?: string | null): this;
  contains(key: KeyValue): boolean;
  containsMany(keys: Iterable<KeyValue> | Float64Array | BigInt64Array): Uint8Array;
  containsMany<Out extends boolean[] | Uint8Array>(
    keys: Iterable<KeyValue> | Float64Array | BigInt64Array, out: Out): Out;
  readonly lsn: string | null;
  readonly timeline: string | null;
  readonly build: string | null;
  readonly lastSync: Date | null;
  readonly staleness: number | null;
  toFilter(): Filter | null;
}

/** The C library's error codes (client/bloomfilter.h), by name. */
export const CODES: Readonly<{
  BFC_OK: 0; BFC_ERR_INVALID: 1; BFC_ERR_KIND: 2; BFC_ERR_UNSUPPORTED: 3; BFC_ERR_KEY: 4;
  BFC_ERR_PARAM: 5; BFC_ERR_TOO_LARGE: 6; BFC_ERR_INCOMPATIBLE: 7; BFC_ERR_NOMEM: 8;
  BFC_ERR_MISMATCH: 9;
}>;

export type ErrorCode = Exclude<keyof typeof CODES, 'BFC_OK'>;

export class BloomFilterError extends Error {
  /** The C library's code, by name ('BFC_ERR_KIND'). */
  readonly code: ErrorCode;
  /** The C library's code, by value. */
  readonly errno: number;
}
export class InvalidFilterError extends BloomFilterError { readonly code: 'BFC_ERR_INVALID'; }
export class KindError extends BloomFilterError { readonly code: 'BFC_ERR_KIND'; }
export class UnsupportedKeyError extends BloomFilterError { readonly code: 'BFC_ERR_UNSUPPORTED'; }
export class KeySyntaxError extends BloomFilterError { readonly code: 'BFC_ERR_KEY'; }
export class ParameterError extends BloomFilterError { readonly code: 'BFC_ERR_PARAM'; }
export class TooLargeError extends BloomFilterError { readonly code: 'BFC_ERR_TOO_LARGE'; }
export class IncompatibleFiltersError extends BloomFilterError { readonly code: 'BFC_ERR_INCOMPATIBLE'; }
export class OutOfMemoryError extends BloomFilterError { readonly code: 'BFC_ERR_NOMEM'; }
export class DeltaMismatchError extends BloomFilterError { readonly code: 'BFC_ERR_MISMATCH'; }
/** No bloomfilter extension (or one older than 1.1) where LiveFilter syncs. */
export class ExtensionError extends BloomFilterError { readonly code: 'BFC_ERR_PARAM'; readonly cause: unknown; }
