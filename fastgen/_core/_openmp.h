/* OpenMP when the kernels are compiled with it, else a serial stand-in (_openmp.pxd). */
#ifndef FASTGEN_OPENMP_H
#define FASTGEN_OPENMP_H
#ifdef _OPENMP
#include <omp.h>
#define FASTGEN_OPENMP 1
#else
#define FASTGEN_OPENMP 0
static int omp_get_max_threads(void) { return 1; }
#endif
#endif
