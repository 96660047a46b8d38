-- The table the index stress part writes to, and its bloomfilter index.
CREATE TABLE guarded (k bigint NOT NULL);
CREATE INDEX guarded_k ON guarded USING bloomfilter (k) WITH (capacity = 400000, fpr = 0.01);
