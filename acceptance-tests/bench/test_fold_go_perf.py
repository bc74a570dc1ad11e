#!/usr/bin/env python3
"""Unit tests of fold-go-perf.py (the profile folding behind docs/PERFORMANCE.md's flame graph): the `perf script`
parsing and the folding on made-up samples, and the two tool calls (`readelf` for the load address, `go tool
addr2line` for names) on a Go binary built here. Run by `make lint` with report.py's tests."""

import importlib.util
import os
import pathlib
import subprocess
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
SPEC = importlib.util.spec_from_file_location("fold_go_perf", HERE / "fold-go-perf.py")
fold_go_perf = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(fold_go_perf)

# Two samples of terraform (one with a libc frame between its own), one of another command.
SCRIPT = """terraform
\t    1010 (/usr/bin/terraform)
\t    7f00 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t    1020 (/usr/bin/terraform)

kworker
\t    1010 (/usr/bin/terraform)

terraform
\t    1030 (/usr/bin/terraform)
\t    1020 (/usr/bin/terraform)
"""


class Parsing(unittest.TestCase):
    def test_keeps_the_commands_frames_in_the_binary_leaf_first_at_the_load_address(self):
        stacks = fold_go_perf.parse_script(SCRIPT, "terraform", "terraform", 0x400000)
        self.assertEqual(stacks, [[0x401010, 0x401020], [0x401030, 0x401020]])

    def test_a_sample_with_no_frame_in_the_binary_is_left_out(self):
        self.assertEqual(fold_go_perf.parse_script(SCRIPT, "terraform", "kworker", 0), [[0x1010]])
        self.assertEqual(fold_go_perf.parse_script(SCRIPT, "other-binary", "terraform", 0), [])


class Folding(unittest.TestCase):
    STACKS = [[1, 2], [3, 2], [1, 2]]
    NAMES = {1: "leaf.a", 2: "main.main", 3: "leaf.b"}

    def test_folds_root_first_with_counts(self):
        self.assertEqual(fold_go_perf.fold(self.STACKS, self.NAMES),
                         ["main.main;leaf.a 2", "main.main;leaf.b 1"])

    def test_top_counts_a_function_once_per_stack(self):
        recursive = [[1, 1, 2], [2]]
        self.assertEqual(fold_go_perf.top(recursive, self.NAMES, 2), ["100.0%  main.main", " 50.0%  leaf.a"])


class GoBinary(unittest.TestCase):
    def test_load_address_and_names_of_a_real_go_binary(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = pathlib.Path(tmp, "main.go")
            source.write_text("package main\n\nfunc main() { println(\"hi\") }\n")
            binary = str(pathlib.Path(tmp, "hello"))
            env = dict(os.environ, GOTOOLCHAIN="local", GO111MODULE="off")
            subprocess.run(["go", "build", "-o", binary, str(source)], check=True, env=env, cwd=tmp)
            nm = subprocess.run(["go", "tool", "nm", binary], capture_output=True, text=True, check=True).stdout
            address = next(int(line.split()[0], 16) for line in nm.splitlines() if line.split()[2:] == ["main.main"])
            base = fold_go_perf.load_address(binary)
            # Go's linker maps file offset 0 at the first LOAD segment's address (0x400000 on linux/amd64).
            self.assertEqual(base % 0x1000, 0)
            self.assertGreater(address, base)
            self.assertEqual(fold_go_perf.symbolize(binary, {address}), {address: "main.main"})


if __name__ == "__main__":
    unittest.main()
