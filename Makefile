# bloomfilter: PGXS build.  `make && make install`, then `make installcheck`
# against a running server; `make unittest` runs the core's own tests.

EXTENSION = bloomfilter
MODULE_big = bloomfilter
# The pure core first (no PostgreSQL headers), then the glue.
OBJS = bloom.o hashbuf.o canonical.o \
	bloomvalue.o bloomexpanded.o keykind.o probecache.o plannersupport.o bloomfilter.o \
	bloom_agg.o handover.o
DATA = bloomfilter--1.0.sql
PGFILEDESC = "bloomfilter - Bloom filter data type"

REGRESS = setup io functions operators hashing keykinds environment planner aggregates errors security
# UTF8 whatever the cluster's default, so that outputs do not depend on the
# machine's locale (environment.sql makes its other databases itself).
REGRESS_OPTS = --encoding=UTF8

# The multi-second cases (sql/large.sql) run only when asked for, with
# `make installcheck REGRESS_LARGE=large` as the full scripts/test.sh does:
# the package build and autopkgtest run the light cases above.
REGRESS_LARGE =
REGRESS += $(REGRESS_LARGE)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

SHLIB_LINK += -lm

CORE_HEADERS = bloom.h bf_port.h hashbuf.h canonical.h
GLUE_HEADERS = bloomvalue.h bloomexpanded.h keykind.h probecache.h handover.h
$(OBJS): $(CORE_HEADERS) $(GLUE_HEADERS)

# The pure core's unit tests: plain cc, no PostgreSQL.
test/unit/test_bloom: test/unit/test_bloom.c test/compare_u64.h bloom.c hashbuf.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I. -o $@ test/unit/test_bloom.c bloom.c hashbuf.c -lm

.PHONY: unittest
unittest: test/unit/test_bloom
	test/unit/test_bloom

EXTRA_CLEAN = test/unit/test_bloom

# Coverage-guided fuzzing of the core's validator (clang, libFuzzer, ASan, UBSan).
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	bash test/fuzz/run.sh $(FUZZ_SECONDS)
