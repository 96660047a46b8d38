"""Builds the compiled module _bloomfilter from the extension's sources.

The module is compiled from the same C files as the client library
(client/filter.c, keyparse.c, base64.c and the core in src/core), linked
statically into the module: nothing to look up at run time.  In the
source tree they are found beside this directory (../client, ../src/core);
an sdist carries copies of them under vendor/ (see VendoringSdist), so
that the package also builds where only this directory was shipped.

    pip install ./python                      # a venv, from the source tree
    python3 setup.py build_ext --inplace      # beside bloomfilter.py (make python)
"""

import os
import shutil

from setuptools import Extension, setup
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))

# The client library's sources, as the Makefile's CLIENT_OBJS names them,
# and the headers they include (for an sdist's copy).
LIBRARY_SOURCES = [
    "src/core/bloom.c", "src/core/sizing.c", "src/core/canonical.c", "src/core/delta.c",
    "client/filter.c", "client/keyparse.c", "client/base64.c",
]
LIBRARY_HEADERS = [
    "src/core/bloom.h", "src/core/sizing.h", "src/core/canonical.h", "src/core/delta.h",
    "src/core/bf_port.h", "src/core/hashbuf.h", "src/core/qfilter.h",
    "client/bloomfilter.h", "client/keyparse.h", "client/base64.h",
]
MODULE_SOURCES = ["_bloomfilter.c", "pykeys.c"]


def library_root():
    """Where the library's sources are, relative to this directory: the
    source tree's top, or an sdist's vendor/ copy."""
    for root in ("..", "vendor"):
        if os.path.exists(os.path.join(HERE, root, "client", "filter.c")):
            return root
    raise SystemExit("bloomfilter: the C sources (client/filter.c, src/core/) are neither in "
                     "the source tree above %s nor in its vendor/ directory" % HERE)


class VendoringSdist(sdist):
    """An sdist that carries the library's sources, which live outside this
    directory in the source tree."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = library_root()
        for path in LIBRARY_SOURCES + LIBRARY_HEADERS:
            target = os.path.join(base_dir, "vendor", path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(HERE, root, path), target)


ROOT = library_root()

setup(
    py_modules=["bloomfilter"],
    ext_modules=[
        Extension(
            "_bloomfilter",
            sources=MODULE_SOURCES + [os.path.join(ROOT, path) for path in LIBRARY_SOURCES],
            include_dirs=[os.path.join(ROOT, "client"), os.path.join(ROOT, "src", "core")],
            depends=["pyfilter.h"] + [os.path.join(ROOT, path) for path in LIBRARY_HEADERS],
            extra_compile_args=["-pthread", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
            extra_link_args=["-pthread"],
            libraries=["m"],
        ),
    ],
    cmdclass={"sdist": VendoringSdist},
)
