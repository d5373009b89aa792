"""Build the Cython kernels of fastgen; all metadata lives in pyproject.toml.

OpenMP is probed by compiling, linking and running a tiny ``#pragma omp parallel`` program with the
real compiler (as scikit-learn's ``check_openmp_support`` does). Environment switches:

- ``FASTGEN_NO_OPENMP=1``: skip the probe, build serial kernels.
- ``FASTGEN_FAIL_NO_OPENMP=1``: fail the build when OpenMP is unavailable (CI).
- ``FASTGEN_CYTHON_DEBUG=1``: bounds/wraparound/initialisation checks on, ``-O0 -g``; its C is
  generated in ``build/cython-debug`` so that it never stands in for the release C beside the .pyx.

Builds use every core (Cython's translation and setuptools' ``build_ext --parallel``) and reuse the
objects in ``build/`` when nothing changed: a C file that Cython regenerates identical keeps its
modification time (see ``_cythonize``), and a change of compiler flags rebuilds everything (see
``BuildExt._flags_changed``).

Twin modules: a kernel module ``_X_avx2.pyx`` includes the same source as ``_X.pyx`` and is built
with ``-mavx2 -mfma`` on x86-64 (``fastgen/_core/__init__.py`` imports it only on CPUs that have
both); never ``-march=native``. C and C++ the kernels need are in headers beside them
(``fastgen/_core/*.h``).
"""
import glob
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("FASTGEN_CYTHON_DEBUG", "0") not in ("", "0")
C_DIR = os.path.join("build", "cython-debug") if DEBUG else None  # None: the C goes beside the .pyx

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "cdivision": True,
    "initializedcheck": DEBUG,
    "nonecheck": False,
    "embedsignature": True,
}

OMP_PROGRAM = textwrap.dedent(
    """
    #include <omp.h>
    #include <stdio.h>
    int main(void) {
        int n = 0;
        #pragma omp parallel reduction(+:n)
        n += 1;
        printf("%d\\n", n);
        return n > 0 ? 0 : 1;
    }
    """
)


def _openmp_flags(compiler_type):
    """Compile/link flags for OpenMP for this compiler family."""
    if compiler_type == "msvc":
        return ["/openmp"], []
    if sys.platform == "darwin" and "-fopenmp" in os.environ.get("CPPFLAGS", ""):
        return [], ["-lomp"]
    return ["-fopenmp"], ["-fopenmp"]


class BuildExt(build_ext):
    """build_ext that adds OpenMP when a probe program compiles, links and runs."""

    def _probe_openmp(self, cflags, ldflags):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "omp_probe.c")
            with open(src, "w") as f:
                f.write(OMP_PROGRAM)
            try:
                objs = self.compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
                exe = os.path.join(tmp, "omp_probe")
                # distutils gives LDFLAGS to the linker of extensions only: the probe gets its -L,
                # -l and -Wl options too (Homebrew's libomp on macOS is found through them)
                env_ldflags = [f for f in os.environ.get("LDFLAGS", "").split()
                               if f.startswith(("-L", "-l", "-Wl,"))]
                self.compiler.link_executable(objs, exe, extra_preargs=env_ldflags,
                                              extra_postargs=ldflags)
                subprocess.run([exe], check=True, capture_output=True, timeout=60)
            except Exception as exc:  # any compiler/linker/runtime failure means "no OpenMP"
                return str(exc)
        return None

    def build_extensions(self):
        ctype = self.compiler.compiler_type
        cflags, ldflags = _openmp_flags(ctype)
        use_omp = False
        if os.environ.get("FASTGEN_NO_OPENMP", "0") not in ("", "0"):
            print("fastgen: FASTGEN_NO_OPENMP set, building without OpenMP")
        else:
            err = self._probe_openmp(cflags, ldflags)
            if err is None:
                use_omp = True
            elif os.environ.get("FASTGEN_FAIL_NO_OPENMP", "0") not in ("", "0"):
                raise RuntimeError(f"fastgen: OpenMP probe failed and FASTGEN_FAIL_NO_OPENMP is set: {err}")
            else:
                print(
                    "WARNING fastgen: this compiler cannot build OpenMP programs; the kernels are built "
                    f"serial (n_threads is always 1). Probe error: {err}",
                    file=sys.stderr,
                )
        if ctype == "msvc":
            opt = ["/Od"] if DEBUG else ["/O2"]
        else:
            # -g0 overrides the -g of Python's own CFLAGS: debug information made the release
            # modules 4.5x larger (22 MB installed, an 8.7 MB wheel) and changes no code
            opt = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]
        if not self._supports_avx2(ctype):
            print("fastgen: no AVX2 builds of the kernels (not x86-64 gcc/clang)")
            self.extensions = [e for e in self.extensions if not e.name.endswith("_avx2")]
        for ext in self.extensions:
            isa = ["-mavx2", "-mfma"] if ext.name.endswith("_avx2") else []
            ext.extra_compile_args = opt + isa + (cflags if use_omp else []) + ext.extra_compile_args
            ext.extra_link_args = (ldflags if use_omp else []) + ext.extra_link_args
        stamp = os.path.join(self.build_temp, "fastgen-flags.json")
        flags = json.dumps(
            [[e.name, e.sources, e.extra_compile_args, e.extra_link_args] for e in self.extensions]
        )
        if self._flags_changed(stamp, flags):
            self.force = True
            # The stamp names the flags of every module in build/ only once a build has finished: a
            # build with other flags that fails or is interrupted leaves some modules built with
            # them, and the next build with the old flags must not find the old stamp and keep them
            if os.path.exists(stamp):
                os.remove(stamp)
        super().build_extensions()
        os.makedirs(self.build_temp, exist_ok=True)
        with open(stamp, "w") as f:
            f.write(flags)

    @staticmethod
    def _flags_changed(stamp, flags):
        """Whether the last build in this build directory used other sources or flags.

        setuptools rebuilds an extension only when a source is newer than its library, so without
        this a build switching OpenMP or debug mode on or off would keep the previous objects.
        """
        try:
            with open(stamp) as f:
                return f.read() != flags
        except OSError:
            return True

    def _supports_avx2(self, compiler_type):
        """x86-64 with a gcc-compatible compiler accepting -mavx2 -mfma (the runtime check that
        the CPU has them is in fastgen/_core/_typedefs.h)."""
        if compiler_type == "msvc" or platform.machine().lower() not in ("x86_64", "amd64"):
            return False
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "avx2_probe.c")
            with open(src, "w") as f:
                f.write("int main(void) { return 0; }\n")
            try:
                self.compiler.compile([src], output_dir=tmp, extra_postargs=["-mavx2", "-mfma"])
            except Exception:
                return False
        return True


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def _cythonize(extensions):
    """cythonize on every core, keeping the modification time of a C file regenerated identical.

    Cython regenerates a module's C when any file it depends on is newer than that C, and those
    files include the .pxd files Cython ships (``libc``, ``cpython``), which an isolated build
    (pip's default) installs anew each time. The C it writes is then byte for byte the same; its old
    time lets setuptools see that the compiled module is up to date instead of compiling everything
    again (``pip install .`` followed by ``pip install ".[test]"`` compiled twice).
    """
    c_dir = os.path.join(C_DIR, "fastgen", "_core") if C_DIR else os.path.join("fastgen", "_core")
    before = {
        path: (os.stat(path).st_mtime_ns, _digest(path))
        for pattern in ("*.c", "*.cpp")
        for path in glob.glob(os.path.join(c_dir, pattern))
    }
    modules = cythonize(extensions, compiler_directives=DIRECTIVES, build_dir=C_DIR,
                        nthreads=os.cpu_count() or 1, quiet=True)
    for path, (mtime, digest) in before.items():
        if os.path.exists(path) and os.stat(path).st_mtime_ns != mtime and _digest(path) == digest:
            os.utime(path, ns=(mtime, mtime))
    return modules


# Guarded: cythonize's worker processes are spawned on macOS and Windows, and a spawned process runs
# the main script again (as __mp_main__); without the guard `python setup.py build_ext --inplace`
# cythonized again in every worker, which failed (BrokenProcessPool). setuptools' PEP 517 backend
# runs this file as __main__.
if __name__ == "__main__":
    extensions = [
        Extension(
            "fastgen._core." + os.path.splitext(os.path.basename(path))[0],
            [path],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
        )
        for path in sorted(glob.glob(os.path.join("fastgen", "_core", "*.pyx")))
    ]

    setup(
        ext_modules=_cythonize(extensions),
        cmdclass={"build_ext": BuildExt},
        options={"build_ext": {"parallel": True}},  # one compiler process per core
    )
