"""The address space of a test process capped, so that an allocation sized by a hostile value
(a forged dimension, a sparse file's declared length) is a MemoryError the test reports, not the
machine paging or the OOM killer picking a process."""


def cap_address_space(cap):
    """Cap this process's address space at ``cap`` bytes (or its hard limit, if lower, or its
    current soft limit, if already lower); returns a function that restores the limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return lambda: None
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        return lambda: None
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
