"""Build the Cython kernels of fastgen; all metadata lives in pyproject.toml.

OpenMP is probed by compiling, linking and running a tiny ``#pragma omp parallel`` program with the
real compiler (as scikit-learn's ``check_openmp_support`` does). Environment switches:

- ``FASTGEN_NO_OPENMP=1``: skip the probe, build serial kernels.
- ``FASTGEN_FAIL_NO_OPENMP=1``: fail the build when OpenMP is unavailable (CI).
- ``FASTGEN_CYTHON_DEBUG=1``: bounds/wraparound/initialisation checks on, ``-O0 -g``.

Twin modules: a kernel module ``_X_avx2.pyx`` includes the same source as ``_X.pyx`` and is built
with ``-mavx2 -mfma`` on x86-64 (``fastgen/_core/__init__.py`` imports it only on CPUs that have
both); never ``-march=native``. C and C++ the kernels need are in headers beside them
(``fastgen/_core/*.h``).
"""
import glob
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
                self.compiler.link_executable(objs, exe, extra_postargs=ldflags)
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
            opt = ["-O0", "-g"] if DEBUG else ["-O3"]
        if not self._supports_avx2(ctype):
            print("fastgen: no AVX2 builds of the kernels (not x86-64 gcc/clang)")
            self.extensions = [e for e in self.extensions if not e.name.endswith("_avx2")]
        for ext in self.extensions:
            isa = ["-mavx2", "-mfma"] if ext.name.endswith("_avx2") else []
            ext.extra_compile_args = opt + isa + (cflags if use_omp else []) + ext.extra_compile_args
            ext.extra_link_args = (ldflags if use_omp else []) + ext.extra_link_args
        super().build_extensions()

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


extensions = [
    Extension(
        "fastgen._core." + os.path.splitext(os.path.basename(path))[0],
        [path],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
    )
    for path in sorted(glob.glob(os.path.join("fastgen", "_core", "*.pyx")))
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, quiet=True, force=DEBUG),
    cmdclass={"build_ext": BuildExt},
)
