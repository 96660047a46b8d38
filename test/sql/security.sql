-- The extension is trusted: a non-superuser with CREATE on the database can
-- install it, and its install script is safe under a hostile search_path
-- (it references only its own objects and pg_catalog, which is searched
-- first; it defines nothing SECURITY DEFINER).
\set VERBOSITY terse
-- quietly: how many objects go with it depends on the tests before this one
SET client_min_messages = warning;
DROP EXTENSION bloomfilter CASCADE;
RESET client_min_messages;
SELECT count(*) AS security_definer_functions
FROM pg_proc WHERE prosecdef AND proname LIKE 'bloom%';

CREATE ROLE bloom_tenant LOGIN;
DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO bloom_tenant', current_database()); END $$;
SET ROLE bloom_tenant;
CREATE SCHEMA tenant_schema;
CREATE SCHEMA decoys;
-- decoys an attacker could plant ahead of the target schema: types named
-- like the ones the install script uses
CREATE TYPE decoys.bytea AS (x integer);
CREATE TYPE decoys.float8 AS (x integer);
SET search_path = decoys, tenant_schema, public;
CREATE EXTENSION bloomfilter SCHEMA tenant_schema;
SELECT extname, extnamespace::regnamespace AS schema FROM pg_extension WHERE extname = 'bloomfilter';
SELECT tenant_schema.bloom_contains(tenant_schema.bloom_add(tenant_schema.bloom_empty(100), 42), 42) AS tenant_can_use;
SELECT casttarget = 'pg_catalog.bytea'::regtype AS cast_targets_catalog_bytea FROM pg_cast
WHERE castsource = 'tenant_schema.bloom'::regtype AND casttarget <> castsource;
SELECT proargtypes[1] = 'pg_catalog.float8'::regtype AS fpr_is_catalog_float8 FROM pg_proc
WHERE proname = 'bloom_empty' AND pronamespace = 'tenant_schema'::regnamespace;
CREATE TABLE tenant_schema.t AS SELECT tenant_schema.bloom_agg(i) AS f FROM generate_series(1, 100) i;
SELECT f @> 50 AS aggregate_works FROM tenant_schema.t;
RESET search_path;
DROP EXTENSION bloomfilter CASCADE;
RESET ROLE;
DROP SCHEMA decoys CASCADE;
DROP SCHEMA tenant_schema CASCADE;
DO $$ BEGIN EXECUTE format('REVOKE CREATE ON DATABASE %I FROM bloom_tenant', current_database()); END $$;
DROP ROLE bloom_tenant;
