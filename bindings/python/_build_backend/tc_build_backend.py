"""tc_build_backend.py - a minimal PEP 517/660 build backend for the pure-Python `tc` package.

Why not setuptools: pip builds in an isolated environment and would download the backend from
an index; this one lives in the tree (pyproject.toml: backend-path), needs only the standard
library, and so `pip install ./bindings/python` works offline. It builds a wheel of the tc/
package carrying libtc (tc/_lib/libtc.so.0, tagged for this platform) where it finds one — pip's
`--config-settings libtc=PATH`, $TC_LIBRARY at build time, else the checkout's build/src/libtc.so
that the README's set-up makes — so that `import tc` needs no environment variable; else (or with
`--config-settings libtc=none`) a py3-none-any wheel that finds an installed libtc at import. Also an editable wheel (a .pth pointing here) and an sdist; nothing else.
Name, description and requires-python come from pyproject.toml, the version from
tc/__init__.py.
"""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bindings/python
PACKAGE = "tc"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: reproducible archives


def _project():
    """[project] name, description, requires-python from pyproject.toml; version from tc."""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        text = f.read().decode("utf-8")
    try:
        import tomllib
        project = tomllib.loads(text)["project"]
    except ImportError:  # Python < 3.11: the few `key = "string"` lines of [project]
        section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M).group(1)
        project = dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', section, re.M))
    with open(os.path.join(HERE, PACKAGE, "__init__.py"), encoding="utf-8") as f:
        version = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)
    return project["name"], version, project.get("description", ""), project.get("requires-python")


def _metadata():
    name, version, summary, requires_python = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version, "Summary: " + summary]
    if requires_python:
        lines.append("Requires-Python: " + requires_python)
    return name, version, "\n".join(lines) + "\n"


def _package_files():
    """(archive path, absolute path) of every .py file of the package."""
    root = os.path.join(HERE, PACKAGE)
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                full = os.path.join(directory, f)
                yield os.path.relpath(full, HERE).replace(os.sep, "/"), full


def _native_library(config_settings):
    """The libtc.so the wheel carries: pip's `--config-settings libtc=PATH` (libtc=none: none, a
    pure-Python wheel for a prefix that has libtc installed), else $TC_LIBRARY at build time,
    else the source checkout's build (<repo>/build/src/libtc.so); None where it is no file."""
    chosen = (config_settings or {}).get("libtc") or os.environ.get("TC_LIBRARY")
    if chosen == "none":
        return None
    path = chosen or os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "src", "libtc.so")
    return os.path.realpath(path) if os.path.isfile(path) else None


def _write_wheel(wheel_directory, contents, native=False):
    """contents: [(archive path, bytes)]; adds the dist-info and returns the wheel's name. A
    wheel with a native library is tagged for this platform (py3-none-linux_x86_64)."""
    name, version, metadata = _metadata()
    dist = "%s-%s" % (name.replace("-", "_"), version)
    info = dist + ".dist-info"
    tag = "py3-none-" + (re.sub(r"[-.]", "_", sysconfig.get_platform()) if native else "any")
    contents = list(contents) + [
        (info + "/METADATA", metadata.encode()),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: tc_build_backend\nRoot-Is-Purelib: %s\nTag: %s\n"
                           % ("false" if native else "true", tag)).encode()),
    ]
    record = []
    for path, data in contents:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append(info + "/RECORD,,")
    contents.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    filename = dist + "-" + tag + ".whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in contents:
            z.writestr(zipfile.ZipInfo(path, _EPOCH), data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_sdist = get_requires_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for path, full in _package_files():
        with open(full, "rb") as f:
            files.append((path, f.read()))
    library = _native_library(config_settings)
    if library:
        with open(library, "rb") as f:
            files.append((PACKAGE + "/_lib/libtc.so.0", f.read()))
    return _write_wheel(wheel_directory, files, native=library is not None)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [("libtc_editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    name, version, metadata = _metadata()
    base = "%s-%s" % (name.replace("-", "_"), version)
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             ("_build_backend/tc_build_backend.py", os.path.abspath(__file__))]
    files += list(_package_files())
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for path, full in files:
            tar.add(full, arcname=base + "/" + path, recursive=False)
        pkg_info = tarfile.TarInfo(base + "/PKG-INFO")
        pkg_info.size = len(metadata.encode())
        tar.addfile(pkg_info, io.BytesIO(metadata.encode()))
    return filename
