"""test_options.py - tc.option_info(), the binding's face of tc_option_info: the option keys of
the loaded libtc (general keys first, then each backend's knobs), with allowed values,
default and help, all of which the options mechanism (tc.Options, Program.compile) accepts.
Needs no NumPy: tensors are tc.Tensor.

Run: TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python /usr/bin/python3 -m unittest
(ctest does this: bindings.python.test_options).
"""
import unittest

import tc


class OptionInfo(unittest.TestCase):
    def setUp(self):
        self.infos = tc.option_info()
        self.keys = [info.key for info in self.infos]

    def test_backend_first_then_general_keys_then_knobs(self):
        self.assertEqual(self.infos[0].key, "backend")
        self.assertEqual(self.infos[0].values, "cpu|reference|cuda")
        self.assertEqual(self.keys[:4], ["backend", "checked", "threads", "cache"])
        self.assertIn("cpu.tile", self.keys)
        general = [key for key in self.keys if "." not in key]
        knobs = [i for i, key in enumerate(self.keys) if "." in key]
        self.assertEqual(knobs, list(range(len(general), len(self.keys))))  # knobs after the general keys

    def test_entries_are_named_tuples_of_strings(self):
        self.assertEqual(len(set(self.keys)), len(self.keys))  # each key once
        for info in self.infos:
            self.assertIsInstance(info, tc.OptionInfo)
            self.assertEqual(info._fields, ("key", "values", "default", "help"))
            key, values, default, help_ = info
            for text in info:
                self.assertIsInstance(text, str)
                self.assertTrue(text, info)
            self.assertEqual((key, values, default, help_),
                             (info.key, info.values, info.default, info.help))
        tile = self.infos[self.keys.index("cpu.tile")]
        self.assertEqual(tile.default, "auto")
        self.assertTrue(tile.values.startswith("auto|"), tile)

    def test_fresh_list_each_call(self):
        again = tc.option_info()
        self.assertEqual(again, self.infos)
        again.clear()
        self.assertEqual(tc.option_info(), self.infos)

    def test_every_key_can_be_set_to_its_default(self):
        for info in self.infos:
            with self.subTest(key=info.key):
                opts = tc.Options()
                self.assertEqual(opts.get(info.key), info.default)  # unset: the default
                opts.set(info.key, info.default)
                self.assertEqual(opts.get(info.key), info.default)
                opts.close()
        # All at once, through the keyword mechanism, and a kernel compiles with them.
        defaults = {info.key: info.default for info in self.infos}
        with tc.Options(**defaults) as opts:
            for key, value in defaults.items():
                self.assertEqual(opts.get(key), value)
        prog = tc.define("def f(float(N) A) -> (B) { B(i) = A(i) + 1 }")
        kernel = prog.compile("f", tc.Tensor("float32", (3,)), **defaults)
        self.assertEqual(kernel.outputs, (tc.TensorInfo("float32", (3,)),))

    def test_values_are_what_libtc_checks_against(self):
        for info in self.infos:
            with self.subTest(key=info.key):
                with self.assertRaises(tc.TcInvalidArgumentError) as cm:
                    tc.Options().set(info.key, "no-such\nvalue")  # no kind takes a newline
                self.assertIn("option '%s'" % info.key, cm.exception.message)
                self.assertIn("(allowed: %s)" % info.values, cm.exception.message)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            tc.Options().set("no_such_key", "1")
        self.assertIn("known options: %s" % ", ".join(self.keys), cm.exception.message)


if __name__ == "__main__":
    unittest.main()
