-- Installs the oldest shipped version and updates through the whole chain,
-- so every upgrade script runs in every regression run.  The other tests
-- then exercise the updated extension.  The chain must end at the version
-- a plain CREATE EXTENSION installs (the control file's default_version, as
-- the server finds it; pg_available_extensions does not see the package
-- build's staged files).
CREATE EXTENSION bloomfilter;
SELECT extversion AS default_version FROM pg_extension WHERE extname = 'bloomfilter' \gset
DROP EXTENSION bloomfilter;
CREATE EXTENSION bloomfilter VERSION '1.0';
ALTER EXTENSION bloomfilter UPDATE;
SELECT extversion = :'default_version' AS at_default_version
FROM pg_extension WHERE extname = 'bloomfilter';
-- Every object of the extension has a description (\dd, \do+, \dC+).
-- From PostgreSQL 17 on, bloom's array type is listed as a member too; like
-- every array type, it goes without one.
SELECT pg_describe_object(classid, objid, objsubid) AS undescribed
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')
  AND obj_description(objid, classid::regclass::name) IS NULL
  AND NOT (classid = 'pg_type'::regclass AND objid IN (SELECT typarray FROM pg_type))
ORDER BY 1;
SELECT count(*) > 60 AS many_members
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter');
