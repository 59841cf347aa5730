"""kernels/torch_stacks/model_spec.py: the shipped model files parse; bad ones fail with file and JSON path."""
import glob
import json
import os
import unittest

from torch_stacks.model_spec import SpecError, load_layer_shape, parse_layer_shape, scaled

SPECS = os.environ.get("MOESIM_SPECS", os.path.join(os.path.dirname(__file__), "..", "..", "models", "specs"))


def qwen3():
    with open(os.path.join(SPECS, "qwen3-30b-a3b.json"), encoding="utf-8") as f:
        return json.load(f)


class ModelSpecTest(unittest.TestCase):
    def test_every_shipped_swiglu_model_parses_and_the_others_are_refused(self):
        files = glob.glob(os.path.join(SPECS, "*.json"))
        self.assertGreaterEqual(len(files), 12)
        for path in files:
            with open(path, encoding="utf-8") as f:
                activation = json.load(f)["activation"]
            if activation == "swiglu":
                self.assertEqual(load_layer_shape(path).name, os.path.basename(path)[:-5])
            else:  # the GPT-MoE models (gelu)
                with self.assertRaises(SpecError) as raised:
                    load_layer_shape(path)
                self.assertIn(f"{path}: /activation", str(raised.exception))

    def test_mla_head_dims(self):
        # DeepSeek-V2-Lite (HF config): qk_nope 128 + qk_rope 64 = 192 per query/key head, v 128.
        a = load_layer_shape(os.path.join(SPECS, "deepseek-v2-lite.json")).attention
        self.assertEqual((a.qk_head_dim, a.value_head_dim, a.kv_lora_rank), (192, 128, 512))

    def assert_error(self, spec, fragment):
        with self.assertRaises(SpecError) as raised:
            parse_layer_shape(spec, "m.json")
        self.assertIn(fragment, str(raised.exception))
        self.assertEqual(len(str(raised.exception).splitlines()), 1)

    def test_missing_key_names_its_path(self):
        spec = qwen3()
        del spec["moe"]["expert_ffn"]
        self.assert_error(spec, "m.json: /moe/expert_ffn: missing")

    def test_wrong_type_names_its_path(self):
        spec = qwen3()
        spec["attention"]["heads"] = "32"
        self.assert_error(spec, "m.json: /attention/heads = \"32\": expected an integer")

    def test_qk_norm_is_read_where_the_model_has_it(self):
        # Qwen3's attention normalizes each query and key head (HF Qwen3MoeAttention q_norm/k_norm); Mixtral's not.
        self.assertTrue(load_layer_shape(os.path.join(SPECS, "qwen3-30b-a3b.json")).attention.qk_norm)
        self.assertFalse(load_layer_shape(os.path.join(SPECS, "mixtral-8x7b.json")).attention.qk_norm)
        self.assertTrue(scaled(load_layer_shape(os.path.join(SPECS, "qwen3-30b-a3b.json")), 8).attention.qk_norm)
        spec = qwen3()
        spec["attention"]["qk_norm"] = 1
        self.assert_error(spec, "m.json: /attention/qk_norm = 1: expected true or false")

    def test_shared_gate_is_read_where_the_model_has_it(self):
        self.assertFalse(load_layer_shape(os.path.join(SPECS, "deepseek-v2-lite.json")).shared_gate)
        spec = qwen3()
        spec["moe"] = dict(spec["moe"], shared_experts=1, shared_ffn=768, shared_gate=True)
        self.assertTrue(scaled(parse_layer_shape(spec, "m.json"), 8).shared_gate)
        spec["moe"]["shared_gate"] = "yes"
        self.assert_error(spec, "m.json: /moe/shared_gate = \"yes\": expected true or false")

    def test_top_k_above_experts(self):
        spec = qwen3()
        spec["moe"]["top_k"] = 129
        self.assert_error(spec, "/moe/top_k = 129: must be <= experts (128)")

    def test_unsupported_activation(self):
        spec = qwen3()
        spec["activation"] = "gelu"
        self.assert_error(spec, "/activation = \"gelu\": the stacks build swiglu only")

    def test_bad_json_file(self):
        path = os.path.join(os.path.dirname(__file__), "model_spec_test.py")
        with self.assertRaises(SpecError) as raised:
            load_layer_shape(path)
        self.assertIn("invalid JSON at line 1", str(raised.exception))

    def test_scaled_keeps_heads_per_kv_head(self):
        # Qwen3: 32 query heads over 4 KV heads; / 4: 1 KV head with its 8 query heads, widths / 4.
        shape = scaled(parse_layer_shape(qwen3(), "q.json"), 4)
        self.assertEqual((shape.attention.heads, shape.attention.kv_heads, shape.hidden, shape.expert_ffn),
                         (8, 1, 512, 192))
        self.assertEqual((shape.experts, shape.top_k), (128, 8))


if __name__ == "__main__":
    unittest.main()
