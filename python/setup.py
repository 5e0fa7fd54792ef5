"""Builds the adstore Python module: the C library first, through the
project's CMake (a Release build of the static library only, in setuptools'
build directory), then the extension linked against it.

    pip install ./python --no-build-isolation     (Debian: python3-pip, python3-setuptools,
                                                   python3-dev, and tools/setup.sh's packages)
"""

import os
import shlex
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCES = ["module.c", "errors.c", "values.c", "record.c", "expr.c", "store.c", "cursor.c", "load.c"]
PKG_MODULES = ["lmdb", "msgpack", "libpcre2-8", "libxxhash"]


def pkg_config(*args):
    out = subprocess.run(["pkg-config", *args, *PKG_MODULES], check=True, capture_output=True,
                         text=True).stdout
    return shlex.split(out)


class BuildWithLibrary(build_ext):
    """Build libadstore.a with CMake, then the extension against it."""

    def run(self):
        if not (ROOT / "CMakeLists.txt").exists():
            raise SystemExit("adstore: setup.py builds from the source tree (python/ inside it)")
        lib_dir = Path(self.build_temp).resolve() / "libadstore"
        jobs = os.environ.get("ADS_BUILD_JOBS", "2")
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(lib_dir), "-DCMAKE_BUILD_TYPE=Release",
                        "-DADS_BUILD_TESTS=OFF", "-DADS_PYTHON=OFF"], check=True)
        subprocess.run(["cmake", "--build", str(lib_dir), "--target", "adstore", "-j", jobs],
                       check=True)
        for ext in self.extensions:
            ext.extra_objects.append(str(lib_dir / "libadstore.a"))
            ext.extra_link_args.extend(pkg_config("--libs"))
        super().run()


setup(
    ext_modules=[Extension(
        "adstore._adstore",
        sources=[os.path.join("adstore", s) for s in SOURCES],
        include_dirs=[str(ROOT / "include"), str(ROOT)],
        define_macros=[("_GNU_SOURCE", None)],
        extra_compile_args=["-std=c11", "-Wno-missing-field-initializers"],
        libraries=["pthread", "m"],
    )],
    cmdclass={"build_ext": BuildWithLibrary},
)
