"""run --interleave end to end on the CPU (gloo, 2 processes, tiny widths): the pair's two records, each
naming the other, as many timed steps each as asked, the speedup recomputed by records check. Needs torch."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

from torch_stacks import records
from torch_stacks.config import RunConfig
from torch_stacks.speedup import median_round_ratio

ITERS = 4


class InterleaveTest(unittest.TestCase):
    def test_pair_on_two_cpu_ranks(self):
        with tempfile.TemporaryDirectory() as out:
            args = ["--model", "qwen3-30b-a3b", "--style", "grouped", "--schedule", "regular", "--schedule",
                    "farskip", "--interleave", "--phase", "train", "--tokens", "64", "--seq", "32", "--scale", "32",
                    "--dtype", "fp32", "--warmup", "1", "--iters", str(ITERS), "--device", "cpu", "--out", out]
            port = str(29600 + os.getpid() % 300)
            run = subprocess.run([sys.executable, "-m", "torch_stacks.launch", "--nproc", "2", "--port", port, "--",
                                  *args], capture_output=True, text=True, timeout=600)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            found = {}
            for path in glob.glob(os.path.join(out, "*.json")):
                with open(path, encoding="utf-8") as f:
                    r = json.load(f)
                found[r["config"]["schedule"]] = r
            self.assertEqual(sorted(found), ["farskip", "regular"])
            regular, farskip = found["regular"], found["farskip"]
            self.assertEqual((regular["pair"], farskip["pair"]), (farskip["name"], regular["name"]))
            for r in (regular, farskip):
                self.assertEqual(r["status"], "ok")
                self.assertTrue(r["config"]["interleaved"])
                self.assertEqual([len(rank["gpu_ms"]) for rank in r["ranks"]], [ITERS, ITERS])
                # A training step's forward returns before the step does: its issue time is a part of the step's.
                for rank in r["ranks"]:
                    self.assertEqual(len(rank["forward_issue_ms"]), ITERS)
                    for forward, step in zip(rank["forward_issue_ms"], rank["issue_ms"]):
                        self.assertGreater(forward, 0)
                        self.assertLess(forward, step)
            steps = [r["timing"]["step"]["per_iteration"] for r in (regular, farskip)]
            self.assertEqual(farskip["timing"]["speedup"]["estimate"], median_round_ratio(*steps))
            self.assertEqual(regular["timing"]["speedup"], farskip["timing"]["speedup"])
            self.assertEqual(records.check([out]), 0)

    def run_own_model(self, tmp, spec, phase, scale):
        """Writes `spec` to tmp/models/NAME.json, runs the grouped stack of it on the CPU into tmp/ep1 and returns
        its one record."""
        specs, out = os.path.join(tmp, "models"), os.path.join(tmp, "ep1")
        os.makedirs(specs)
        with open(os.path.join(specs, spec["name"] + ".json"), "w", encoding="utf-8") as f:
            json.dump(spec, f)
        args = ["--model", spec["name"], "--specs", specs, "--style", "grouped", "--phase", phase, "--tokens", "64",
                "--seq", "32", "--scale", str(scale), "--dtype", "fp32", "--warmup", "1", "--iters", "2",
                "--device", "cpu", "--out", out]
        run = subprocess.run([sys.executable, "-m", "torch_stacks.run", *args], capture_output=True, text=True,
                             timeout=600)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        [path] = glob.glob(os.path.join(out, "*.json"))
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def test_a_model_file_of_your_own_is_named_by_its_records(self):
        with tempfile.TemporaryDirectory() as tmp:
            specs, out = os.path.join(tmp, "models"), os.path.join(tmp, "ep1")
            with open(os.path.join(os.environ["MOESIM_SPECS"], "qwen3-30b-a3b.json"), encoding="utf-8") as f:
                spec = dict(json.load(f), name="my-moe")
            config = self.run_own_model(tmp, spec, "forward", 32)["config"]
            self.assertEqual(config["model_spec"], os.path.join("..", "models", "my-moe.json"))
            named = os.path.join(out, config["model_spec"])
            self.assertTrue(os.path.samefile(named, os.path.join(specs, "my-moe.json")))

    def test_a_gated_shared_expert_is_built_and_recorded(self):
        # Qwen2-MoE's block: shared_expert_output = sigmoid(shared_expert_gate(x)) * shared_expert(x)
        import torch  # noqa: PLC0415 (this file's other tests run torch in subprocesses)
        from torch_stacks.layers import SharedExperts  # noqa: PLC0415
        from torch_stacks.model_spec import parse_layer_shape, scaled  # noqa: PLC0415
        with open(os.path.join(os.environ["MOESIM_SPECS"], "qwen3-30b-a3b.json"), encoding="utf-8") as f:
            spec = dict(json.load(f), name="gated-moe")
        spec["moe"] = dict(spec["moe"], shared_experts=1, shared_ffn=768, shared_gate=True)
        gated_shape = scaled(parse_layer_shape(spec, "gated-moe.json"), 16)
        plain_shape = scaled(parse_layer_shape(dict(spec, moe=dict(spec["moe"], shared_gate=False)), "p.json"), 16)
        gated = SharedExperts(gated_shape, torch.float32, "cpu", 7)
        plain = SharedExperts(plain_shape, torch.float32, "cpu", 7)
        x = torch.randn(16, gated_shape.hidden)
        expected = torch.sigmoid(x @ gated.w_out_gate.t()) * plain(x)
        out = gated(x)
        torch.testing.assert_close(out, expected)
        out.sum().backward()
        self.assertGreater(gated.w_out_gate.grad.abs().sum().item(), 0)
        self.assertIsNone(plain.w_out_gate)
        with tempfile.TemporaryDirectory() as tmp:
            record = self.run_own_model(tmp, spec, "train", 16)
            self.assertEqual(record["status"], "ok")
            self.assertIs(record["config"]["shape"]["shared_gate"], True)


if __name__ == "__main__":
    unittest.main()


class PlainTraceConfigTest(unittest.TestCase):
    def test_only_transformers_models_are_traced_plain(self):
        RunConfig(model="qwen3-30b-a3b", style="hf-eager", plain_trace=True).validate()
        with self.assertRaisesRegex(ValueError, "plain trace is for transformers"):
            RunConfig(model="qwen3-30b-a3b", style="grouped", plain_trace=True).validate()
