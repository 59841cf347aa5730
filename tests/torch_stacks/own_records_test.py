"""torch_stacks.own_records on the CPU: a record of an annotated model's timed steps passes the records check, names
the spec the user wrote, and moesim (MOESIM, where the test gives it) simulates it from that spec."""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels"))
import torch  # noqa: E402

from annotate_test import W, MoeModel  # noqa: E402
from torch_stacks.annotate import annotate, profile_step, timed_steps  # noqa: E402
from torch_stacks.distributed import RunContext, close_context, init_context  # noqa: E402
from torch_stacks.own_records import record_name, trace_path, write_record  # noqa: E402
from torch_stacks.records import record_problems  # noqa: E402

SPEC = {"schema_version": 1, "name": "tiny-moe", "source": "own_records_test: a test model",
        "layers": 2, "dense_layers": 0, "hidden": W, "vocab": 16,
        "attention": {"type": "mha", "heads": 1, "kv_heads": 1, "head_dim": W},
        "moe": {"experts": 4, "top_k": 1, "expert_ffn": W, "shared_experts": 1, "shared_ffn": W},
        "dense_ffn": 4 * W, "activation": "swiglu", "norm": "rmsnorm"}
TOKENS = 16


def write_spec(directory, **changes):
    path = os.path.join(directory, "specs", f"{changes.get('name', SPEC['name'])}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dict(SPEC, **changes), f)
    return path


def ep_rank(rank, world, port, out, spec):
    """One process of an EP run on the CPU (gloo): its steps timed after a barrier over both, rank 0 writes."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(world), RANK=str(rank),
                      LOCAL_RANK=str(rank))
    ctx = init_context("cpu")
    torch.manual_seed(rank)
    model = MoeModel(layers=2)
    annotate(model)
    x = torch.randn(TOKENS, W)
    timing = timed_steps(lambda: model(x), lambda out: out.sum().backward(), iters=3, warmup=1, ctx=ctx)
    write_record(out, spec, "grouped", timing, tokens=TOKENS, seq=TOKENS, layers=2, phase="train", ctx=ctx)
    close_context(ctx)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def simulated(out_dir):
    """moesim validate's rows for the records in out_dir, or None where the test has no moesim."""
    moesim = os.environ.get("MOESIM")
    if not moesim:
        return None
    run = subprocess.run([moesim, "validate", "--measured", out_dir, "--hw", "h100", "--json", "-"],
                         capture_output=True, text=True, check=True)
    return [row for row in json.loads(run.stdout) if row["metric"] == "step_ms"]


class OwnRecordsTest(unittest.TestCase):
    def setUp(self):
        self.model = MoeModel(layers=2)
        annotate(self.model)
        self.x = torch.randn(TOKENS, W)

    def test_a_timed_forward_is_a_record_moesim_reads_from_the_users_spec(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = write_spec(tmp)
            timing = timed_steps(lambda: self.model(self.x), iters=3, warmup=1)
            out = os.path.join(tmp, "records")
            path = write_record(out, spec, "loop", timing, tokens=TOKENS, seq=TOKENS, layers=2, phase="forward")
            self.assertEqual(record_problems(path), [])
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
            self.assertEqual(os.path.basename(path),
                             record_name(spec, "loop", tokens=TOKENS, seq=TOKENS, layers=2, phase="forward") + ".json")
            self.assertEqual(record["config"]["model"], "tiny-moe")
            self.assertEqual(record["config"]["model_spec"], os.path.join("..", "specs", "tiny-moe.json"))
            steps = record["ranks"][0]["gpu_ms"]
            self.assertEqual(len(steps), 3)
            self.assertEqual(record["timing"]["step"]["p50"], statistics.median(steps))
            self.assertEqual(len(record["ranks"][0]["host_probe_us"]), 3)
            rows = simulated(out)
            if rows is None:
                self.skipTest("MOESIM not given: the records check only")
            self.assertEqual(len(rows), 1)
            self.assertTrue(rows[0]["scenario"].startswith("tiny-moe loop EP1 T16 L2 forward regular"), rows[0])
            self.assertEqual(rows[0]["published_or_measured"], record["timing"]["step"]["p50"])
            # the spec decides the layers moesim simulates: its first layer dense (a 32-wide FFN) is another model
            write_spec(tmp, dense_layers=1)
            self.assertNotEqual(simulated(out)[0]["predicted"], rows[0]["predicted"])

    def test_a_traced_step_lies_beside_its_record(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = write_spec(tmp)
            where = dict(tokens=TOKENS, seq=TOKENS, layers=2, phase="train")
            trace = trace_path(tmp, spec, "grouped", **where)
            self.assertEqual(os.path.basename(trace), record_name(spec, "grouped", **where) + ".rank0.trace.json.gz")
            backward = lambda out: (out.sum().backward(), self.model.zero_grad(set_to_none=True))  # noqa: E731
            run = profile_step(lambda: self.model(self.x), backward, trace=trace, warmup=1, iters=2)
            path = write_record(tmp, spec, "grouped", run["timing"], trace=trace, **where)
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
            self.assertEqual(record["traces"], [os.path.basename(trace)])
            self.assertEqual(record["config"]["trace_iters"], 1)
            self.assertGreater(min(record["ranks"][0]["issue_ms"]), 0)
            with self.assertRaisesRegex(ValueError, r"expected .*\.rank0\.trace\.json\.gz"):
                write_record(os.path.join(tmp, "elsewhere"), spec, "grouped", run["timing"], trace=trace, **where)

    def test_an_ep_run_is_one_record_of_every_rank(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = write_spec(tmp)
            out = os.path.join(tmp, "records")
            torch.multiprocessing.spawn(ep_rank, args=(2, free_port(), out, spec), nprocs=2)
            names = os.listdir(out)
            self.assertEqual(names, [record_name(spec, "grouped", tokens=TOKENS, seq=TOKENS, layers=2, phase="train",
                                                 ctx=RunContext(0, 2, torch.device("cpu"))) + ".json"])
            self.assertIn(".ep2.", names[0])
            path = os.path.join(out, names[0])
            self.assertEqual(record_problems(path), [])  # the step is the slowest rank's, per iteration
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
            self.assertEqual(record["config"]["ep"], 2)
            self.assertEqual([r["rank"] for r in record["ranks"]], [0, 1])
            self.assertEqual(trace_path(out, spec, "grouped", tokens=TOKENS, seq=TOKENS, layers=2, phase="train",
                                        ctx=RunContext(1, 2, torch.device("cpu"))),
                             os.path.join(out, names[0][:-len(".json")] + ".rank1.trace.json.gz"))
            rows = simulated(out)
            if rows is None:
                self.skipTest("MOESIM not given: the records check only")
            self.assertTrue(rows[0]["scenario"].startswith("tiny-moe grouped EP2 T16 L2 train regular"), rows[0])

    def test_an_unknown_style_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            spec = write_spec(tmp)
            timing = timed_steps(lambda: self.model(self.x), iters=1, warmup=0)
            with self.assertRaisesRegex(ValueError, "style 'megablocks'"):
                write_record(tmp, spec, "megablocks", timing, tokens=TOKENS, seq=TOKENS, layers=2, phase="forward")


if __name__ == "__main__":
    unittest.main()
