"""torch_stacks.host_ranges end to end on the CPU (gloo, 2 processes, tiny widths): one entry per step run
(warm-up, timed, then after every timing the rebuilt stack's warm-up, the profiler's warm-up and profiled), the
last two marked profiled, the record naming its trace; every forward op range of both layers timed in each, and a range never longer than its step; every rank's timeline in time order, the
expert-parallel path's marks inside their op's range, and the split-size exchange returning on no rank before
the last rank reached it (one clock for the processes of a host); each rank's host probe after every timed
step. Needs torch."""
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
            with open(os.path.join(out, "host-ranges.rank1.json"), encoding="utf-8") as f:
                peer_steps = json.load(f)["steps"]
            [record_file] = [n for n in os.listdir(out) if n.endswith(".balanced.json")]
            with open(os.path.join(out, record_file), encoding="utf-8") as f:
                record = json.load(f)
            ranks = record["ranks"]
            # traced after the timing, the record says so
            trace = record_file[:-len(".json")] + ".rank0.trace.json.gz"
            self.assertEqual(record["traces"], [trace])
            self.assertEqual(ranks[0]["trace"], trace)
            self.assertEqual(record["config"]["trace_iters"], TRACE_ITERS)
            self.assertTrue(os.path.exists(os.path.join(out, trace)))
        # Every rank's record has the host probe of each timed step.
        for r in ranks:
            self.assertEqual(len(r["host_probe_us"]), ITERS)
            self.assertTrue(all(us > 0 for us in r["host_probe_us"]))
        self.assertEqual(len(steps), WARMUP + ITERS + WARMUP + TRACE_ITERS + 1)
        self.assertEqual([s["profiled"] for s in steps],
                         [False] * (WARMUP + ITERS + WARMUP) + [True] * (TRACE_ITERS + 1))
        for s in steps:
            names = {name for name, _ in s["ranges"]}
            for layer in range(LAYERS):
                for op in ("attn_norm", "attn_qkv", "gate", "permute", "dispatch", "routed_experts", "combine",
                           "unpermute"):
                    self.assertIn(f"L{layer}.{op}", names)
            self.assertLessEqual(max(us for _, us in s["ranges"]), s["issue_us"])
        self.assertEqual(len(peer_steps), len(steps))
        for s, peer in zip(steps, peer_steps):
            for timeline in (s["timeline"], peer["timeline"]):
                times = [ns for _, ns in timeline]
                self.assertEqual(times, sorted(times))
                events = [e for e, _ in timeline]
                for layer in range(LAYERS):
                    permute = events[events.index(f"L{layer}.permute>"):events.index(f"L{layer}.permute<")]
                    self.assertEqual([e for e in permute if e.startswith("counts")],
                                     ["counts_exchange", "counts_stack", "counts_to_host", "counts_on_host"])
                    experts = events[events.index(f"L{layer}.routed_experts>"):
                                     events.index(f"L{layer}.routed_experts<")]
                    for m in ("counts_to_device", "sort_chunks", "grouped", "unsort_chunks"):
                        self.assertIn(m, experts)
            arrivals = [ns for e, ns in s["timeline"] if e == "counts_exchange"]
            peer_arrivals = [ns for e, ns in peer["timeline"] if e == "counts_exchange"]
            for i, (e, ns) in enumerate((e, ns) for e, ns in s["timeline"] if e == "counts_stack"):
                self.assertGreaterEqual(ns, max(arrivals[i], peer_arrivals[i]))


if __name__ == "__main__":
    unittest.main()
