"""kernels/torch_stacks/speedup.py and records check of an interleaved pair (no torch needed)."""
import copy
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout

from torch_stacks import records
from torch_stacks.speedup import (independent_interval, median_round_ratio, paired_interval, ratio_of_medians,
                                  speedup_summary)


class SpeedupTest(unittest.TestCase):
    def test_median_over_rounds(self):
        # Rounds' ratios 2, 2, 3 (by hand): median 2.
        self.assertEqual(median_round_ratio([2.0, 4.0, 6.0], [1.0, 2.0, 2.0]), 2.0)
        with self.assertRaises(ValueError):
            median_round_ratio([1.0, 2.0], [1.0])

    def test_a_shift_both_schedules_share_cancels_by_round_not_by_list(self):
        # The host's speed halves after 5 rounds; every round's ratio stays 2.
        regular = [10.0] * 5 + [20.0] * 5
        farskip = [5.0] * 5 + [10.0] * 5
        self.assertEqual(paired_interval(regular, farskip), (2.0, 2.0))
        self.assertEqual(ratio_of_medians(regular, farskip), 2.0)
        low, high = independent_interval(regular, farskip)
        self.assertGreater(high - low, 1.0)  # resampled alone, the lists' medians jump between 10 and 20, 5 and 10

    def test_interval_is_seeded_and_brackets_the_estimate(self):
        regular = [10.0, 10.4, 9.8, 10.1, 10.6, 9.9, 10.2, 10.3]
        farskip = [9.1, 9.6, 9.0, 9.4, 9.3, 9.2, 9.8, 9.5]
        summary = speedup_summary(regular, farskip)
        self.assertEqual(summary, speedup_summary(regular, farskip))
        low, high = summary["ci95"]
        self.assertLessEqual(low, summary["estimate"])
        self.assertLessEqual(summary["estimate"], high)
        self.assertEqual(summary["rounds"], 8)


def record(schedule, steps, partner):
    config = {"model": "m", "style": "grouped", "schedule": schedule, "phase": "forward", "tokens": 64, "seq": 32,
              "layers": 2, "routing": "balanced", "dtype": "fp32", "ep": 2, "iters": len(steps), "interleaved": True}
    ranks = [{"rank": r, "gpu_ms": steps, "issue_ms": steps} for r in range(2)]
    step = {"p50": sorted(steps)[len(steps) // 2], "min": min(steps), "max": max(steps), "per_iteration": steps}
    return {"schema_version": 1, "kind": "moesim-torch-stack-run", "name": f"m.{schedule}", "status": "ok",
            "config": config, "ranks": ranks, "timing": {"unit": "ms", "step": step}, "pair": f"m.{partner}"}


class RecordsCheckTest(unittest.TestCase):
    def check(self, regular, farskip):
        with tempfile.TemporaryDirectory() as d:
            for r in (regular, farskip):
                with open(os.path.join(d, r["name"] + ".json"), "w", encoding="utf-8") as f:
                    json.dump(r, f)
            out = io.StringIO()
            with redirect_stdout(out):
                code = records.check([d])
            return code, out.getvalue()

    def test_pair_speedup_is_recomputed(self):
        regular = record("regular", [10.0, 12.0, 11.0], "farskip")
        farskip = record("farskip", [9.0, 10.0, 10.0], "regular")
        summary = speedup_summary(*(r["timing"]["step"]["per_iteration"] for r in (regular, farskip)))
        regular["timing"]["speedup"] = farskip["timing"]["speedup"] = summary
        self.assertEqual(self.check(regular, farskip)[0], 0)
        tampered = copy.deepcopy(farskip)
        tampered["timing"]["speedup"]["estimate"] += 0.01
        code, out = self.check(regular, tampered)
        self.assertEqual(code, 1)
        self.assertIn("timing.speedup.estimate", out)
        alone = copy.deepcopy(regular)
        alone["pair"] = "m.missing"
        self.assertIn("not found beside the record", self.check(alone, farskip)[1])


class StepProblemsTest(unittest.TestCase):
    @staticmethod
    def record(forward):
        rank = {"rank": 0, "gpu_ms": [5.0, 6.0], "issue_ms": [4.0, 4.5]}
        if forward is not None:
            rank["forward_issue_ms"] = forward
        return {"config": {"iters": 2}, "ranks": [rank],
                "timing": {"step": {"per_iteration": [5.0, 6.0], "p50": 5.5, "min": 5.0, "max": 6.0}}}

    def test_forward_issue_lies_within_each_steps_issue(self):
        self.assertEqual(records.step_problems(self.record(None)), [])  # records before 2026-11-27
        self.assertEqual(records.step_problems(self.record([1.0, 2.0])), [])
        for bad in ([1.0], [1.0, 4.6]):  # a step missing; a forward returning after its step
            problems = records.step_problems(self.record(bad))
            self.assertEqual(len(problems), 1, problems)
            self.assertIn("forward_issue_ms", problems[0])


if __name__ == "__main__":
    unittest.main()
