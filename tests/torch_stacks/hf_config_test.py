"""kernels/tools/hf_config_to_spec.py: the HF config values the shipped specs document in their `source` give those
specs back (no torch needed)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
TOOL = os.path.join(REPO, "kernels", "tools", "hf_config_to_spec.py")
sys.path.insert(0, os.path.dirname(TOOL))
from hf_config_to_spec import spec_from_config  # noqa: E402

SPECS = os.path.join(REPO, "models", "specs")
NEW_MODELS = os.path.join(REPO, "data", "torch-stacks", "2026-11-29-nvidia-h200-x1-newmodels", "models")


def mla(layers, hidden, heads, q_lora, experts, top_k, moe_ffn, shared, dense, ffn, vocab, model_type="deepseek_v2"):
    return {"model_type": model_type, "num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": heads,
            "num_key_value_heads": heads, "q_lora_rank": q_lora, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": experts, "num_experts_per_tok": top_k,
            "moe_intermediate_size": moe_ffn, "n_shared_experts": shared, "first_k_dense_replace": dense,
            "intermediate_size": ffn, "vocab_size": vocab, "hidden_act": "silu", "rms_norm_eps": 1e-6}


# The config.json values each spec's `source` lists (hidden and vocabulary sizes from the spec where it lists none).
CONFIGS = {
    (SPECS, "qwen3-30b-a3b"): {
        "model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
        "moe_intermediate_size": 768, "decoder_sparse_step": 1, "mlp_only_layers": [], "intermediate_size": 6144,
        "vocab_size": 151936, "hidden_act": "silu", "rms_norm_eps": 1e-6},
    (SPECS, "qwen3-235b-a22b"): {
        "model_type": "qwen3_moe", "num_hidden_layers": 94, "hidden_size": 4096, "num_attention_heads": 64,
        "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
        "moe_intermediate_size": 1536, "decoder_sparse_step": 1, "intermediate_size": 12288, "vocab_size": 151936,
        "hidden_act": "silu", "rms_norm_eps": 1e-6},
    (SPECS, "mixtral-8x7b"): {
        "model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2, "intermediate_size": 14336,
        "vocab_size": 32000, "hidden_act": "silu", "rms_norm_eps": 1e-5},
    (SPECS, "deepseek-v2-lite"): mla(27, 2048, 16, None, 64, 6, 1408, 2, 1, 10944, 102400),
    (SPECS, "deepseek-v2"): mla(60, 5120, 128, 1536, 160, 6, 1536, 2, 1, 12288, 102400),
    (SPECS, "deepseek-v3"): mla(61, 7168, 128, 1536, 256, 8, 2048, 1, 3, 18432, 129280, "deepseek_v3"),
    (SPECS, "moonlight-16b-a3b"): mla(27, 2048, 16, None, 64, 6, 1408, 2, 1, 11264, 163840, "deepseek_v3"),
    (SPECS, "llama4-scout"): {"model_type": "llama4", "text_config": {
        "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120, "num_attention_heads": 40,
        "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
        "intermediate_size": 8192, "intermediate_size_mlp": 16384, "interleave_moe_layer_step": 1,
        "vocab_size": 202048, "hidden_act": "silu", "rms_norm_eps": 1e-5, "attention_chunk_size": 8192,
        "no_rope_layer_interval": 4}},
    (SPECS, "gpt-oss-120b"): {
        "model_type": "gpt_oss", "num_hidden_layers": 36, "hidden_size": 2880, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 128, "num_experts_per_tok": 4,
        "intermediate_size": 2880, "vocab_size": 201088, "sliding_window": 128, "attention_bias": True,
        "layer_types": ["sliding_attention", "full_attention"] * 18, "hidden_act": "silu", "rms_norm_eps": 1e-5},
    (SPECS, "gpt-oss-20b"): {
        "model_type": "gpt_oss", "num_hidden_layers": 24, "hidden_size": 2880, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4,
        "intermediate_size": 2880, "vocab_size": 201088, "sliding_window": 128, "attention_bias": True,
        "layer_types": ["sliding_attention", "full_attention"] * 12, "hidden_act": "silu", "rms_norm_eps": 1e-5},
    (NEW_MODELS, "olmoe-1b-7b"): {
        "model_type": "olmoe", "num_hidden_layers": 16, "hidden_size": 2048, "num_attention_heads": 16,
        "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "intermediate_size": 1024,
        "vocab_size": 50304, "hidden_act": "silu", "rms_norm_eps": 1e-5},
    (NEW_MODELS, "qwen1.5-moe-a2.7b"): {
        "model_type": "qwen2_moe", "num_hidden_layers": 24, "hidden_size": 2048, "num_attention_heads": 16,
        "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632, "intermediate_size": 5632, "vocab_size": 151936,
        "hidden_act": "silu", "rms_norm_eps": 1e-6},
}
SIMULATED = ("layers", "dense_layers", "hidden", "vocab", "attention", "moe", "activation", "norm")


class HfConfigToSpecTest(unittest.TestCase):
    def test_the_documented_configs_give_the_shipped_specs(self):
        for (folder, name), config in CONFIGS.items():
            with open(os.path.join(folder, name + ".json"), encoding="utf-8") as f:
                shipped = json.load(f)
            spec, _ = spec_from_config(config, name)
            for key in SIMULATED:
                self.assertEqual(spec[key], shipped[key], f"{name}: {key}")
            self.assertEqual(spec.get("moe_every", 1), shipped.get("moe_every", 1), name)
            if spec["dense_layers"] or spec.get("moe_every", 1) > 1 or shipped["dense_ffn"] == 0:
                self.assertEqual(spec["dense_ffn"], shipped["dense_ffn"], name)

    def test_what_the_spec_cannot_say_is_noted(self):
        spec, notes = spec_from_config(CONFIGS[(NEW_MODELS, "qwen1.5-moe-a2.7b")])
        self.assertTrue(any("biases" in n for n in notes), notes)
        # Qwen2-MoE's gate on its shared expert is in the spec, not a note
        self.assertIs(spec["moe"]["shared_gate"], True)
        self.assertFalse(any("gate" in n for n in notes), notes)
        spec, _ = spec_from_config(CONFIGS[(SPECS, "qwen3-30b-a3b")])
        self.assertNotIn("shared_gate", spec["moe"])
        _, notes = spec_from_config(dict(CONFIGS[(SPECS, "qwen3-30b-a3b")], mlp_only_layers=[3, 7]))
        self.assertTrue(any("not a leading run" in n for n in notes), notes)

    def test_windows_from_layer_kinds(self):
        llama4 = CONFIGS[(SPECS, "llama4-scout")]["text_config"]
        # newer transformers write Llama 4's kinds out as layer_types
        kinds = ["chunked_attention", "chunked_attention", "chunked_attention", "full_attention"] * 12
        spec, _ = spec_from_config(dict(llama4, layer_types=kinds))
        self.assertEqual(spec["attention"]["window"], {"kind": "chunked", "tokens": 8192, "full_every": 4})
        mixtral = CONFIGS[(SPECS, "mixtral-8x7b")]
        spec, _ = spec_from_config(dict(mixtral, sliding_window=4096))  # Mistral's: every layer slides
        self.assertEqual(spec["attention"]["window"], {"kind": "sliding", "tokens": 4096})
        spec, _ = spec_from_config(dict(mixtral, sliding_window=4096, use_sliding_window=False))  # Qwen2's default
        self.assertNotIn("window", spec["attention"])
        last = ["sliding_attention"] * 23 + ["full_attention"]  # only the last layer full: every 24th
        spec, _ = spec_from_config(dict(CONFIGS[(SPECS, "gpt-oss-20b")], layer_types=last))
        self.assertEqual(spec["attention"]["window"]["full_every"], 24)
        irregular = ["full_attention"] + ["sliding_attention"] * 4 + ["full_attention"] + ["sliding_attention"] * 18
        spec, notes = spec_from_config(dict(CONFIGS[(SPECS, "gpt-oss-20b")], layer_types=irregular))
        self.assertNotIn("window", spec["attention"])
        self.assertTrue(any("simulated as full attention" in n for n in notes), notes)
        hybrid = ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 12
        spec, notes = spec_from_config(dict(CONFIGS[(SPECS, "qwen3-30b-a3b")], layer_types=hybrid))
        self.assertNotIn("window", spec["attention"])
        self.assertTrue(any("linear_attention" in n for n in notes), notes)
        r, spec = self.run_tool(json.dumps(CONFIGS[(SPECS, "gpt-oss-20b")]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(spec["attention"]["window"], {"kind": "sliding", "tokens": 128, "full_every": 2})

    def run_tool(self, text):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "config.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            out = os.path.join(d, "spec.json")
            r = subprocess.run([sys.executable, TOOL, path, "--name", "mine", "--out", out], capture_output=True,
                               text=True, check=False)
            spec = None
            if os.path.exists(out):
                with open(out, encoding="utf-8") as f:
                    spec = json.load(f)
            moesim = os.environ.get("MOESIM")
            if spec and moesim:  # moesim reads what the tool wrote
                sim = subprocess.run([moesim, "simulate", "--model", out, "--hw", "h200", "--schedule", "regular",
                                      "--tokens", "1024", "--layers", "2", "--ep", "8"], capture_output=True,
                                     text=True, check=False)
                self.assertEqual(sim.returncode, 0, sim.stderr)
            return r, spec

    def test_the_tool_writes_a_spec_moesim_reads_and_refuses_what_is_no_moe_config(self):
        r, spec = self.run_tool(json.dumps(CONFIGS[(SPECS, "deepseek-v2-lite")]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(spec["name"], "mine")
        r, _ = self.run_tool(json.dumps({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64}))
        self.assertEqual(r.returncode, 2)
        self.assertIn("a MoE config has experts", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        r, _ = self.run_tool("{\n  nope")
        self.assertEqual(r.returncode, 2)
        self.assertIn("config.json:2: invalid JSON", r.stderr)


if __name__ == "__main__":
    unittest.main()
