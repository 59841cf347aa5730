"""Reference MoE decoder stacks in eager PyTorch, the instruments moesim learns implementation profiles from.

The package builds moesim's model shapes (models/specs/*.json) as the stacks people run (a loop over the
experts hit, a Megatron-style permute -> grouped GEMM -> unpermute, Hugging Face transformers' own models),
with expert parallelism over torch.distributed and the regular or FarSkip-Collective schedule, times them
and writes one JSON record per configuration (README.md beside this file describes the record).
"""
