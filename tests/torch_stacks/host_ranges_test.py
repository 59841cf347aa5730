"""torch_stacks.host_ranges end to end on the CPU (gloo, 2 processes, tiny widths): one entry per step run
(warm-up, timed, the profiler's warm-up and profiled), the last two marked profiled, every forward op range of
both layers timed in each, and a range never longer than its step. Needs torch."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

WARMUP, ITERS, TRACE_ITERS, LAYERS = 1, 3, 1, 2


class HostRangesTest(unittest.TestCase):
    def test_ranges_of_every_step(self):
        with tempfile.TemporaryDirectory() as out:
            args = ["--model", "qwen3-30b-a3b", "--style", "grouped", "--phase", "train", "--tokens", "64", "--seq",
                    "32", "--scale", "32", "--dtype", "fp32", "--layers", str(LAYERS), "--warmup", str(WARMUP),
                    "--iters", str(ITERS), "--trace-iters", str(TRACE_ITERS), "--device", "cpu", "--out", out]
            port = str(29300 + os.getpid() % 300)
            run = subprocess.run([sys.executable, "-m", "torch_stacks.launch", "--nproc", "2", "--port", port,
                                  "--module", "torch_stacks.host_ranges", "--", *args],
                                 capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            with open(os.path.join(out, "host-ranges.json"), encoding="utf-8") as f:
                steps = json.load(f)["steps"]
        self.assertEqual(len(steps), WARMUP + ITERS + TRACE_ITERS + 1)
        self.assertEqual([s["profiled"] for s in steps], [False] * (WARMUP + ITERS) + [True] * (TRACE_ITERS + 1))
        for s in steps:
            names = {name for name, _ in s["ranges"]}
            for layer in range(LAYERS):
                for op in ("attn_norm", "attn_qkv", "gate", "permute", "dispatch", "routed_experts", "combine",
                           "unpermute"):
                    self.assertIn(f"L{layer}.{op}", names)
            self.assertLessEqual(max(us for _, us in s["ranges"]), s["issue_us"])


if __name__ == "__main__":
    unittest.main()
