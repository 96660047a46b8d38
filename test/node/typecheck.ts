// test/node/typecheck.ts: type-checked (tsc --noEmit --strict) by run.sh
// against the installed package's declarations, never run.  The lines
// marked as expected errors at the end are misuses the declarations must
// refuse: tsc fails if one is accepted.
import * as bloomfilter from '@bloomfilter/client';
import {
  Filter, LiveFilter, FilterInfo, KeyValue, SyncResult, BloomFilterError, KindError,
} from '@bloomfilter/client';
import { Client, Pool } from 'pg';

const f: Filter = Filter.empty('number', 1000, 0.01, { growth: 2 });
f.add(1).add(2n).add(bloomfilter.numeric('1.5'));
const answers: Uint8Array = f.containsMany([1, 2, 3]);
const many: Uint8Array = f.containsMany(new Float64Array([1, 2]));
const into: Uint8Array = f.containsMany([1, 2], new Uint8Array(2));
const maybe: boolean = f.contains(bloomfilter.uuid('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'));
const info: FilterInfo = f.info();
const seed: bigint = info.seed;
const growth: number | null = info.growth;
const bytes: Buffer = f.toBytes();
const text: string = f.toText();
const copy: Filter = Filter.fromText(text).union(Filter.fromBytes(bytes, { v1Utf8: true }));
const keys: KeyValue[] = ['a', new Date(), Buffer.from('x'), true, bloomfilter.date('2024-05-01'),
  bloomfilter.timestamp(new Date()), bloomfilter.timestamptz('2024-05-01 12:00Z')];
copy.applyChanges(new Uint8Array(0));

async function follow(pool: Pool): Promise<boolean> {
  const guard = await LiveFilter.open(pool, 'users_id_guard', { maxStaleness: 2, refreshInterval: 0.5 });
  const connect = async () => {
    const client = new Client();
    await client.connect();
    return client;
  };
  const other = new LiveFilter(connect, 'users_id_guard');
  const result: SyncResult = await other.sync();
  const lsn: string = result.lsn;
  guard.add(42);
  guard.on('stale', (reason: string) => console.log(reason)).on('error', (error: Error) => error.message);
  const forced: number = guard.stats().forcedMaybes;
  const stale: number | null = guard.staleness;
  await other.close();
  return guard.contains(42) && lsn !== '' && stale !== 0 && forced >= 0;
}

try {
  f.contains('x');
} catch (error) {
  if (error instanceof KindError) {
    const code: 'BFC_ERR_KIND' = error.code;
    const errno: number = error.errno;
  } else if (error instanceof BloomFilterError) {
    const message: string = error.message;
  }
}

// @ts-expect-error: a kind bloom_info does not name
Filter.empty('integer', 10);
// @ts-expect-error: an object is no key
f.contains({ id: 1 });
// @ts-expect-error: null is no key
f.add(null);
// @ts-expect-error: union takes a Filter
f.union(bytes);
// @ts-expect-error: filters are made by the static functions
new Filter();
// @ts-expect-error: answers go into an array or a Uint8Array
f.containsMany([1], new Float64Array(1));
// @ts-expect-error: the options are named
new LiveFilter(connect2(), 'i', 2);

function connect2(): Client {
  return new Client();
}

export { answers, many, into, maybe, seed, growth, keys, follow };
