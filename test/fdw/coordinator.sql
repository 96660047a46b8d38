-- test/fdw/coordinator.sql: the coordinator's view of the two shards.
--
-- psql variables: shard1_port, shard2_port.  The "extensions" server option
-- is what lets postgres_fdw ship bloomfilter's functions, operators and
-- aggregates to a shard; without it every row would come back to be
-- aggregated here.  shard1_plain is the same shard without that option, to
-- show the difference.

CREATE EXTENSION bloomfilter;
CREATE EXTENSION postgres_fdw;

CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '127.0.0.1', port :'shard1_port', dbname 'postgres',
			 extensions 'bloomfilter');
CREATE SERVER shard2 FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '127.0.0.1', port :'shard2_port', dbname 'postgres',
			 extensions 'bloomfilter');
CREATE SERVER shard1_plain FOREIGN DATA WRAPPER postgres_fdw
	OPTIONS (host '127.0.0.1', port :'shard1_port', dbname 'postgres');

CREATE USER MAPPING FOR CURRENT_USER SERVER shard1 OPTIONS (user 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard2 OPTIONS (user 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard1_plain OPTIONS (user 'postgres');

-- One foreign table per shard's part.
CREATE FOREIGN TABLE shard1_events (
	user_id bigint NOT NULL, shard integer NOT NULL, kind text NOT NULL, at timestamptz NOT NULL
) SERVER shard1 OPTIONS (table_name 'events');
CREATE FOREIGN TABLE shard2_events (
	user_id bigint NOT NULL, shard integer NOT NULL, kind text NOT NULL, at timestamptz NOT NULL
) SERVER shard2 OPTIONS (table_name 'events');
CREATE FOREIGN TABLE shard1_plain_events (
	user_id bigint NOT NULL, shard integer NOT NULL, kind text NOT NULL, at timestamptz NOT NULL
) SERVER shard1_plain OPTIONS (table_name 'events');

-- The same parts as partitions of one table, split by the shard column.
CREATE TABLE events_all (
	user_id bigint NOT NULL, shard integer NOT NULL, kind text NOT NULL, at timestamptz NOT NULL
) PARTITION BY LIST (shard);
CREATE FOREIGN TABLE events_all_1 PARTITION OF events_all FOR VALUES IN (1)
	SERVER shard1 OPTIONS (table_name 'events');
CREATE FOREIGN TABLE events_all_2 PARTITION OF events_all FOR VALUES IN (2)
	SERVER shard2 OPTIONS (table_name 'events');

-- The shard's stored filters.
CREATE FOREIGN TABLE shard1_filters (name text NOT NULL, f bloom NOT NULL)
	SERVER shard1 OPTIONS (table_name 'filters');

-- Every row of both shards, copied through the fdw: the single-server
-- reference the shard filters are compared against.
CREATE TABLE local_events AS SELECT * FROM events_all;
ANALYZE local_events;
