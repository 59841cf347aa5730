"""torch_stacks.annotate on models laid out as transformers' MoE decoders and as GPT-2, on the CPU: the ranges a
profiled step holds are the ones kernels/torch_stacks/README.md names, nested where the attribution expects them."""
import collections
import os
import sys
import tempfile
import unittest

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernels"))
from torch_stacks.annotate import annotate, profile_step, ranges_in  # noqa: E402

W = 8


class Norm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(W))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (torch.nn.Linear(W, W) for _ in range(4))
        self.q_norm = Norm()  # not a projection: a range of its own (qk_norm), inside core attention's

    def forward(self, x):
        q, k, v = self.q_norm(self.q_proj(x)), self.k_proj(x), self.v_proj(x)
        return self.o_proj(torch.softmax(q @ k.T, -1) @ v)


class Experts(torch.nn.Module):
    """transformers 5.x's form: one module holding every expert's weights, called once with the routing."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, W, W))

    def forward(self, x, top):
        out = torch.zeros_like(x)
        for e in range(4):
            rows = (top == e).nonzero().flatten()
            out.index_add_(0, rows, x[rows] @ self.weight[e])
        return out


class MoE(torch.nn.Module):
    """Layer 0's form: experts in a ModuleList, a loop calling each, and shared experts; layer 1's: Experts."""

    def __init__(self, first):
        super().__init__()
        self.gate = torch.nn.Linear(W, 4)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(W, W) for _ in range(4)) if first else Experts()
        if first:
            self.shared_experts = torch.nn.Linear(W, W)

    def forward(self, x):
        top = self.gate(x).argmax(-1)
        if isinstance(self.experts, Experts):
            return self.experts(x, top)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = (top == e).nonzero().flatten()
            out.index_add_(0, rows, expert(x[rows]))
        return out + self.shared_experts(x)


class DecoderLayer(torch.nn.Module):
    def __init__(self, first):
        super().__init__()
        self.input_layernorm, self.post_attention_layernorm = Norm(), Norm()
        self.self_attn, self.mlp = Attention(), MoE(first)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Inner(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(DecoderLayer(first=i == 0) for i in range(layers))
        self.norm = Norm()


class MoeModel(torch.nn.Module):
    """transformers' layout: model.layers[i].{input_layernorm, self_attn, post_attention_layernorm, mlp}."""

    def __init__(self, layers=2):
        super().__init__()
        self.model = Inner(layers)

    def forward(self, x):
        for layer in self.model.layers:
            x = layer(x)
        return self.model.norm(x)


class Conv1D(torch.nn.Linear):
    """Named as transformers' GPT-2 projection class is."""


class Gpt2Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(W), torch.nn.LayerNorm(W)
        self.attn = torch.nn.Module()
        self.attn.c_attn, self.attn.c_proj = Conv1D(W, 3 * W), Conv1D(W, W)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(W, 2 * W), torch.nn.GELU(), torch.nn.Linear(2 * W, W))
        self.attn.forward = lambda x: self.attn.c_proj(self.attn.c_attn(x)[:, :W])

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt2Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = torch.nn.Module()
        self.transformer.h = torch.nn.ModuleList([Gpt2Block()])
        self.transformer.ln_f = torch.nn.LayerNorm(W)

    def forward(self, x):
        return self.transformer.ln_f(self.transformer.h[0](x))


class ColumnParallelLinear(torch.nn.Linear):
    """Named as Megatron-core's projection classes are (TE's end in Linear too)."""


class MegatronLayer(torch.nn.Module):
    """Megatron-core's TransformerLayer names: self_attention.{linear_qkv, core_attention, linear_proj},
    pre_mlp_layernorm, mlp (MoELayer) with router and experts."""

    def __init__(self):
        super().__init__()
        self.input_layernorm, self.pre_mlp_layernorm = Norm(), Norm()
        self.self_attention = torch.nn.Module()
        self.self_attention.linear_qkv = ColumnParallelLinear(W, 3 * W)
        self.self_attention.linear_proj = ColumnParallelLinear(W, W)
        attention = self.self_attention
        attention.forward = lambda x: attention.linear_proj(attention.linear_qkv(x)[:, :W])
        self.mlp = torch.nn.Module()
        self.mlp.router, self.mlp.experts = torch.nn.Linear(W, 4), Experts()
        self.mlp.forward = lambda x: self.mlp.experts(x, self.mlp.router(x).argmax(-1))

    def forward(self, x):
        x = x + self.self_attention(self.input_layernorm(x))
        return x + self.mlp(self.pre_mlp_layernorm(x))


class MegatronModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.decoder = torch.nn.Module()
        self.decoder.layers = torch.nn.ModuleList([MegatronLayer()])
        self.decoder.final_layernorm = Norm()

    def forward(self, x):
        return self.decoder.final_layernorm(self.decoder.layers[0](x))


def traced_ranges(model, backward=True):
    x = torch.randn(16, W)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.json.gz")
        result = profile_step(lambda: model(x), (lambda out: out.sum().backward()) if backward else None,
                              trace=trace, warmup=1, iters=2)
        return result, collections.Counter(ranges_in(trace))


class AnnotateTest(unittest.TestCase):
    def test_moe_decoder_layers_get_every_op_once_per_call(self):
        model = MoeModel(layers=2)
        annotate(model)
        result, ranges = traced_ranges(model)
        expected = collections.Counter()
        for i in range(2):
            for op in ("attn_norm", "attention", "attn_out", "mlp_norm", "moe", "gate"):
                expected[f"moesim.L{i}.{op}"] = 1
            expected[f"moesim.L{i}.attn_qkv"] = 3  # q, k and v projections; q_norm is no projection
            expected[f"moesim.L{i}.qk_norm"] = 1
        # layer 0's experts are a ModuleList: each of the 4 experts' calls is ranged (MoE.forward calls every
        # expert); layer 1's are one module, called once
        expected["moesim.L0.routed_experts"] = 4
        expected["moesim.L1.routed_experts"] = 1
        expected["moesim.L0.shared_experts"] = 1  # only layer 0 has shared experts
        expected["moesim.L1.final_norm"] = 1
        for name in ("moesim.step", "moesim.forward", "moesim.backward"):
            expected[name] = 1
        self.assertEqual(ranges, expected)
        self.assertGreater(result["untraced_forward_ms"], 0)
        self.assertGreater(result["untraced_issue_ms"], result["untraced_forward_ms"])
        self.assertRegex(result["calibrate_flags"],
                         r"^--untraced-issue-ms \d+\.\d{3} --untraced-forward-ms \d+\.\d{3} --host-probe-us \d+\.\d\d$")
        self.assertGreater(result["host_probe_us"], 0)

    def test_gpt2_layout_is_a_dense_layer(self):
        model = Gpt2Model()
        annotate(model)
        _, ranges = traced_ranges(model, backward=False)
        self.assertEqual(set(ranges), {"moesim.step", "moesim.forward", "moesim.L0.attn_norm", "moesim.L0.attention",
                                       "moesim.L0.attn_qkv", "moesim.L0.attn_out", "moesim.L0.mlp_norm",
                                       "moesim.L0.dense_ffn", "moesim.L0.final_norm"})

    def test_megatron_layout(self):
        model = MegatronModel()
        annotate(model)
        _, ranges = traced_ranges(model, backward=False)
        self.assertEqual(set(ranges), {"moesim.step", "moesim.forward"} | {
            f"moesim.L0.{op}" for op in ("attn_norm", "attention", "attn_qkv", "attn_out", "mlp_norm", "moe", "gate",
                                        "routed_experts", "final_norm")})

    def test_an_unknown_part_is_named_and_can_be_mapped(self):
        model = MoeModel(layers=1)
        layer = model.model.layers[0]
        layer.mixer = layer.self_attn
        del layer.self_attn
        layer.forward = lambda x: x + layer.mlp(layer.post_attention_layernorm(x + layer.mixer(x)))
        with self.assertRaisesRegex(ValueError, r"DecoderLayer has no attention module among its children "
                                                r"\(input_layernorm, post_attention_layernorm, mlp, mixer\)"):
            annotate(model)
        with self.assertRaisesRegex(ValueError, r"names\['attention'\] = 'mixr': no such module in DecoderLayer"):
            annotate(model, names={"attention": "mixr"})
        handles = annotate(model, names={"attention": "mixer"})
        _, ranges = traced_ranges(model, backward=False)
        self.assertEqual(ranges["moesim.L0.attention"], 1)
        for h in handles:
            h.remove()
        _, ranges = traced_ranges(model, backward=False)
        self.assertFalse([r for r in ranges if r.startswith("moesim.L")])

    def test_a_model_without_a_layer_list_is_refused(self):
        with self.assertRaisesRegex(ValueError, r"no list of decoder layers in Sequential"):
            annotate(torch.nn.Sequential(torch.nn.Linear(W, W)))


if __name__ == "__main__":
    unittest.main()
