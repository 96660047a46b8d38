# bloomfilter: PGXS build.  `make && make install`, then `make installcheck`
# against a running server; `make unittest` runs the core's own tests.

EXTENSION = bloomfilter
MODULE_big = bloomfilter
# The pure core first (no PostgreSQL headers), then the glue.
OBJS = bloom.o sizing.o hashbuf.o canonical.o qfilter.o \
	bloomvalue.o bloomexpanded.o keykind.o probecache.o plannersupport.o bloomfilter.o \
	bloom_agg.o bloom_setagg.o handover.o hashspill.o qfilter_sql.o qfilter_agg.o \
	bloomindex.o bloomindexutils.o bloomindexbuild.o bloomindexinsert.o bloomindexvacuum.o \
	bloomindexopen.o bloomindexcopy.o bloomindexfuncs.o typmod.o
# The current version's install script is built from bloomfilter.sql; the
# released versions' install scripts and the upgrade scripts between them
# are shipped as released (test/upgrade runs the chain).
source_dir := $(dir $(lastword $(MAKEFILE_LIST)))
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(source_dir)bloomfilter.control)
DATA_built = bloomfilter--$(EXTVERSION).sql
DATA = bloomfilter--1.0.sql $(notdir $(wildcard $(source_dir)bloomfilter--*--*.sql))
PGFILEDESC = "bloomfilter - Bloom filter data type"

REGRESS = setup io functions operators hashing keykinds keyshapes environment planner aggregates growth qfilter typmods bloomindex bloomindex_edges spill qfilter_spill errors security
# UTF8 whatever the cluster's default, so that outputs do not depend on the
# machine's locale (environment.sql makes its other databases itself).
REGRESS_OPTS = --encoding=UTF8

# Interleavings of concurrent sessions (specs/, pg_isolation_regress).
ISOLATION = bloomindex_copy bloomindex_states
ISOLATION_OPTS = --encoding=UTF8 --load-extension=bloomfilter

# The multi-second cases (sql/large.sql) run only when asked for, with
# `make installcheck REGRESS_LARGE=large` as the full scripts/test.sh does:
# the package build and autopkgtest run the light cases above.
REGRESS_LARGE =
REGRESS += $(REGRESS_LARGE)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

SHLIB_LINK += -lm

bloomfilter--$(EXTVERSION).sql: bloomfilter.sql
	cp $< $@

# Soft input errors (pg_input_is_valid) exist from PostgreSQL 16 on; on 15
# that test would only show that the functions are missing.
ifeq ($(shell test $(MAJORVERSION) -ge 16 && echo yes),yes)
REGRESS += soft_input
endif

CORE_HEADERS = bloom.h sizing.h bf_port.h hashbuf.h canonical.h qfilter.h
GLUE_HEADERS = bloomvalue.h bloomexpanded.h keykind.h probecache.h handover.h hashspill.h \
	qfiltervalue.h bloomindex.h
$(OBJS): $(CORE_HEADERS) $(GLUE_HEADERS)

# The pure core's unit tests: plain cc, no PostgreSQL.
test/unit/test_bloom: test/unit/test_bloom.c test/compare_u64.h bloom.c sizing.c hashbuf.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I. -o $@ test/unit/test_bloom.c bloom.c sizing.c hashbuf.c -lm

test/unit/test_qfilter: test/unit/test_qfilter.c qfilter.c bloom.c sizing.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I. -o $@ test/unit/test_qfilter.c qfilter.c bloom.c sizing.c -lm

.PHONY: unittest
unittest: test/unit/test_bloom test/unit/test_qfilter
	test/unit/test_bloom
	test/unit/test_qfilter

EXTRA_CLEAN = test/unit/test_bloom test/unit/test_qfilter

# Coverage-guided fuzzing of the core's validator (clang, libFuzzer, ASan, UBSan).
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	bash test/fuzz/run.sh $(FUZZ_SECONDS)

# The client library and bloomfilter-cli (client/): the core's own sources
# built with plain cc, no PostgreSQL.  `make client`; `make install-client`
# puts the library (in LIBDIR), its header, the CLI and the Python module
# (in PYTHONDIR, which is left out when empty) under PREFIX.
CLIENT_CFLAGS = -O2 -g -Wall -Wextra -fPIC -pthread -I.
CLIENT_OBJS = client/core-bloom.o client/core-sizing.o client/core-canonical.o client/filter.o \
	client/keyparse.o client/base64.o
CLIENT_HEADERS = client/bloomfilter.h client/keyparse.h client/base64.h $(CORE_HEADERS)
CLIENT_SONAME = libbloomfilter.so.1
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
PYTHONDIR ?=

.PHONY: client install-client
client: client/libbloomfilter.a client/libbloomfilter.so client/bloomfilter-cli

client/core-%.o: %.c $(CLIENT_HEADERS)
	$(CC) $(CLIENT_CFLAGS) -c -o $@ $<
client/%.o: client/%.c $(CLIENT_HEADERS)
	$(CC) $(CLIENT_CFLAGS) -c -o $@ $<
client/libbloomfilter.a: $(CLIENT_OBJS)
	rm -f $@
	ar rcs $@ $^
client/$(CLIENT_SONAME): $(CLIENT_OBJS)
	$(CC) $(CLIENT_CFLAGS) -shared -Wl,-soname,$(CLIENT_SONAME) -o $@ $^ -lm
client/libbloomfilter.so: client/$(CLIENT_SONAME)
	ln -sf $(CLIENT_SONAME) $@
client/bloomfilter-cli: client/cli.c client/libbloomfilter.a client/bloomfilter.h
	$(CC) $(CLIENT_CFLAGS) -o $@ client/cli.c client/libbloomfilter.a -lm

# The CLI's manual page, made from its --help by help2man (the Debian
# package's; not part of `make client`, so building needs no help2man).
.PHONY: client-man
client-man: client/bloomfilter-cli.1
client/bloomfilter-cli.1: client/bloomfilter-cli
	help2man --no-info --no-discard-stderr \
		--name='Bloom filters of the bloomfilter PostgreSQL extension, outside the server' \
		--output=$@ ./client/bloomfilter-cli

install-client: client
	install -d '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(PREFIX)/include' '$(DESTDIR)$(PREFIX)/bin'
	install -m 644 client/libbloomfilter.a '$(DESTDIR)$(LIBDIR)/'
	install -m 755 client/$(CLIENT_SONAME) '$(DESTDIR)$(LIBDIR)/'
	ln -sf $(CLIENT_SONAME) '$(DESTDIR)$(LIBDIR)/libbloomfilter.so'
	install -m 644 client/bloomfilter.h '$(DESTDIR)$(PREFIX)/include/bloomfilter.h'
	install -m 755 client/bloomfilter-cli '$(DESTDIR)$(PREFIX)/bin/'
	$(if $(PYTHONDIR),install -d '$(DESTDIR)$(PYTHONDIR)' && \
		install -m 644 python/bloomfilter.py '$(DESTDIR)$(PYTHONDIR)/')

# A prerequisite of PGXS's clean: EXTRA_CLEAN set after including PGXS is
# not seen by its clean rule.
.PHONY: clean-client
clean-client:
	rm -f $(CLIENT_OBJS) client/libbloomfilter.a client/$(CLIENT_SONAME) \
		client/libbloomfilter.so client/bloomfilter-cli client/bloomfilter-cli.1
clean: clean-client
