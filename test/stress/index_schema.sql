-- The table the index stress part writes to, and its bloomfilter index,
-- small enough that the writers make it grow by several segments.
CREATE TABLE guarded (k bigint NOT NULL);
CREATE INDEX guarded_k ON guarded USING bloomfilter (k) WITH (capacity = 2000, fpr = 0.01);
