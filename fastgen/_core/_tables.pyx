# Design: the feature-major log tables the scoring kernels read, built from the class-major counts
# (n_classes, n_features) that the counting kernels write.
#  a) Text counts are mostly zero, and a zero count's entry is a sum of a per-feature and a
#     per-class term. So a table is written in two steps: every entry gets that sum, then the
#     nonzero counts' entries are overwritten. Their values are computed by the caller with NumPy's
#     vectorised log on compact arrays (a scalar libm log per entry is several times slower).
#  b) nonzero_counts lists the nonzero counts class by class (class_ptr, feature, value), in
#     feature order within a class, so per-class sums over them (segment_sums) are deterministic.
#  c) Every argument was validated by the caller; the kernels only read and write.
from cython cimport floating
from cython.parallel cimport prange

from ._typedefs cimport float64_t, intp_t


def nonzero_counts(
    const float64_t[:, ::1] count,       # IN (n_classes, n_features)
    const float64_t[::1] class_total,    # IN (n_classes,), used when with_rest
    bint with_rest,
    intp_t[::1] class_ptr_out,           # OUT (n_classes + 1,)
    intp_t[::1] feature_out,             # OUT (n_classes * n_features,) capacity
    float64_t[::1] value_out,            # OUT same capacity: the nonzero count
    float64_t[::1] rest_out,             # OUT same capacity (if with_rest): class_total - count
):
    """List the nonzero counts class by class, in feature order, in one branch-free pass: entries
    class_ptr_out[c]:class_ptr_out[c + 1] of the outputs belong to class c. rest_out (clamped at 0,
    as weighted sums may round below) serves models that also need the complement count."""
    cdef intp_t n_classes = count.shape[0], n_features = count.shape[1]
    cdef intp_t c, j, m = 0
    cdef double f, rest
    with nogil:
        for c in range(n_classes):
            class_ptr_out[c] = m
            for j in range(n_features):
                # written at m for every entry, kept only for nonzeros (m stays < capacity)
                f = count[c, j]
                feature_out[m] = j
                value_out[m] = f
                if with_rest:
                    rest = class_total[c] - f
                    rest_out[m] = rest if rest > 0 else 0.0
                m += f != 0
        class_ptr_out[n_classes] = m


def segment_sums(
    const float64_t[::1] values,  # IN (class_ptr[-1],)
    const intp_t[::1] class_ptr,  # IN (n_classes + 1,)
    const float64_t[::1] shift,   # IN (n_classes,)
    float64_t[::1] out,           # OUT (n_classes,)
):
    """out[c] = sum of (values[k] - shift[c]) for k in class_ptr[c]:class_ptr[c + 1], in order
    (subtracting before summing keeps the terms small, so nothing cancels)."""
    cdef intp_t c, k
    cdef double s, d
    with nogil:
        for c in range(class_ptr.shape[0] - 1):
            s = 0.0
            d = shift[c]
            for k in range(class_ptr[c], class_ptr[c + 1]):
                s += values[k] - d
            out[c] = s


def fill_table(
    const float64_t[:] feature_term,  # IN (n_features,), may be a stride-0 broadcast
    const float64_t[::1] class_term,  # IN (n_classes,)
    const intp_t[::1] class_ptr,      # IN (n_classes + 1,)
    const intp_t[::1] feature,        # IN (class_ptr[-1],)
    const float64_t[::1] value,       # IN (class_ptr[-1],)
    const float64_t[::1] value_class_term,  # IN (n_classes,)
    floating[:, ::1] table_out,       # OUT (n_features, n_classes)
    int n_threads,
):
    """table_out[j, c] = feature_term[j] + class_term[c], except at the listed nonzero counts:
    table_out[feature[k], c] = value[k] + value_class_term[c] for k in class_ptr[c]:class_ptr[c+1]."""
    cdef intp_t n_features = table_out.shape[0], n_classes = table_out.shape[1]
    cdef intp_t j, c, k
    cdef double t, vt
    for j in prange(n_features, nogil=True, schedule="static", num_threads=n_threads):
        t = feature_term[j]
        for c in range(n_classes):
            table_out[j, c] = <floating> (t + class_term[c])
    with nogil:
        for c in range(n_classes):
            vt = value_class_term[c]
            for k in range(class_ptr[c], class_ptr[c + 1]):
                table_out[feature[k], c] = <floating> (value[k] + vt)
