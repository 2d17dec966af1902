"""errors.py - libtc's status codes as Python exceptions.

Every failing C call becomes an instance of one tc.Error subclass chosen by its status, carrying
the status (int), its name ("TC_ERROR_SHAPE") and libtc's full, multi-line message (read from
the thread-local tc_last_error_message() right after the failing call, on the same thread).
Subclasses also derive from the closest builtin exception (ValueError, SyntaxError, ...) so
ordinary `except` clauses work. Nothing here decides whether something is an error: libtc does.
The table of statuses is _status.py's.
"""
import re

from ._library import lib
from ._status import STATUS_NAMES

__all__ = ["Error", "TcInvalidArgumentError", "TcSyntaxError", "TcSemanticError", "TcShapeError",
           "TcUnsupportedError", "TcCompileError", "TcRuntimeError", "TcCacheError",
           "TcNoMemoryError", "TcInternalError", "STATUS_NAMES"]

# "<name>:<line>:<col>: error: <text>" on the first line, then the source line and a caret.
_LOCATION = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): error: (?P<text>[^\n]*)")


class Error(Exception):
    """A libtc call failed. status: the TC_ERROR_* code; message: libtc's full message."""

    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status
        self.status_name = STATUS_NAMES.get(status, "TC_ERROR_%d" % status)
        self.message = message

    def __str__(self):
        return "%s (%s): %s" % (lib.tc_strerror(self.status).decode(), self.status_name,
                                self.message)


class TcInvalidArgumentError(Error, ValueError):
    """TC_ERROR_INVALID_ARGUMENT: bad count, unknown entry, option or option value."""


class TcSyntaxError(Error, SyntaxError):
    """TC_ERROR_SYNTAX: the source does not parse. filename/lineno/offset/text are set from the
    message's location, so tracebacks show the source line and caret like Python's own."""

    def __init__(self, status, message):
        Error.__init__(self, status, message)
        m = _LOCATION.match(message)
        if m:
            lines = message.split("\n")
            self.msg = m.group("text")
            self.filename = m.group("file")
            self.lineno = int(m.group("line"))
            self.offset = int(m.group("col"))
            self.text = lines[1] if len(lines) > 1 else None
        else:
            self.msg = message

    __str__ = Error.__str__


class TcSemanticError(Error):
    """TC_ERROR_SEMANTIC: parses, but is not a valid TC (names, types, range inference)."""


class TcShapeError(Error, ValueError):
    """TC_ERROR_SHAPE: tensors do not match the def (dtype, rank, sizes, strides, device)."""


class TcUnsupportedError(Error, NotImplementedError):
    """TC_ERROR_UNSUPPORTED: valid, but this backend or build cannot do it."""


class TcCompileError(Error):
    """TC_ERROR_COMPILE: the backend failed to compile the kernel."""


class TcRuntimeError(Error, RuntimeError):
    """TC_ERROR_RUNTIME: execution failed (e.g. a gather index out of range)."""


class TcCacheError(Error):
    """TC_ERROR_CACHE: the kernel cache failed."""


class TcNoMemoryError(Error, MemoryError):
    """TC_ERROR_NO_MEMORY: an allocation failed."""


class TcInternalError(Error):
    """TC_ERROR_INTERNAL: a bug in libtc; please report it with the message."""


_BY_STATUS = {-1: TcInvalidArgumentError, -2: TcSyntaxError, -3: TcSemanticError,
              -4: TcShapeError, -5: TcUnsupportedError, -6: TcCompileError, -7: TcRuntimeError,
              -8: TcCacheError, -9: TcNoMemoryError, -10: TcInternalError}


def check(status):
    """Raises the tc.Error for a non-zero status returned by a libtc call on this thread."""
    if status != 0:
        raw = lib.tc_last_error_message()
        message = raw.decode("utf-8", "replace") if raw else ""
        raise _BY_STATUS.get(status, Error)(status, message)
