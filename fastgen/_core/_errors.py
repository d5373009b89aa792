"""The exception the kernels raise when X changed during a call (_guard.pxd)."""


class XChangedError(ValueError):
    """X changed while a kernel read it (another thread wrote to it): a value it had been
    checked for was out of range when used. A counting kernel may have counted part of the
    batch by then."""
