-- regressions.sql: queries that crashed the server or raised an internal
-- error, replayed by run.sh before its random queries, each in a
-- transaction of its own (rolled back), as role smith in a copy of the
-- database schema.sql makes.  Each must end with no crash and no XX000 from
-- the extension's code; an ordinary error is fine.
--
-- A case is a paragraph: "--" lines saying what it is and where it was
-- found (seed, or the report), then its statements, with no blank line
-- inside.  Keep the query as sqlsmith wrote it, and add a short form when
-- one is known.

-- qfilter_union_agg of only NULLs (signal 11, qfilter_agg.c), as reported
SELECT qfilter_union_agg(NULL::qfilter) FROM generate_series(1, 3);

-- qfilter_union_agg of only NULLs in a window, as sqlsmith writes it (seed 1)
select public.qfilter_union_agg(
      cast(cast(null as public.qfilter) as public.qfilter)) over (partition by ref_0.day order by ref_0.k) as c0,
  ref_0.k as c1
from public.by_day as ref_0
limit 101;

-- qfilter_union_agg of only NULLs in parallel: partial states of only NULLs
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT qfilter_union_agg(q), bloom_union_agg(f), bloom_intersection_agg(fixed)
FROM filters WHERE kind = 'null';
