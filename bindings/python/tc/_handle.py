"""_handle.py - what every binding object shares: C strings in and out, and _Handle, which owns
one C handle (a Program, Kernel or Options) and destroys it exactly once, when the object is
closed (close(), a `with` block) or garbage-collected."""


def _enc(text):
    """A str (or bytes) as a C string; C strings end at NUL, so one inside is an error."""
    if text is None:
        return None
    if not isinstance(text, (str, bytes)):
        raise TypeError("expected a str, got %s" % type(text).__name__)
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    if b"\0" in raw:
        raise ValueError("%r contains a NUL character, which a C string cannot hold"
                         % (text[:40] + "..." if len(text) > 40 else text))
    return raw


def _dec(raw):
    return raw.decode("utf-8", "replace")


class _Handle:
    """Owns one C handle and destroys it exactly once."""

    # The tc_*_destroy function, held by the class so that it is still there when objects are
    # collected at interpreter exit, after module globals are cleared.
    _destroy = None

    def __init__(self, handle):
        self._handle = handle

    def close(self):
        """Frees the C object now; later calls on this object fail with TcInvalidArgumentError."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._destroy(handle)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
