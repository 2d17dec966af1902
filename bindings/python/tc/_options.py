"""_options.py - tc_options and tc_option_info: Options (compile options as key=value text,
checked by libtc in set()) and option_info (every key the loaded libtc knows)."""
import collections
import ctypes

from ._handle import _Handle, _dec, _enc
from ._library import lib
from .errors import check

OptionInfo = collections.namedtuple("OptionInfo", "key values default help")
OptionInfo.__doc__ = ("an option key of the loaded libtc (tc_option_info): its key, its allowed "
                      "values as text (\"cpu|reference\", \"auto|1..64\"), its default and one "
                      "line of help")


def _option_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def option_info():
    """[OptionInfo] of every option key the loaded libtc knows (tc_option_info), in its order:
    the general keys (backend, checked, threads) first, then each backend's knobs ("cpu.tile",
    ...). Any key may be passed to Options, Program.compile or Options.set with any of its
    allowed values; keys with a dot go through a dict: prog.compile("mm", A, B,
    **{"cpu.tile": "8x2"}).

        tc.option_info()[0]   # OptionInfo(key='backend', values='cpu|reference', default='cpu',
                              #            help='which backend compiles the kernel (...)')
    """
    infos = []
    while True:
        key, values, default, help_ = (ctypes.c_char_p() for _ in range(4))
        # Past the last option libtc answers TC_ERROR_INVALID_ARGUMENT: the end of the list.
        if lib.tc_option_info(len(infos), ctypes.byref(key), ctypes.byref(values),
                              ctypes.byref(default), ctypes.byref(help_)) != 0:
            return infos
        infos.append(OptionInfo(_dec(key.value), _dec(values.value), _dec(default.value),
                                _dec(help_.value)))


class Options(_Handle):
    """tc_options: compile options as key=value strings (True/False become "1"/"0"). libtc
    checks every key and value in set(): unknown ones raise TcInvalidArgumentError.
    tc.option_info() lists the keys, their allowed values and defaults."""

    _destroy = staticmethod(lib.tc_options_destroy)

    def __init__(self, **options):
        handle = ctypes.c_void_p()
        check(lib.tc_options_create(ctypes.byref(handle)))
        _Handle.__init__(self, handle)
        for key, value in options.items():
            self.set(key, value)

    def set(self, key, value):
        check(lib.tc_options_set(self._handle, _enc(key), _enc(_option_text(value))))

    def get(self, key):
        """The value of key: what was set, else libtc's default."""
        value = ctypes.c_char_p()
        check(lib.tc_options_get(self._handle, _enc(key), ctypes.byref(value)))
        return _dec(value.value)
