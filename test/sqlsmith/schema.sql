-- schema.sql: the database sqlsmith draws its random queries from.  Run by
-- the role the queries run as (it owns everything here), after CREATE
-- EXTENSION bloomfilter.  sqlsmith builds expressions from the columns of
-- these tables and calls any function or operator whose argument types
-- they have, so every type the extension takes or returns is a column
-- somewhere, with ordinary values, edge values and NULLs:
--   keys      one column per key kind (and two types a filter refuses);
--             its numbers double as capacities and rates, edges included
--   filters   bloom and qfilter values of every kind: self-sized, fixed
--             (typmod columns), overfilled, growing chains, empty, NULL
--   big_filters   filters of over 1 MB (TOASTed; the batched scan's
--             prefetching path)
--   filter_bytes  the bytea and text forms, valid, damaged and junk
--   users, events, empty_keys: bloomfilter indexes: plain, fixed,
--             grown past capacity, expression, partial, partitioned,
--             unlogged, on an empty table; a btree beside them
--   indexes   regclass values naming those indexes, their tables and
--             relations that are no bloomfilter index
--   snapshots, deltas   bloom_index_snapshot and bloom_index_changes
--             results (pg_lsn, timelines, builds, delta bytea)

CREATE TYPE smith_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE smith_pair AS (a int, b text);

-- -------------------------------------------------------------------------
-- Keys of every kind

CREATE TABLE keys (
	id int PRIMARY KEY,
	k_int2 int2,
	k_int4 int4,
	k_int8 int8,
	k_numeric numeric,
	k_float4 float4,
	k_float8 float8,
	k_text text,
	k_varchar varchar(16),
	k_bpchar char(8),
	k_name name,
	k_bytea bytea,
	k_uuid uuid,
	k_bool bool,
	k_date date,
	k_timestamp timestamp,
	k_timestamptz timestamptz,
	k_inet inet,
	k_interval interval,
	k_jsonb jsonb,
	k_range int4range,
	k_pair smith_pair,
	k_int_array int4[],
	k_text_array text[],
	k_mood smith_mood,			-- refused by filters (enum)
	k_oid oid					-- refused by filters (object identifier)
);

INSERT INTO keys
SELECT i,
	(i * 7 - 300)::int2,
	i * 1000003 - 50000000,
	i::int8 * 100000000019 - 5000000000000,
	i / 7.0,
	i / 3.0,
	i / 11.0 - 5,
	'key ' || i,
	'v' || i,
	'b' || (i % 50),
	'n' || i,
	decode(md5(i::text), 'hex'),
	md5(i::text)::uuid,
	i % 2 = 0,
	date '2026-01-01' + i,
	timestamp '2026-01-01 00:00' + i * interval '37 minutes',
	timestamptz '2026-01-01 00:00+00' + i * interval '1 hour',
	('10.0.' || (i / 256) || '.' || (i % 256))::inet,
	i * interval '1 minute',
	jsonb_build_object('i', i, 'even', i % 2 = 0),
	int4range(i, i + 10),
	ROW(i, 'p' || i)::smith_pair,
	ARRAY[i, i + 1, i + 2],
	ARRAY['a' || i, 'b' || i],
	(ARRAY['sad', 'ok', 'happy']::smith_mood[])[i % 3 + 1],
	i::oid
FROM generate_series(1, 120) i;

-- zeros, empty strings, the extremes, NaN and infinities, negative zero
INSERT INTO keys VALUES
	(1000, 0, 0, 0, 0, '-0', '-0', '', '', '', '', '\x', '00000000-0000-0000-0000-000000000000',
	 false, '-infinity', '-infinity', '-infinity', '0.0.0.0/0', '0', '{}', 'empty', ROW(NULL, NULL),
	 '{}', '{}', 'sad', 0),
	(1001, -32768, -2147483648, -9223372036854775808, 'NaN', 'NaN', 'NaN', ' ', ' ', ' ', ' ',
	 '\x00', 'ffffffff-ffff-ffff-ffff-ffffffffffff', true, 'infinity', 'infinity', 'infinity',
	 '::1', '-178000000 years', 'null', '(,)', ROW(0, ''), '{NULL}', '{NULL,""}', 'happy',
	 4294967295),
	(1002, 32767, 2147483647, 9223372036854775807, '1e100', 'Infinity', '-Infinity',
	 repeat('long text ', 300), repeat('x', 16), 'trailing  ', repeat('n', 63),
	 decode(repeat('ff', 3000), 'hex'), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL,
	 '4713-01-01 BC', '294276-12-31 23:59:59', '1970-01-01 00:00+00', 'ffff::/16',
	 '178000000 years', '[1, 2, {"a": null}]', '[-2147483648,2147483647)', NULL,
	 '{{1,2},{3,4}}', '{"é", "ß", "日本"}', NULL, 1),
	(1003, 1, 1, 1, '0.5', '0.5', '0.5', 'é', 'ß', '日本', 'Ω', '\x01', NULL, NULL, NULL, NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(1004, -1, -1, -1, '-1', '1e-30', '1e-300', 'NaN', 'NULL', 'null', '', '\xdeadbeef', NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(1005, 16, 1000000, 750000000, '0.01', '0.01', '0.01', 'bloom:', 'qfilter:', 'bloom:AA',
	 'x', '\x4246', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	 NULL);
-- rows of NULLs only
INSERT INTO keys (id) SELECT 2000 + i FROM generate_series(1, 5) i;

-- -------------------------------------------------------------------------
-- Filters built from every key column

CREATE TABLE filters (
	id serial PRIMARY KEY,
	kind text,
	f bloom,					-- no modifier: any filter
	fixed bloom(1000, 0.01),
	chain bloom(20, 0.01, 2),	-- grown past capacity: several segments
	q qfilter,
	q_fixed qfilter(1000, 0.01)
);

-- One row per key column: bloom_agg self-sized, fixed and growing,
-- qfilter_agg self-sized and fixed.
DO $$
DECLARE
	col name;
BEGIN
	FOR col IN
		SELECT attname FROM pg_attribute
		WHERE attrelid = 'keys'::regclass AND attnum > 0 AND attname LIKE 'k\_%'
		  AND attname NOT IN ('k_mood', 'k_oid')
		ORDER BY attnum
	LOOP
		EXECUTE format('INSERT INTO filters (kind, f, fixed, chain, q, q_fixed)
			SELECT %L, bloom_agg(%I), bloom_agg(%I, 1000, 0.01), bloom_agg(%I, 20, 0.01, 2),
				qfilter_agg(%I), qfilter_agg(%I, 1000, 0.01)
			FROM keys', col, col, col, col, col, col);
	END LOOP;
END
$$;

INSERT INTO filters (kind, f, fixed, chain, q, q_fixed) VALUES
	('empty', bloom_empty(10), bloom_empty(1000, 0.01), bloom_empty(20, 0.01, 2),
	 qfilter_empty(10), qfilter_empty(1000, 0.01)),
	('null', NULL, NULL, NULL, NULL, NULL),
	('tiny', bloom_empty(1, 0.5), NULL, NULL, qfilter_empty(1, 0.5), NULL);
-- a chain of bloom_empty(..., growth => 2) filled far past its capacity,
-- an overfilled fixed filter, a strict rate, a filter with every bit set
INSERT INTO filters (kind, f, q)
SELECT 'grown chain', bloom_add_all(bloom_empty(100, 0.01, growth => 2), array_agg(i)),
	qfilter_add_all(qfilter_empty(100, 0.01), array_agg(i))
FROM generate_series(1, 3000) i;
INSERT INTO filters (kind, f, q)
SELECT 'overfilled', bloom_agg(i, 10, 0.01), qfilter_agg(i % 17, 0.1)
FROM generate_series(1, 2000) i;
INSERT INTO filters (kind, f, q)
SELECT 'strict', bloom_agg(i, 1e-9), qfilter_agg(i, 1e-6) FROM generate_series(1, 300) i;
INSERT INTO filters (kind, f)
SELECT 'saturated', bloom_agg(i, 1, 0.5) FROM generate_series(1, 5000) i;
-- unions and intersections of equal parameters, a qfilter with removals
INSERT INTO filters (kind, f, fixed, chain, q, q_fixed)
SELECT 'union', bloom_union_agg(fixed), bloom_union_agg(fixed), bloom_union_agg(chain),
	qfilter_union_agg(q_fixed), qfilter_union_agg(q_fixed)
FROM filters WHERE kind IN ('k_int4', 'k_int8', 'empty');
INSERT INTO filters (kind, f, fixed, q_fixed)
SELECT 'intersection', bloom_intersection_agg(fixed), bloom_intersection_agg(fixed),
	(SELECT qfilter_remove_all(q_fixed, ARRAY[1000003 - 50000000, 2 * 1000003 - 50000000])
	 FROM filters WHERE kind = 'k_int4')
FROM filters WHERE kind IN ('k_int4', 'k_int2');

CREATE TABLE big_filters (
	id int,
	f bloom,
	q qfilter
);
INSERT INTO big_filters
SELECT 1, bloom_agg(i, 1000000, 0.01), qfilter_agg(i, 200000, 0.01)
FROM generate_series(1, 20000) i;
INSERT INTO big_filters
SELECT 2, bloom_add_all(bloom_empty(200000, 0.001, 4), array_agg(i::text)), NULL
FROM generate_series(1, 400000) i;

-- -------------------------------------------------------------------------
-- The serialized forms: valid, damaged and junk

CREATE TABLE filter_bytes (
	id serial,
	b bytea,
	t text
);
INSERT INTO filter_bytes (b, t)
SELECT f::bytea, f::text FROM filters WHERE f IS NOT NULL;
INSERT INTO filter_bytes (b, t)
SELECT q::bytea, q::text FROM filters WHERE q IS NOT NULL AND kind IN ('k_text', 'empty', 'overfilled');
-- damaged: truncated, one byte flipped, a byte too many
INSERT INTO filter_bytes (b, t)
SELECT substr(f::bytea, 1, length(f::bytea) / 2), left(f::text, length(f::text) - 4)
FROM filters WHERE kind IN ('k_int4', 'grown chain', 'empty');
INSERT INTO filter_bytes (b, t)
SELECT set_byte(f::bytea, 9, get_byte(f::bytea, 9) # 1), f::text || 'AAAA'
FROM filters WHERE kind IN ('k_int4', 'grown chain');
INSERT INTO filter_bytes (b, t)
SELECT set_byte(q::bytea, 12, get_byte(q::bytea, 12) # 128), q::text || '='
FROM filters WHERE kind IN ('k_int4', 'overfilled');
INSERT INTO filter_bytes (b, t)
SELECT f::bytea || '\x00'::bytea, replace(f::text, 'A', '*')
FROM filters WHERE kind = 'k_text';
INSERT INTO filter_bytes (b, t) VALUES
	('\x', ''), ('\x42', 'bloom:'), ('\x4246', 'qfilter:'), (decode(repeat('00', 64), 'hex'), 'bloom:AAAA'),
	(decode(repeat('ff', 200), 'hex'), 'bloom:////'), (NULL, NULL);

-- -------------------------------------------------------------------------
-- Tables with bloomfilter indexes

CREATE TABLE users (
	id int8,
	email text,
	active bool,
	score float8,
	u uuid,
	created timestamptz,
	mood smith_mood
);
INSERT INTO users
SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE 'User' || i || '@Example.com' END, i % 3 <> 0,
	i / 4.0, CASE WHEN i % 7 = 0 THEN NULL ELSE md5('u' || i)::uuid END,
	timestamptz '2026-01-01 00:00+00' + i * interval '1 day', 'ok'
FROM generate_series(1, 300) i;
INSERT INTO users (id) VALUES (NULL), (NULL);
-- capacity 100 with 300 keys: the plain index grows segments, the fixed
-- one (growth 0) is overfilled
CREATE INDEX users_id_bf ON users USING bloomfilter (id) WITH (capacity = 100, fpr = 0.01);
CREATE INDEX users_id_fixed_bf ON users USING bloomfilter (id) WITH (capacity = 100, growth = 0);
CREATE INDEX users_email_bf ON users USING bloomfilter (lower(email));
CREATE INDEX users_active_u_bf ON users USING bloomfilter (u) WHERE active;
CREATE INDEX users_score_bf ON users USING bloomfilter (score) WITH (fpr = 0.001);
CREATE INDEX users_created_bf ON users USING bloomfilter (created);
CREATE INDEX users_id_btree ON users (id);

CREATE TABLE events (
	day date,
	id bigint,
	name text
) PARTITION BY RANGE (day);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');
CREATE TABLE events_2 PARTITION OF events FOR VALUES FROM ('2026-01-02') TO ('2026-01-03');
CREATE TABLE events_rest PARTITION OF events DEFAULT;
INSERT INTO events
SELECT date '2026-01-01' + i % 4, i, CASE WHEN i % 5 = 0 THEN NULL ELSE 'event ' || i END
FROM generate_series(1, 400) i;
CREATE INDEX events_id_bf ON events USING bloomfilter (id) WITH (capacity = 5000);
CREATE INDEX events_name_bf ON events USING bloomfilter (name);

CREATE TABLE by_day (
	day int,
	k text
) PARTITION BY LIST (day);
CREATE TABLE by_day_1 PARTITION OF by_day FOR VALUES IN (1);
CREATE TABLE by_day_2 PARTITION OF by_day FOR VALUES IN (2, 3);
INSERT INTO by_day SELECT 1 + i % 3, 'k' || i FROM generate_series(1, 90) i;
CREATE INDEX by_day_k_bf ON by_day USING bloomfilter (k);

CREATE UNLOGGED TABLE scratch (
	k int4,
	t text
);
INSERT INTO scratch SELECT i, 's' || i FROM generate_series(1, 50) i;
CREATE INDEX scratch_k_bf ON scratch USING bloomfilter (k) WITH (capacity = 10);

CREATE TABLE empty_keys (
	k text,
	n numeric
);
CREATE INDEX empty_keys_k_bf ON empty_keys USING bloomfilter (k);
CREATE INDEX empty_keys_n_bf ON empty_keys USING bloomfilter (n) WHERE n > 0;

-- one index per key kind on keys (arrays have no operator class)
DO $$
DECLARE
	col name;
BEGIN
	FOR col IN
		SELECT attname FROM pg_attribute
		WHERE attrelid = 'keys'::regclass AND attnum > 0 AND attname LIKE 'k\_%'
		  AND attname NOT IN ('k_mood', 'k_oid') AND attndims = 0
		ORDER BY attnum
	LOOP
		EXECUTE format('CREATE INDEX %I ON keys USING bloomfilter (%I)', 'keys_' || col || '_bf', col);
	END LOOP;
END
$$;

-- -------------------------------------------------------------------------
-- Names of indexes and other relations, and what the index functions return

CREATE TABLE indexes (
	idx regclass,
	tbl regclass,
	is_bloomfilter bool
);
INSERT INTO indexes
SELECT c.oid::regclass, i.indrelid::regclass, am.amname = 'bloomfilter'
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE c.relnamespace = 'public'::regnamespace;
-- relations that are no bloomfilter index: tables, a sequence, a view
CREATE VIEW filter_kinds AS
SELECT id, kind, f, q FROM filters WHERE f IS NOT NULL OR q IS NOT NULL;
INSERT INTO indexes VALUES
	('users', 'users', false), ('events', 'events', false), ('filters_id_seq', NULL, false),
	('filter_kinds', NULL, false), ('pg_class', 'pg_class', false), (NULL, NULL, NULL);

CREATE TABLE snapshots AS
SELECT i.idx, s.lsn, s.filter, s.timeline, s.build
FROM indexes i
JOIN pg_class c ON c.oid = i.idx AND c.relkind = 'i'
CROSS JOIN LATERAL bloom_index_snapshot(i.idx) s
WHERE i.is_bloomfilter;

-- keys added after the snapshots, so that the changes since have some
INSERT INTO users
SELECT i, 'Late' || i || '@example.com', true, -i, md5('late' || i)::uuid, now(), 'sad'
FROM generate_series(301, 340) i;
INSERT INTO events SELECT date '2026-01-02', i, 'late ' || i FROM generate_series(401, 420) i;
INSERT INTO scratch SELECT i, 'late' FROM generate_series(51, 70) i;
DELETE FROM users WHERE id % 50 = 0;

CREATE TABLE deltas AS
SELECT s.idx, s.lsn AS since, s.timeline AS since_timeline, s.build AS since_build,
	ch.upto, ch.reload, ch.delta, ch.timeline
FROM snapshots s
CROSS JOIN LATERAL bloom_index_changes(s.idx, s.lsn, s.timeline, s.build) ch;



-- -------------------------------------------------------------------------
-- Views that call the extension
--
-- sqlsmith picks each function among thousands of the server's, so most
-- of its queries would call none of the extension's; a query that reads
-- one of these views runs the extension's functions, operators and
-- aggregates inside whatever join, subquery, window or parallel plan
-- sqlsmith built around it.  Each pairs filters with keys of their kind,
-- so that reading it is no error (an error would only teach sqlsmith to
-- avoid the view).

-- every probe, of both types, by numbers
CREATE VIEW number_probes AS
SELECT k.id, k.k_int2, k.k_int4, k.k_int8, k.k_numeric, fl.kind,
	fl.f @> k.k_int8 AS f_has_int8,
	k.k_int4 <@ fl.fixed AS fixed_has_int4,
	bloom_contains(fl.chain, k.k_int2) AS chain_has_int2,
	bloom_contains_any(fl.fixed, k.k_int_array) AS fixed_has_any,
	bloom_contains_all(fl.f, ARRAY[k.k_int4, k.id]) AS f_has_all,
	fl.q @> k.k_int8 AS q_has_int8,
	qfilter_count(fl.q_fixed, k.k_int4) AS q_fixed_count,
	qfilter_contains_any(fl.q, k.k_int_array) AS q_has_any,
	bloom_add(fl.fixed, k.k_int4) AS fixed_plus_int4,
	fl.chain + k.k_int8 AS chain_plus_int8,
	qfilter_remove(qfilter_add(fl.q_fixed, k.k_int2), k.k_int2) AS q_fixed_same
FROM filters fl CROSS JOIN keys k
WHERE fl.kind IN ('k_int2', 'k_int4', 'k_int8', 'union', 'intersection', 'empty');

-- by text
CREATE VIEW text_probes AS
SELECT k.id, k.k_text, k.k_varchar, k.k_bpchar, k.k_name, fl.kind,
	bloom_contains(fl.f, k.k_text) AS f_has_text,
	fl.fixed @> k.k_varchar AS fixed_has_varchar,
	k.k_bpchar <@ fl.chain AS chain_has_bpchar,
	fl.q @> k.k_name AS q_has_name,
	qfilter_contains_all(fl.q_fixed, k.k_text_array) AS q_has_all,
	bloom_add_all(fl.fixed, k.k_text_array) AS fixed_plus_array,
	qfilter_remove_all(fl.q, ARRAY[k.k_text]) AS q_less_text
FROM filters fl CROSS JOIN keys k
WHERE fl.kind IN ('k_text', 'k_varchar', 'k_bpchar', 'k_name');

-- the other kinds, each against its own column
CREATE VIEW other_probes AS
SELECT k.id, fl.kind,
	CASE fl.kind
		WHEN 'k_float4' THEN fl.f @> k.k_float4
		WHEN 'k_float8' THEN fl.fixed @> k.k_float8
		WHEN 'k_bytea' THEN fl.chain @> k.k_bytea
		WHEN 'k_uuid' THEN fl.f @> k.k_uuid
		WHEN 'k_bool' THEN fl.q @> k.k_bool
		WHEN 'k_date' THEN fl.q_fixed @> k.k_date
		WHEN 'k_timestamp' THEN fl.f @> k.k_timestamp
		WHEN 'k_timestamptz' THEN fl.chain @> k.k_timestamptz
		WHEN 'k_inet' THEN fl.f @> k.k_inet
		WHEN 'k_interval' THEN fl.q @> k.k_interval
		WHEN 'k_jsonb' THEN fl.fixed @> k.k_jsonb
		WHEN 'k_range' THEN fl.q_fixed @> k.k_range
		WHEN 'k_pair' THEN fl.f @> k.k_pair
		WHEN 'k_int_array' THEN fl.chain @> k.k_int_array
	END AS found
FROM filters fl CROSS JOIN keys k
WHERE fl.kind IN ('k_float4', 'k_float8', 'k_bytea', 'k_uuid', 'k_bool', 'k_date', 'k_timestamp',
				  'k_timestamptz', 'k_inet', 'k_interval', 'k_jsonb', 'k_range', 'k_pair',
				  'k_int_array');

-- a filter fixed for the scan: the planner may offer the Bloom Filter Scan
CREATE VIEW guarded_keys AS
SELECT k.*
FROM keys k
WHERE (SELECT f FROM big_filters WHERE id = 1) @> k.k_int4;
CREATE VIEW guarded_texts AS
SELECT k.id, k.k_text, k.k_bytea
FROM keys k
WHERE k.k_text <@ (SELECT f FROM big_filters WHERE id = 2);
CREATE VIEW guarded_users AS
SELECT u.*
FROM users u
WHERE (SELECT fixed FROM filters WHERE kind = 'k_int8') @> u.id
  AND (SELECT q FROM big_filters WHERE id = 1) @> u.id;
CREATE VIEW guarded_events AS
SELECT e.*
FROM events e
WHERE bloom_contains((SELECT bloom_agg(id) FROM users WHERE active), e.id);

-- inspection of every filter
CREATE VIEW filter_stats AS
SELECT fl.id, fl.kind, b.*, bloom_cardinality(fl.f) AS cardinality, bloom_fpr(fl.chain) AS chain_fpr,
	q.count AS q_count, fl.f = fl.fixed AS f_is_fixed, fl.q_fixed <> fl.q AS q_differs
FROM filters fl
LEFT JOIN LATERAL bloom_info(fl.f) b ON true
LEFT JOIN LATERAL qfilter_info(fl.q) q ON true;

-- construction and sizing from the keys' numbers (kept within what is
-- accepted), comparisons and the qfilter's multiset operations
CREATE VIEW sized_filters AS
SELECT k.id, k.k_int2, fl.kind,
	bloom_empty(abs(k.k_int2::int) + 1, 0.01, k.id % 3 * 2) AS empty_filter,
	(bloom_params(abs(k.k_int2::int) + 1, 1.0 / (k.id % 1000 + 3))).bytes AS params_bytes,
	qfilter_empty(abs(k.k_int2::int) + 1) AS empty_q,
	qfilter_union(fl.q_fixed, fl.q_fixed) AS q_fixed_twice,
	qfilter_add_all(fl.q, k.k_int_array) AS q_plus_array,
	fl.f <> fl.fixed AS f_differs, fl.fixed < fl.f AS fixed_before,
	fl.q_fixed < fl.q AS q_before, fl.q_fixed >= fl.q AS q_not_before,
	fl.q | fl.q AS q_doubled
FROM filters fl CROSS JOIN keys k
WHERE fl.kind IN ('k_int4', 'union', 'empty', 'null') AND k.id % 4 = 0;

-- the aggregates, grouped, over every kind
CREATE VIEW key_filters AS
SELECT k_bool AS grp,
	bloom_agg(k_int4) AS by_int4, bloom_agg(k_text, 0.001) AS by_text,
	bloom_agg(k_uuid, 500, 0.01) AS by_uuid, bloom_agg(k_date, 10, 0.01, 2) AS by_date_chain,
	qfilter_agg(k_int8) AS q_by_int8, qfilter_agg(k_bytea, 0.05) AS q_by_bytea,
	qfilter_agg(k_timestamptz, 300, 0.01) AS q_by_timestamptz
FROM keys GROUP BY k_bool;
CREATE VIEW combined_filters AS
SELECT kind IS NULL AS nothing,
	bloom_union_agg(fixed) AS fixed_union, bloom_intersection_agg(fixed) AS fixed_intersection,
	bloom_union_agg(chain) AS chain_union, qfilter_union_agg(q_fixed) AS q_fixed_union,
	bloom_union(bloom_union_agg(fixed), bloom_intersection_agg(fixed)) AS fixed_pair_union
FROM filters WHERE kind IN ('k_int4', 'k_int8', 'empty', 'null') OR kind IS NULL
GROUP BY kind IS NULL;

-- the indexes, through their functions
CREATE VIEW index_probes AS
SELECT u.id, u.email,
	bloom_index_contains('users_id_bf', u.id) AS by_id,
	bloom_index_contains('users_id_fixed_bf', u.id + 1000) AS by_fixed,
	bloom_index_contains('users_email_bf', lower(u.email)) AS by_email,
	bloom_index_contains('users_active_u_bf', u.u) AS by_u,
	bloom_index_contains('events_1_id_idx', u.id) AS by_event
FROM users u;
CREATE VIEW index_stats AS
SELECT i.idx, i.tbl, n.*, bloom_index_verify(i.idx) AS verified,
	(bloom_index_snapshot(i.idx)).lsn AS snapshot_lsn,
	bloom_cardinality(bloom_index_filter(i.idx)) AS cardinality
FROM indexes i
JOIN pg_class c ON c.oid = i.idx AND c.relkind = 'i'
CROSS JOIN LATERAL bloom_index_info(i.idx) n
WHERE i.is_bloomfilter;
CREATE VIEW index_followers AS
SELECT d.idx, d.since, ch.upto, ch.reload,
	bloom_apply_changes(s.filter, ch.delta) = bloom_index_filter(d.idx) AS caught_up
FROM deltas d
JOIN snapshots s ON s.idx = d.idx
CROSS JOIN LATERAL bloom_index_changes(d.idx, d.since, d.since_timeline, d.since_build) ch
WHERE NOT ch.reload;

-- the serialized forms, valid ones only
CREATE VIEW round_trips AS
SELECT fl.id, fl.kind, fl.f::bytea::bloom = fl.f AS bytea_ok, fl.f::text::bloom = fl.f AS text_ok,
	fl.q::bytea::qfilter = fl.q AS q_bytea_ok, fl.q::text::qfilter = fl.q AS q_text_ok,
	bloom_from_bytea(fl.fixed::bytea) AS fixed_again
FROM filters fl;
