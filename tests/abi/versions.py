"""versions.py - the version every binding states against the one in CMakeLists.txt
(`project(libtc VERSION X.Y.Z)`, from which tc_version.h is generated): the Python package's
__version__, the Rust crate's and the Julia package's version, the generated header's
LIBTC_VERSION_STRING, and the built library's tc_version_string(). A release changes the one
line in CMakeLists.txt and these three files with it; this test fails until all agree.

    /usr/bin/python3 tests/abi/versions.py SOURCE_DIR BUILD_DIR/include/tc/tc_version.h LIBTC_SO
"""
import ctypes
import re
import sys


def found(path, pattern):
    with open(path) as f:
        m = re.search(pattern, f.read(), re.MULTILINE)
    if not m:
        raise SystemExit("versions: no version in %s (%s)" % (path, pattern))
    return m.group(1)


def main(source, header, library):
    want = found(source + "/CMakeLists.txt", r"^project\(libtc VERSION (\d+\.\d+\.\d+)")
    stated = {
        "bindings/python/tc/__init__.py": found(source + "/bindings/python/tc/__init__.py", r'^__version__ = "([^"]+)"'),
        "bindings/rust/Cargo.toml": found(source + "/bindings/rust/Cargo.toml", r'^version = "([^"]+)"'),
        "bindings/julia/TensorComprehensions/Project.toml":
            found(source + "/bindings/julia/TensorComprehensions/Project.toml", r'^version = "([^"]+)"'),
        "tc_version.h": found(header, r'^#define LIBTC_VERSION_STRING "([^"]+)"'),
    }
    lib = ctypes.CDLL(library)
    lib.tc_version_string.restype = ctypes.c_char_p
    stated["tc_version_string()"] = lib.tc_version_string().decode()
    wrong = {k: v for k, v in stated.items() if v != want}
    for k, v in stated.items():
        print("%-50s %s%s" % (k, v, "" if v == want else "   (CMakeLists.txt says %s)" % want))
    if wrong:
        raise SystemExit("versions: %d of %d differ from CMakeLists.txt's %s" % (len(wrong), len(stated), want))
    print("versions: all %d agree with CMakeLists.txt's %s" % (len(stated), want))


if __name__ == "__main__":
    main(*sys.argv[1:4])
