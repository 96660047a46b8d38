-- verify.sql: what must hold for the shared filters once writers are done
-- (or a crash was recovered).  One line per fact, "name|value", read by
-- run.sh; every value except the counts must be 0 for the checks to pass.

-- logged keys and filter rows, to say what was measured
SELECT 'logged', count(*) FROM added_log;
SELECT 'filters', count(*) FROM filters;

-- false negatives: committed keys their filter does not contain
SELECT 'missing', count(*)
  FROM added_log l JOIN filters f ON f.id = l.row_id
 WHERE NOT bloom_contains(f.f, l.k);

-- filters whose inserted counter differs from the adds logged for them
SELECT 'miscounted', count(*)
  FROM filters f
 WHERE (bloom_info(f.f)).inserted
       <> (SELECT count(*) FROM added_log l WHERE l.row_id = f.id);

-- filters that do not survive the validated bytea and text round trips
SELECT 'invalid', count(*)
  FROM filters
 WHERE NOT (f::bytea::bloom = f AND f::text::bloom = f);

-- false negatives seen by concurrent readers
SELECT 'probe_misses', count(*) FROM probe_misses;
