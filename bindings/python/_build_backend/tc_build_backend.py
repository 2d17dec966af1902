"""tc_build_backend.py - a minimal PEP 517/660 build backend for the pure-Python `tc` package.

Why not setuptools: pip builds in an isolated environment and would download the backend from
an index; this one lives in the tree (pyproject.toml: backend-path), needs only the standard
library, and so `pip install ./bindings/python` works offline. It builds a py3-none-any wheel
of the tc/ package, an editable wheel (a .pth pointing here) and an sdist; nothing else.
Name, description and requires-python come from pyproject.toml, the version from
tc/__init__.py.
"""
import base64
import hashlib
import io
import os
import re
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


def _write_wheel(wheel_directory, contents):
    """contents: [(archive path, bytes)]; adds the dist-info and returns the wheel's name."""
    name, version, metadata = _metadata()
    dist = "%s-%s" % (name.replace("-", "_"), version)
    info = dist + ".dist-info"
    contents = list(contents) + [
        (info + "/METADATA", metadata.encode()),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: tc_build_backend\n"
                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    for path, data in contents:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append(info + "/RECORD,,")
    contents.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    filename = dist + "-py3-none-any.whl"
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
    return _write_wheel(wheel_directory, files)


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
