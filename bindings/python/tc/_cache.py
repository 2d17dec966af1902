"""_cache.py - the compilation cache from Python: tc_cache_export and _import, the remote
tier's tc_cache_push and _pull, and tc_cache_list, _verify and _clear (CacheRecord,
CacheTrial, CacheDamage)."""
import collections
import contextlib
import ctypes
import os

from . import _library
from ._handle import _dec, _enc
from ._library import lib
from ._options import Options
from .errors import check

CacheRecord = collections.namedtuple(
    "CacheRecord", "key_hash key def_ sizes backend target knobs best_ms default_ms candidates date "
                   "libtc family artefact_bytes history")
CacheRecord.__doc__ = ("one record of a compilation cache (tc_cache_entry): def_ is the def's "
                       "name, sizes \"M=64 K=32 N=48\", knobs the tuned values as options take "
                       "them, best_ms and default_ms the median times, history the key's tuning "
                       "history as CacheTrial tuples (timed fastest first, then failures)")
CacheTrial = collections.namedtuple("CacheTrial", "knobs outcome ms why date")
CacheTrial.__doc__ = ("one candidate of a tuning history (tc_cache_history_entry): outcome is "
                      "\"measured\", \"cut-off\", \"compile-failed\", \"run-failed\" or "
                      "\"wrong-result\"; ms the median (cut-off: its one run; failures: 0)")
CacheDamage = collections.namedtuple("CacheDamage", "id why")
CacheDamage.__doc__ = "a damaged cache entry: \"record <hash>\" or \"history <hash>:<hash>\", and why"


def _dir(cache_dir):
    if cache_dir is None:
        return None
    return _enc(os.fspath(cache_dir))


def cache_export(file, cache_dir=None):
    """Writes every record of a compilation cache (cache_dir None: the default that option
    cache="auto" uses) into one portable file, whole or not at all (tc_cache_export). Paths may
    be str or os.PathLike. Raises TcCacheError naming the path and the problem."""
    check(lib.tc_cache_export(_dir(cache_dir), _enc(os.fspath(file))))


def cache_import(file, cache_dir=None):
    """Merges a file written by cache_export into a compilation cache (cache_dir None: the
    default; created 0700 if missing), keeping the faster entry per key (tc_cache_import).
    Records tuned for another target are kept but not used here. Raises TcCacheError for a
    file that is not such an export, naming the path and the problem."""
    check(lib.tc_cache_import(_dir(cache_dir), _enc(os.fspath(file))))


def _remote_options(remote, remote_key, options):
    """Options naming the remote tier: cache.remote=remote, cache.remote_key=remote_key."""
    opts = dict(options)
    opts["cache.remote"] = remote
    if remote_key is not None:
        opts["cache.remote_key"] = os.fspath(remote_key)
    return Options(**opts)


def cache_push(remote, remote_key, cache_dir=None, **options):
    """Copies every record and tuning history entry of a local compilation cache (cache_dir
    None: the default) to the remote tier at `remote` ("redis://HOST:PORT[/DB]" or
    "unix:///PATH"), signing each with the secret in the file `remote_key` (tc_cache_push); the
    remote keeps the faster record per key. Returns the number of records it stored. Further
    options, e.g. **{"cache.remote_timeout": 1000}. Raises TcCacheError naming the server, the
    key file or the cache."""
    count = ctypes.c_size_t()
    with _remote_options(remote, remote_key, options) as opts:
        check(lib.tc_cache_push(_dir(cache_dir), opts._handle, ctypes.byref(count)))
    return count.value


def cache_pull(remote, remote_key, cache_dir=None, **options):
    """The other way: the remote tier's records whose signature verifies, and their history,
    into a local cache (created 0700 if missing), keeping the faster per key (tc_cache_pull).
    Returns the number of records stored locally."""
    count = ctypes.c_size_t()
    with _remote_options(remote, remote_key, options) as opts:
        check(lib.tc_cache_pull(_dir(cache_dir), opts._handle, ctypes.byref(count)))
    return count.value


@contextlib.contextmanager
def _listing(cache_dir, remote=None, remote_key=None):
    """A tc_cache_listing of the cache (or of the remote tier), destroyed on leaving the block."""
    handle = ctypes.c_void_p()
    if remote is None:
        check(lib.tc_cache_list(ctypes.byref(handle), _dir(cache_dir)))
    else:
        with _remote_options(remote, remote_key, {}) as opts:
            check(lib.tc_cache_list_remote(ctypes.byref(handle), opts._handle))
    try:
        yield handle
    finally:
        lib.tc_cache_listing_destroy(handle)


def cache_list(cache_dir=None, remote=None, remote_key=None):
    """Every sound record of a compilation cache (cache_dir None: the default) with its tuning
    history, as CacheRecord tuples in key-hash order (tc_cache_list). Raises TcCacheError for a
    directory without a cache ("no cache at ..."); damaged entries are left out (cache_verify
    names them). With remote (and remote_key, as for cache_push): the remote tier's records
    whose signature verifies (tc_cache_list_remote)."""
    records = []
    with _listing(cache_dir, remote, remote_key) as h:
        count = ctypes.c_size_t()
        check(lib.tc_cache_listing_count(h, ctypes.byref(count)))
        for i in range(count.value):
            e = _library.CacheEntry()
            check(lib.tc_cache_listing_entry(h, i, ctypes.byref(e)))
            history = []
            for j in range(e.history_count):
                t = _library.CacheHistoryEntry()
                check(lib.tc_cache_listing_history(h, i, j, ctypes.byref(t)))
                history.append(CacheTrial(_dec(t.knobs), _dec(t.outcome), t.ms, _dec(t.why), _dec(t.date)))
            records.append(CacheRecord(_dec(e.key_hash), _dec(e.key), _dec(e.def_), _dec(e.sizes),
                                       _dec(e.backend), _dec(e.target), _dec(e.knobs), e.best_ms,
                                       e.default_ms, e.candidates, _dec(e.date), _dec(e.libtc),
                                       _dec(e.family), e.artefact_bytes, tuple(history)))
    return records


def cache_verify(cache_dir=None, remote=None, remote_key=None):
    """Checks every record and history entry of a compilation cache (checksum, encoding,
    schema, stored under its own key) and returns the damaged ones as CacheDamage tuples; an
    empty list means the cache is sound. Raises TcCacheError for a directory without a cache.
    With remote (and remote_key): the remote tier's, whose records must also carry a valid
    signature ("signature does not verify ..." for one signed with another key or changed)."""
    with _listing(cache_dir, remote, remote_key) as h:
        count = ctypes.c_size_t()
        check(lib.tc_cache_listing_damage_count(h, ctypes.byref(count)))
        damage = []
        for i in range(count.value):
            ident, why = ctypes.c_char_p(), ctypes.c_char_p()
            check(lib.tc_cache_listing_damage(h, i, ctypes.byref(ident), ctypes.byref(why)))
            damage.append(CacheDamage(_dec(ident.value), _dec(why.value)))
    return damage


def cache_clear(cache_dir=None):
    """Removes every record and history entry of a compilation cache in one transaction; the
    files stay (tc_cache_clear). Raises TcCacheError for a directory without a cache."""
    check(lib.tc_cache_clear(_dir(cache_dir)))
