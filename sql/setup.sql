-- Installs the oldest shipped version and updates through the whole chain,
-- so every upgrade script runs in every regression run.  The other tests
-- then exercise the updated extension.
CREATE EXTENSION bloomfilter VERSION '1.0';
ALTER EXTENSION bloomfilter UPDATE;
SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'bloomfilter')
       AS at_default_version
FROM pg_extension WHERE extname = 'bloomfilter';
