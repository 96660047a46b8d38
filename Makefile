# bloomfilter: PGXS build.  `make && make install`, then `make installcheck`
# against a running server; `make unittest` runs the core's own tests.
#
# The tree is pgvector's: the pure core in src/core/ (no PostgreSQL header),
# the PostgreSQL glue in src/, the install scripts in sql/, pg_regress's and
# pg_isolation_regress's inputs and outputs in test/sql, test/specs and
# test/expected.  Paths are relative to $(srcdir), so that a VPATH build
# (Debian's: make -C build-NN -f ../Makefile VPATH=..) finds them.
#
# Run in the source tree, this Makefile makes such a build itself, in
# build/ (see "Where the server module is built" below); the client, the
# unit tests and the fuzzers are built in the source tree.

EXTENSION = bloomfilter
MODULE_big = bloomfilter
# The pure core first (src/core/, no PostgreSQL headers), then the glue (src/).
OBJS = src/core/bloom.o src/core/sizing.o src/core/hashbuf.o src/core/canonical.o src/core/qfilter.o \
	src/core/delta.o \
	src/bloomvalue.o src/largevalue.o src/bloomexpanded.o src/keykind.o src/keytypes.o src/probecache.o src/bloomprobe.o src/plannersupport.o \
	src/bloomscan.o \
	src/bloomfilter.o src/bloom_agg.o src/bloom_setagg.o src/handover.o src/hashspill.o \
	src/qfiltervalue.o src/qfilter_sql.o src/qfilter_agg.o \
	src/bloomindex.o src/bloomindexutils.o src/bloomindexbuild.o src/bloomindexinsert.o \
	src/bloomindexvacuum.o src/bloomindexopen.o src/bloomindexcopy.o src/bloomindexfuncs.o \
	src/bloomindexlog.o src/bloomindexsync.o \
	src/typmod.o
# The glue includes the core's headers by name ("bloom.h").
PG_CPPFLAGS = -I$(srcdir)/src/core
# The current version's install script is built from sql/bloomfilter.sql;
# the released versions' install scripts and the upgrade scripts between
# them are shipped as released (test/upgrade runs the chain).
source_dir := $(dir $(lastword $(MAKEFILE_LIST)))
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(source_dir)bloomfilter.control)
DATA_built = sql/bloomfilter--$(EXTVERSION).sql
DATA = sql/bloomfilter--1.0.sql $(addprefix sql/,$(notdir $(wildcard $(source_dir)sql/bloomfilter--*--*.sql)))
PGFILEDESC = "bloomfilter - Bloom filter data type"

REGRESS = setup io functions operators hashing keykinds keyshapes environment planner bloomscan aggregates aggregate_nulls growth qfilter typmods bloomindex bloomindex_edges bloomindex_sync spill qfilter_spill errors integrity security
# UTF8 whatever the cluster's default, so that outputs do not depend on the
# machine's locale (environment.sql makes its other databases itself).
# Inputs in test/sql, expected outputs in test/expected: this --inputdir
# comes after PGXS's own (--inputdir=$(srcdir)), and the last one wins.
REGRESS_OPTS = --inputdir=$(srcdir)/test --encoding=UTF8

# Interleavings of concurrent sessions (test/specs/, pg_isolation_regress,
# expected outputs in test/expected).
ISOLATION = bloomindex_copy bloomindex_states bloomscan_recheck keyshape_alter
ISOLATION_OPTS = --inputdir=$(srcdir)/test --encoding=UTF8 --load-extension=bloomfilter

# The multi-second cases (test/sql/large.sql) run only when asked for, with
# `make installcheck REGRESS_LARGE=large` as the full scripts/test.sh does:
# the package build and autopkgtest run the light cases above.
REGRESS_LARGE =
REGRESS += $(REGRESS_LARGE)

# Before PGXS, whose clean rule sees only what is set when it is included.
EXTRA_CLEAN = test/unit/test_bloom test/unit/test_qfilter test/unit/test_delta test/unit/test_follower

# The server's pg_config: PGXS's, and libpq's for the CLI.
PG_CONFIG ?= pg_config

# Where the server module is built.  Run in the source tree, make hands the
# server module's goals (all, install, installcheck, ...; every goal but the
# client's, the unit tests' and the fuzzers') to one make in $(BUILD_DIR):
# a VPATH build, as Debian's, whose objects, bloomfilter.so and pg_regress
# results stay out of the source tree.  A PGXS build in place would leave
# bloomfilter.so at the top, where python3, which looks in its current
# directory first, would import it for `import bloomfilter` instead of the
# Python module (python/bloomfilter.py); the server module's name cannot
# change, since dumps and upgraded databases name it.
ifeq ($(abspath $(source_dir)),$(CURDIR))
BUILD_DIR = build
srcdir = .
SOURCE_GOALS = client client/% install-client clean-client client-man unittest test/unit/% fuzz \
	clean distclean maintainer-clean
BUILD_GOALS := $(filter-out $(SOURCE_GOALS),$(or $(MAKECMDGOALS),all))
# What an in-place build left here: the build directory's make would find
# it through VPATH and take it for its own.
IN_PLACE = $(wildcard $(MODULE_big).so $(OBJS) $(OBJS:.o=.bc) $(DATA_built))

ifneq ($(BUILD_GOALS),)
# One make for all the goals, so that `make -j2 all install` does not run
# two in one directory at once; command-line variables (PG_CONFIG,
# with_llvm, REGRESS_LARGE) reach it through MAKEFLAGS.
.PHONY: $(BUILD_GOALS) build-goals
$(BUILD_GOALS): build-goals
	@:
build-goals:
	$(if $(IN_PLACE),rm -f $(IN_PLACE))
	mkdir -p $(BUILD_DIR)
	$(MAKE) -C $(BUILD_DIR) -f $(CURDIR)/Makefile VPATH=$(CURDIR) $(BUILD_GOALS)
endif

.PHONY: clean distclean maintainer-clean
clean:
	rm -rf $(BUILD_DIR) $(EXTRA_CLEAN)
distclean maintainer-clean: clean

else
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

SHLIB_LINK += -lm

sql/bloomfilter--$(EXTVERSION).sql: sql/bloomfilter.sql
	cp $< $@

# A VPATH build writes its objects and the built install script into src/,
# src/core/ and sql/ of the build directory, which must exist there.  The
# directories are named absolutely, so that make does not find the source
# tree's through VPATH; in an in-tree build they exist and nothing is done.
BUILD_DIRS = $(CURDIR)/src/core $(CURDIR)/sql
$(OBJS) $(patsubst %.o,%.bc,$(OBJS)) $(DATA_built): | $(BUILD_DIRS)
$(BUILD_DIRS):
	$(MKDIR_P) $@

# Soft input errors (pg_input_is_valid) exist from PostgreSQL 16 on; on 15
# that test would only show that the functions are missing.
ifeq ($(shell test $(MAJORVERSION) -ge 16 && echo yes),yes)
REGRESS += soft_input
endif
endif

CORE_HEADERS = src/core/bloom.h src/core/sizing.h src/core/bf_port.h src/core/hashbuf.h \
	src/core/canonical.h src/core/qfilter.h src/core/delta.h
GLUE_HEADERS = src/bloomvalue.h src/bloomexpanded.h src/keykind.h src/keytypes.h src/probecache.h \
	src/handover.h src/hashspill.h src/qfiltervalue.h src/bloomindex.h src/bloomscan.h src/plannersupport.h \
	src/probefunctions.h src/typmod.h src/largevalue.h
$(OBJS): $(CORE_HEADERS) $(GLUE_HEADERS)

# The pure core's unit tests: plain cc, no PostgreSQL.
test/unit/test_bloom: test/unit/test_bloom.c test/unit/unit_check.h test/compare_u64.h src/core/bloom.c src/core/sizing.c \
		src/core/hashbuf.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I$(srcdir)/src/core -o $@ $(filter %.c,$^) -lm

test/unit/test_qfilter: test/unit/test_qfilter.c test/unit/unit_check.h src/core/qfilter.c src/core/bloom.c \
		src/core/sizing.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I$(srcdir)/src/core -o $@ $(filter %.c,$^) -lm

test/unit/test_delta: test/unit/test_delta.c test/unit/unit_check.h src/core/delta.c src/core/bloom.c \
		src/core/sizing.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I$(srcdir)/src/core -o $@ $(filter %.c,$^) -lm

test/unit/test_follower: test/unit/test_follower.c test/unit/unit_check.h src/core/delta.c src/core/bloom.c \
		src/core/sizing.c src/core/canonical.c client/filter.c client/keyparse.c client/base64.c \
		client/lsn.c client/follower.c client/bloomfilter.h client/follower.c $(CORE_HEADERS)
	$(CC) -O2 -Wall -Wextra -I$(srcdir)/src/core -I$(srcdir)/client -o $@ $(sort $(filter %.c,$^)) -lm -pthread

# The wall around the core: src/core includes no PostgreSQL header.
CORE_WALL = grep -rln 'postgres.h\|postgres_fe.h\|fmgr.h' $(srcdir)/src/core

.PHONY: unittest
unittest: test/unit/test_bloom test/unit/test_qfilter test/unit/test_delta test/unit/test_follower
	@if $(CORE_WALL); then echo "src/core must include no PostgreSQL header" >&2; exit 1; fi
	test/unit/test_bloom
	test/unit/test_qfilter
	test/unit/test_delta
	test/unit/test_follower

# Coverage-guided fuzzing of the core's validator (clang, libFuzzer, ASan, UBSan).
FUZZ_SECONDS ?= 60
.PHONY: fuzz
fuzz:
	bash test/fuzz/run.sh $(FUZZ_SECONDS)

# The client library and bloomfilter-cli (client/): the core's own sources
# (src/core/) built with plain cc, no PostgreSQL server headers (the CLI
# links libpq for its sync command).  `make client`; `make
# install-client` puts the library (in LIBDIR), its header, the CLI and the
# Python module (in PYTHONDIR, which is left out when empty) under PREFIX.
# `make client` also builds the Python module's compiled half beside
# bloomfilter.py (PYTHON_MODULE, below).
# CLIENT_CPPFLAGS finds the core's headers, which client/ includes by name,
# also when CLIENT_CFLAGS is given (debian/rules gives it).
CLIENT_CFLAGS = -O2 -g -Wall -Wextra -fPIC -pthread
CLIENT_CPPFLAGS = -I$(srcdir)/src/core
CLIENT_OBJS = client/core-bloom.o client/core-sizing.o client/core-canonical.o client/core-delta.o \
	client/filter.o client/keyparse.o client/base64.o client/lsn.o client/follower.o
CLIENT_HEADERS = client/bloomfilter.h client/keyparse.h client/base64.h client/lsn.h $(CORE_HEADERS)
CLIENT_SONAME = libbloomfilter.so.1
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
PYTHONDIR ?=

# The Python module's compiled half, _bloomfilter, built by python/setup.py
# (the one description of its build, which pip uses too) from the library's
# sources, beside python/bloomfilter.py: PYTHONPATH=python then imports the
# module from the source tree.  Built for PYTHON (Debian's python3 where
# there is one: the suites run it), its objects in build/python; forced,
# since make has already found it out of date.  CLIENT_CFLAGS reach the
# compiler and, as setuptools passes CFLAGS on, the linker.
PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYTHON_EXT_SUFFIX := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PYTHON_MODULE = python/_bloomfilter$(PYTHON_EXT_SUFFIX)
PYTHON_SOURCES = python/_bloomfilter.c python/pykeys.c python/pyfilter.h python/setup.py \
	src/core/bloom.c src/core/sizing.c src/core/canonical.c src/core/delta.c \
	client/filter.c client/keyparse.c client/base64.c
.PHONY: client install-client
client: client/libbloomfilter.a client/libbloomfilter.so client/bloomfilter-cli $(PYTHON_MODULE)

client/core-%.o: src/core/%.c $(CLIENT_HEADERS)
	$(CC) $(CLIENT_CPPFLAGS) $(CLIENT_CFLAGS) -c -o $@ $<
client/%.o: client/%.c $(CLIENT_HEADERS)
	$(CC) $(CLIENT_CPPFLAGS) $(CLIENT_CFLAGS) -c -o $@ $<
client/libbloomfilter.a: $(CLIENT_OBJS)
	rm -f $@
	ar rcs $@ $^
client/$(CLIENT_SONAME): $(CLIENT_OBJS)
	$(CC) $(CLIENT_CFLAGS) -shared -Wl,-soname,$(CLIENT_SONAME) -o $@ $^ -lm
client/libbloomfilter.so: client/$(CLIENT_SONAME)
	ln -sf $(CLIENT_SONAME) $@
# bloomfilter-cli sync speaks to the server through libpq (Debian's
# libpq-dev), found through pg_config as PGXS finds the server; the
# library itself needs no libpq.
LIBPQ_CPPFLAGS = -I$(shell $(PG_CONFIG) --includedir)
LIBPQ_LIBS = -L$(shell $(PG_CONFIG) --libdir) -lpq
client/bloomfilter-cli: client/cli.c client/clisync.c client/cli.h client/libbloomfilter.a client/bloomfilter.h
	$(CC) $(LIBPQ_CPPFLAGS) $(CLIENT_CFLAGS) -o $@ client/cli.c client/clisync.c client/libbloomfilter.a \
		$(LIBPQ_LIBS) -lm

$(PYTHON_MODULE): $(PYTHON_SOURCES) $(CLIENT_HEADERS)
	cd python && CFLAGS='$(CLIENT_CFLAGS)' $(PYTHON) setup.py -q build_ext --inplace --force \
		--build-temp ../build/python/temp --build-lib ../build/python/lib

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
		install -m 644 python/bloomfilter.py $(PYTHON_MODULE) '$(DESTDIR)$(PYTHONDIR)/')

# A prerequisite of clean (the source tree's, or PGXS's in a build
# directory, where it finds nothing): the client is built in the source tree.
.PHONY: clean-client
clean-client:
	rm -f $(CLIENT_OBJS) client/libbloomfilter.a client/$(CLIENT_SONAME) \
		client/libbloomfilter.so client/bloomfilter-cli client/bloomfilter-cli.1 \
		python/_bloomfilter*.so
	rm -rf build/python python/build python/*.egg-info
clean: clean-client
