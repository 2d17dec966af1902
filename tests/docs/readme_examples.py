"""readme_examples.py - the README's C and Python examples, as a reader would copy them: the C
block compiled with the system's cc against this build's tc.h and libtc and run (it must print
"4 5" and "10 11"), the Python block run with this build's libtc. Not the quick start (CI runs
that).

    /usr/bin/python3 tests/docs/readme_examples.py SOURCE_DIR BUILD_DIR LIBTC_SO DLPACK_INCLUDE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile


def blocks(readme, language):
    with open(readme) as f:
        return re.findall(r"```%s\n(.*?)```" % language, f.read(), re.S)


def main(source, build, library, dlpack):
    readme = os.path.join(source, "README.md")
    (c_example,) = blocks(readme, "c")
    (py_example,) = blocks(readme, "python")
    with tempfile.TemporaryDirectory() as tmp:
        c_file, program = os.path.join(tmp, "example.c"), os.path.join(tmp, "example")
        with open(c_file, "w") as f:
            f.write(c_example)
        libdir = os.path.dirname(library)
        subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", c_file, "-I" + os.path.join(source, "include"),
                        "-I" + os.path.join(build, "include"), "-I" + dlpack, "-L" + libdir, "-ltc",
                        "-Wl,-rpath," + libdir, "-o", program], check=True)
        out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
        assert out == "4 5\n10 11\n", out
        env = dict(os.environ, TC_LIBRARY=library, PYTHONPATH=os.path.join(source, "bindings", "python"))
        subprocess.run([sys.executable, "-c", py_example], check=True, env=env, cwd=tmp)
    print("readme_examples: the C example printed the product, the Python example ran")


if __name__ == "__main__":
    main(*sys.argv[1:5])
