"""options_doc.py - docs/reference/options.md, the table of every option libtc takes, generated
from tc_option_info (through the Python binding) so that it cannot drift from the code: each
key, its allowed values, its default and its help, general options first, then each backend's.

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tools/dev/options_doc/options_doc.py [--check]

Without --check it rewrites the file; with --check it exits 1, saying how to regenerate it, where
the file differs from what the library says (the test docs.options_table).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
import tc  # noqa: E402

TARGET = os.path.join(REPO, "docs", "reference", "options.md")


def cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def table():
    lines = ["# Options", "",
             "Every option `tc_options_set` (`--option KEY=VALUE` of the `tc` tool, keyword options of the",
             "bindings) takes: its allowed values, its default and what it does. Generated from",
             "`tc_option_info` by `tools/dev/options_doc/options_doc.py`; the test `docs.options_table` fails",
             "when this file and the library differ. `tc options` prints the same.", "",
             "| key | values | default | what |", "|---|---|---|---|"]
    for o in tc.option_info():
        lines.append("| `%s` | `%s` | `%s` | %s |" % (o.key, cell(o.values), cell(o.default), cell(o.help)))
    return "\n".join(lines) + "\n"


def main(argv):
    text = table()
    if "--check" in argv:
        with open(TARGET, encoding="utf-8") as f:
            if f.read() != text:
                print("options_doc: %s differs from tc_option_info; regenerate it with: TC_LIBRARY=build/src/libtc.so "
                      "/usr/bin/python3 tools/dev/options_doc/options_doc.py" % TARGET)
                return 1
        print("options_doc: %s matches tc_option_info (%d options)" % (TARGET, len(tc.option_info())))
        return 0
    with open(TARGET, "w", encoding="utf-8") as f:
        f.write(text)
    print("options_doc: wrote %s" % TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
