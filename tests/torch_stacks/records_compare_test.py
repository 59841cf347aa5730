"""records compare: B's step p50 over A's per configuration both folders ran (no torch needed)."""
import gzip
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

from torch_stacks import records


def write(folder, style, tokens, p50, status="ok"):
    config = {"model": "qwen3-30b-a3b", "style": style, "schedule": "regular", "phase": "forward", "tokens": tokens,
              "seq": 2048, "layers": 2, "routing": "balanced", "dtype": "bf16", "ep": 1}
    name = f"{style}.t{tokens}"
    with open(os.path.join(folder, name + ".json"), "w", encoding="utf-8") as f:
        json.dump({"name": name, "config": config, "status": status, "timing": {"step": {"p50": p50}}}, f)


class CompareTest(unittest.TestCase):
    def test_ratios_per_style_over_shared_configurations(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            write(a, "grouped", 2048, 10.0)
            write(a, "grouped", 4096, 20.0)
            write(a, "loop", 2048, 50.0)
            write(a, "loop", 8192, 70.0)  # only in A
            write(b, "grouped", 2048, 11.0)
            write(b, "grouped", 4096, 30.0)
            write(b, "loop", 2048, 40.0)
            write(b, "loop", 4096, 90.0)  # only in B
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(records.compare([a, b]), 0)
        rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:6]]
                for line in out.getvalue().splitlines()[2:]}
        # By hand: grouped 1.1 and 1.5 (median 1.3), loop 0.8; all three sorted 0.8, 1.1, 1.5.
        self.assertEqual(rows["grouped"], ["2", "1.300", "1.100", "1.500"])
        self.assertEqual(rows["loop"], ["1", "0.800", "0.800", "0.800"])
        self.assertEqual(rows["all"], ["3", "1.100", "0.800", "1.500"])

    def test_two_folders_are_needed(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(records.compare(["one"]), 2)
            with tempfile.TemporaryDirectory() as a:
                self.assertEqual(records.compare([a, os.path.join(a, "missing")]), 2)
        self.assertIn("missing: not a folder of records", err.getvalue())


if __name__ == "__main__":
    unittest.main()


class PlainTraceTest(unittest.TestCase):
    """A plain trace (run --plain-trace) is checked for module calls, a trace with ranges for moesim's."""

    def write_trace(self, folder, names):
        path = os.path.join(folder, "t.trace.json.gz")
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump({"traceEvents": [{"ph": "X", "name": n, "ts": 1, "dur": 1} for n in names]}, f)
        return path

    def test_each_trace_is_checked_for_what_shows_its_ops(self):
        with tempfile.TemporaryDirectory() as d:
            modules = self.write_trace(d, ["nn.Module: Qwen3MoeAttention_0"])
            self.assertEqual(records.trace_problems(modules, plain=True), [])
            self.assertIn("no moesim.L0.<op> range", records.trace_problems(modules)[0])
            ranges = self.write_trace(d, ["moesim.L0.gate"])
            self.assertEqual(records.trace_problems(ranges), [])
            self.assertIn("without module calls", records.trace_problems(ranges, plain=True)[0])

