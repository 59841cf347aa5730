"""The figures behind the shipped profiles, one entry per device, each with its source tags.

Tags [S..] refer to /work/shared/hw-figures.md (its source list is mirrored in HW_FIGURES_SOURCES);
[X..] are the few sources added while writing the profiles (EXTRA_SOURCES). (E) marks an estimate.
"""
from profile_math import GIB, MIB, measured_points

HW_FIGURES_SOURCES = {
    "S1": "Glenn K. Lockwood, H100 notes, glennklockwood.com/garden/processors/h100",
    "S2": "HPC Tech copy of the NVIDIA H100 datasheet table (archive-lib.hpctech.co.jp)",
    "S3": "stas00/ml-engineering compute/accelerator/README.md: TFLOPS, MAMF, memory, cache, clock tables",
    "S4": "NVIDIA/cudnn-frontend PR #650: 989.5 dense BF16 = 132 SMs x 1.83 GHz x 4096 FLOP/clk/SM",
    "S5": "Workplace device notes (KINDS.md): H100 798 TF/s bf16, ~3.0 TB/s copy; H200 769-798 TF/s, ~4.3 TB/s, 60 MB L2",
    "S6": "NVIDIA/nccl-tests issue #212: 450 GB/s line rate, ~370 effective, NVLS all-reduce busbw ~480",
    "S7": "NVIDIA/nccl issue #1455: 8xH100 RING 365-370 GB/s; NVLS 420-480 GB/s at 5-8 GPUs",
    "S8": "NVIDIA/nccl issue #1442: 900 GB/s is both directions; 370 GB/s per direction app-level",
    "S9": "NVIDIA/nccl-tests issue #272: 8xH200 all_reduce_perf peak 475 GB/s (NCCL 2.20.3)",
    "S10": "NVIDIA/nccl issue #1259: HGX 8xH100 NVLS, 2 GPUs ~6 us with CUDA graphs",
    "S11": "NCCL src/graph/topo.h: SM80 20.0, SM90 20.6, SM100 40.1 GB/s per NVLink; NET_BW 12.0 (100 Gbit)",
    "S12": "NVIDIA/nccl issue #1807: B200 SM100_NVLINK_BW 40.1, maxBw 721.8; 8xB200 all_reduce 830+ GB/s",
    "S13": "Chips and Cheese, Nvidia's B200 (148 SMs, 126 MB L2)",
    "S14": "NVIDIA HGX B200 spec table mirror (FP8 9 PF sparse, BF16 4.5 PF sparse, FP32 75 TF, 180 GB, 7.7 TB/s)",
    "S15": "Vultr docs, NVIDIA HGX B200 hardware overview (179 GB visible, 8 TB/s, NV18, ConnectX NICs)",
    "S16": "ROCm docs, AMD Instinct MI300 Series microarchitecture (peaks, 7 IF links, fully connected 8 GPUs)",
    "S17": "ROCm docs, AMD GPU specifications (MI355X 256 CUs, MI325X 304 CUs, caches)",
    "S18": "ROCm blog, Understanding RCCL Bandwidth and xGMI Performance on MI300X (2025-03-02)",
    "S19": "ROCm/rccl issue #1210: 48 GB/s max per-direction per xGMI link on gfx94x",
    "S20": "ROCm blog, Measuring Max-Achievable FLOPs Part 2 (2025-02-28): MI300X/MI325X GEMM FLOP/s and clocks",
    "S21": "MI325X secondary spec pages (awesomeagents.ai, unanswered.io): peaks, 6 TB/s, UBB 2.0 mesh",
    "S22": "ISSCC 2026 MI355X report (32 CUs/XCD, FP8 8192 FLOP/clk/CU)",
    "S23": "Community report RCCL Collective Communications MI355X x8 XGMI (ROCm 7.2.x, RCCL 2.27-2.30), low confidence",
    "S24": "Hot Chips 2025 CDNA 4 summary (2.4 GHz, 7 IF links)",
    "S25": "ROCm docs MoRI guides: 8x 400G RDMA NICs per node, 1:1 (MI355X; MI300X/MI325X with ConnectX-7)",
    "S26": "AMD blog, Zyphra ZAYA1: eight 400 Gb/s Pollara NICs per MI300X node",
    "S27": "NVIDIA/nccl-tests issue #267: CX-7 NDR 400G achieves 48-49 GB/s per NIC; all-to-all cannot aggregate NICs",
    "S28": "MLCommons inference v4.1 H200-SXM-141GBx8 system JSON (18x NVLink4 900 GB/s, 10x 400G IB)",
    "S29": "NVIDIA/nccl-tests issue #149: 8xA100-SXM4-80GB all-reduce busbw ~200 GB/s",
    "S30": "AWS GPU instance gist (p4d NVLink3 600 GB/s; g5 multi-GPU over PCIe; A10G 300 W)",
    "S31": "Baseten, NVIDIA A10 vs A10G (24 GB GDDR6, 600 GB/s)",
    "S32": "dnanexus/dx-toolkit PR #1485 (8x A10G instance, 192 vCPU / 768 GB)",
    "S33": "vantage-sh/ec2instances.info issue #724 (A10G compute capability 8.6)",
    "S34": "NVIDIA/nccl issue #1639: 8x RTX 5090 PCIe all-reduce 28 GB/s; PCIe systems bound by CPU/memory",
    "S35": "CUDA launch overhead posts: ~4-6 us per launch (pegainfer); B200 dispatch ~5 us (dogacel)",
    "S36": "AMD community, HSA kernel dispatch latencies (~7 us synchronous HIP dispatch)",
    "S36b": "NVIDIA/nccl-tests issue #119 (A100 nodes with 4x HDR 200G)",
    "S37": "NVIDIA/nccl issue #1244: 2 nodes x 8 H20, tiny all-reduce ~46-48 us",
    "S38": "Alibaba SimAI CalbusBw.h: CX6_BW 23.5, CX7_BW 48.5, A100_PCIE_BW 25.6 GB/s",
    "S39": "karpathy/llm.c PR #621 (A10 datasheet: 72 SMs, BF16 125 TF/s, boost 1695 MHz)",
    "S40": "A10 PCIe spec comparison page (GA102, 6 MB L2)",
    "S41": "ScalarLM, Benchmarking MI300X Memcpy (2-3 TB/s plateau; weak)",
    "S42": "aiweekly summary: MI300X memory ~81% of 5.3 TB/s (weak, second-hand)",
    "S43": "PyTorch blog, Efficient MoE pre-training at scale with TorchTitan (AMD+Meta, MI325X, 1,024 GPUs)",
}

EXTRA_SOURCES = {
    "X1": "FlashAttention-3 (Shah et al., arXiv:2407.08608), H100 SXM5 forward, head dim 128, non-causal: FA3 "
    "467/565/625/638/646/648 TF/s and FA2 309/350/362/368/370/370 TF/s at seq 512..16k; pytorch/benchmark "
    "commit ff65cb6 reproduces FA3 430-621 TF/s",
    "X2": "FlashAttention-4 (together.ai blog and paper, 2026): B200 BF16 up to 1605-1613 TF/s, 71% utilization",
    "X3": "FlashAttention-2 (Dao, arXiv:2307.08691): 50-73% of the A100 peak",
    "X4": "arXiv:2507.03114, Characterizing Compute-Communication Overlap (A100, H100, MI250, MI210): overlapped "
    "compute slows 18.9% on average, 40% at most",
    "X5": "NVIDIA developer forum thread 337991: on H100 a concurrent ncclAllGather occupies 24 of 132 SMs and "
    "pushes a one-wave GEMM into a second wave (MFU 80% -> 47%)",
    "X6": "FarSkip-Collective paper (shared/seeds/000) 5.2: 4 nodes of 8 MI325X, 400Gbps inter-node; 5.3: "
    "2-node system connected with 8 400Gbs NICs",
}

# ------------------------------------------------------------------------------------------------
# Shared descriptions

NVIDIA_LAUNCH = (4, 5, 1, 2)  # eager launch, graph launch, per graph node, shortest kernel (us)
NVIDIA_LAUNCH_SRC = ("Launch: 4 us eager (4-6 us measured incl. completion [S35]; hw-figures 10 default 3-5 us), "
                     "5 us per graph launch (E), 1 us per graph node (E, hw-figures 10), 2 us shortest kernel (E).")
AMD_LAUNCH = (7, 7, 1.5, 3)
AMD_LAUNCH_SRC = ("Launch: 7 us eager (HIP dispatch ~7 us [S36]; RCCL graph mode saves 6-10 us per call [S18]), "
                  "7 us graph launch, 1.5 us per graph node, 3 us shortest kernel (E).")
FA3_NOTE = "[X1] FlashAttention-3 on H100 (head dim 128, forward) / 989.4 TF/s peak"
AMD_ATTENTION_NOTE = ("(E) no attention measurement in hw-figures.md: assumed 0.75 x the GEMM efficiency at long "
                      "sequences (H100: FA3 / GEMM = 648 / 794.5 = 0.82 [X1][S3], discounted for ROCm kernels) "
                      "with FA3's sequence-length shape [X1]; relative to the sustained (clock-scaled) peak")
NVSWITCH_ALPHA = {2: 6, 4: 7, 8: 9}
NVSWITCH_ALPHA_SRC = ("all-reduce alpha 6 us on 2 GPUs (NVLS, CUDA graphs) [S10]; 7 / 9 us on 4 / 8 GPUs (E, "
                      "hw-figures 10: 8-15 us incl. launch); device-side only, the engine adds launch_overhead_us. "
                      "Ring kinds: alpha / 2(n-1) per step; all-to-all: one step of alpha.")
XGMI_ALPHA = {2: 5.5, 4: 6, 8: 6.75}
XGMI_ALPHA_SRC = ("8-GPU all-reduce 6-7.5 us in RCCL graph mode (13 us eager = + launch) [S18]; 2 / 4 GPUs 5.5 / "
                  "6 us (E). Ring kinds: alpha / 2(n-1) per step; all-to-all: one step of alpha.")
RAMP = "0.3/0.7/0.9 x the large-message rate at 64 KiB/1 MiB/16 MiB (E, LL/LL128 protocols)."
RAMP_NOTE = "Below 256 MiB: " + RAMP
NIC_400G = {"nics_per_node": 8, "nic_gbps": 400, "nic_usable_GBps": 48.5, "latency_us": 10, "usable_src": "S27"}
CONTENTION_SRC = ("(E) comm_sms: NCCL ran a 24-block all-gather on H100 [X5]. compute_slowdown_with_comm applies on "
                  "top of the SMs the comm kernel holds: overlapped compute slows 18.9% on average [X4], most of "
                  "which the lost SMs (24/132 = 18%) already explain. comm_slowdown_with_compute and "
                  "hbm_interference are guesses. Calibrate before trusting overlap results.")


def contention(comm_sms):
    return {"comm_sms": comm_sms, "compute_slowdown_with_comm": 1.05, "comm_slowdown_with_compute": 1.1,
            "hbm_interference": 1.05, "source": CONTENTION_SRC}


def nvswitch_intra(ring_GBps, a2a_GBps, nvls8_GBps, ring_src, nvls_src):
    """NVSwitch: every group size sees the per-GPU wire rate; only all-reduce on 8 GPUs gains from NVLS."""
    def spec(kind, n):
        if kind == "all_reduce" and n == 8 and nvls8_GBps:
            return {"algorithm": "nvls", "GBps": nvls8_GBps, "source": nvls_src + " " + RAMP_NOTE}
        if kind == "all_to_all":
            return {"algorithm": "direct", "GBps": a2a_GBps, "source": ring_src + " " + RAMP_NOTE}
        return {"algorithm": "ring", "GBps": ring_GBps, "source": ring_src + " " + RAMP_NOTE}
    return spec


def mesh_intra(large8, measured_all_reduce, src8):
    """xGMI mesh: a group of n GPUs uses n-1 of each GPU's 7 links, so busbw scales by (n-1)/7 (pitfall 4)."""
    def spec(kind, n):
        scale = (n - 1) / 7
        algorithm = "direct" if kind == "all_to_all" else "ring"
        note = f"{src8[kind]} 8-GPU value x (n-1)/7 = x {round(scale, 3)} for {n} GPUs (mesh: pitfall 4 [S16][S18])."
        if kind == "all_reduce" and measured_all_reduce:
            points = measured_points(kind, 8, XGMI_ALPHA[8], large8[kind], measured_all_reduce, scale)
            return {"algorithm": algorithm, "points": points, "source": note + " Below 128 MiB: " + RAMP}
        return {"algorithm": algorithm, "GBps": large8[kind] * scale, "source": note + " " + RAMP_NOTE}
    return spec


MI300X_ALL_REDUCE = [(128 * MIB, 294), (256 * MIB, 306), (1 * GIB, 315), (16 * GIB, 319)]
MI300X_SRC8 = {
    "all_reduce": "RCCL 2.22.3 all-reduce busbw 294/306/315/319 GB/s at 128 MiB/256 MiB/1 GiB/16 GiB [S18], with "
                  "the 6.75 us latency taken out (+0.8% at 128 MiB, less above);",
    "all_to_all": "300 GB/s (E): between TransferBench's all-to-all copy upper bound 315-326 [S18] and 0.9 x the "
                  "all-reduce rate (the a2a/all-reduce ratio RCCL shows on MI355X [S23]);",
    "all_gather": "315 GB/s (E): ring over the same links as the measured all-reduce [S18];",
    "reduce_scatter": "315 GB/s (E): ring over the same links as the measured all-reduce [S18];",
}
MI3XX_FABRIC = {"type": "mesh", "link_bw_GBps": 64, "usable_link_bw_GBps": 48, "links_per_gpu": 7,
                "per_gpu_bw_GBps": 448, "latency_us": 2,
                "source": "xGMI full mesh, no switch: 7 links per GPU, one per peer, 64 GB/s per direction per link "
                          "(128 bidir), 448 per GPU (896 bidir) [S16][S18] (pitfall 2); usable 48 GB/s per link after "
                          "CRC/protocol (RCCL's topology figure) [S19]; latency 2 us (E)"}

H100_RING_SRC = ("~370 GB/s busbw: the effective NVLink rate per direction that ring all-reduce, all-gather, "
                 "reduce-scatter and all-to-all reach [S6][S7][S8] (18 x 20.6 = 370.8 in NCCL's model [S11]); "
                 "measured at sizes where latency is <0.1% of the time, so no correction.")

# ------------------------------------------------------------------------------------------------

DEVICES = [
    {
        "name": "h100",
        "description": "HGX H100 node: 8x NVIDIA H100 SXM5 80GB on 4 NVSwitch (NVLink 4), one 400G ConnectX-7 NIC "
                       "per GPU. Datasheet peaks; efficiencies from published measurements.",
        "sources": ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S10", "S11", "S27", "S28", "S35", "S37", "S38",
                    "X1", "X4", "X5"],
        "libraries": "GEMM: torch 2.7 / CUDA 12.6 MAMF [S3]; collectives: NCCL 2.x nccl-tests [S6][S7]",
        "gpu_name": "NVIDIA H100 SXM5 80GB", "sm_count": 132, "peak_clock_mhz": 1830, "max_boost_clock_mhz": 1980,
        "clock_factor": 1.0,
        "peak": {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4, "fp8": 1978.9},
        "hbm_GB": 80, "hbm_bw_GBps": 3350, "l2_MiB": 50, "llc_MiB": 0, "launch_us": NVIDIA_LAUNCH,
        "gpu_src": "Dense peaks [S1][S2][S4] (the datasheet's 1979/3958 are 2:4-sparse, pitfall 1); 132 SMs [S1][S2]; "
                   "peaks are quoted at the 1830 MHz spec clock, 1980 MHz max boost [S3][S1]; sustained_clock_factor "
                   "1.0 because H100 holds its boost clock in GEMMs [S5], the gap to peak lives in the efficiency "
                   "table; 80 GB HBM3, 3.35 TB/s, 50 MB L2 [S2][S3][S5]. " + NVIDIA_LAUNCH_SRC,
        "gemm_best": 794.5, "gemm_best_src": "[S3] (MAMF; 798 on the workplace H100 [S5])",
        "dtype_factor": {"fp8": 0.883},
        "dtype_factor_src": "fp8 = (1402.6/1978.9) / (794.5/989.4) = 0.883 [S3]; others 1.0 (E, not measured)",
        "attention": ("fa3", 648 / 989.4, FA3_NOTE),
        "memory_large_fraction": 0.9, "memory_src": "[S5] (~3.0 TB/s device copy on the workplace H100)",
        "gpus_per_node": 8,
        "fabric": {"type": "switch", "link_bw_GBps": 25, "usable_link_bw_GBps": 20.6, "links_per_gpu": 18,
                   "per_gpu_bw_GBps": 450, "latency_us": 2,
                   "source": "NVLink 4: 18 links, 900 GB/s bidir = 450 per direction = 18 x 25 [S1][S2][S8] through "
                             "4 NVSwitch [S28]; usable 20.6 GB/s per link is NCCL's SM90 figure (18 x 20.6 = 370.8, "
                             "the measured ~370) [S11][S6]; latency 2 us (E)"},
        "network": NIC_400G | {"table_nodes": 32,
                               "source": "8x ConnectX-7 400 Gb/s, one per GPU [S28]; 48-49 GB/s achieved per NIC "
                                         "[S27] (SimAI CX7_BW 48.5 [S38]); latency 10 us per transfer incl. proxy "
                                         "(E); inter-node tables up to 32 nodes (E: they assume a non-blocking "
                                         "rail-optimized fabric)"},
        "intra": nvswitch_intra(370, 370, 480, H100_RING_SRC,
                                "NVLS all-reduce ~480 GB/s busbw on 8 GPUs [S6][S7]: NVSwitch performs the "
                                "reduction, so it exceeds the wire rate and applies to all_reduce only (pitfall 3); "
                                "4 GPUs reach the ring rate 370 [S7]; latency share <0.1%, not corrected."),
        "intra_alpha_us": NVSWITCH_ALPHA, "intra_alpha_src": NVSWITCH_ALPHA_SRC, "intra_ring_GBps": 370,
        "contention": contention(24),
    },
    {
        "name": "h200",
        "description": "HGX H200 node: 8x NVIDIA H200 SXM 141GB on NVSwitch (NVLink 4), 8 compute 400G InfiniBand "
                       "NICs (one per GPU). Datasheet peaks; efficiencies from published and workplace measurements.",
        "sources": ["S3", "S4", "S5", "S6", "S8", "S9", "S10", "S11", "S27", "S28", "S35", "S37", "S38", "X1", "X4",
                    "X5"],
        "libraries": "GEMM: PyTorch on the workplace H200 [S5], MAMF [S3]; collectives: NCCL 2.20.3 [S9]",
        "gpu_name": "NVIDIA H200 SXM 141GB", "sm_count": 132, "peak_clock_mhz": 1830, "max_boost_clock_mhz": 1980,
        "clock_factor": 1.0,
        "peak": {"fp32": 67, "tf32": 494.5, "bf16": 989, "fp16": 989, "fp8": 1979},
        "hbm_GB": 141, "hbm_bw_GBps": 4800, "l2_MiB": 60, "llc_MiB": 0, "launch_us": NVIDIA_LAUNCH,
        "gpu_src": "Same GH100 compute as H100: 132 SMs at 1830 MHz spec clock, dense peaks 67/494.5/989/1979 [S3][S4]; "
                   "1980 MHz read after GEMMs on the workplace H200 [S5], so sustained_clock_factor 1.0; 141 GB HBM3e, "
                   "4.8 TB/s [S3][S28]; L2 60 MiB as PyTorch reported on the workplace H200 [S5] (NVIDIA-derived "
                   "tables say 50 MB [S3]: unresolved). " + NVIDIA_LAUNCH_SRC,
        "gemm_best": 783.5, "gemm_best_src": "(midpoint of 769-798 TF/s, 8192^3 random data, workplace H200 [S5])",
        "dtype_factor": {"fp8": 0.927},
        "dtype_factor_src": "fp8 = (1453.4/1979) / (783.5/989) = 0.927 [S3][S5]; others 1.0 (E, not measured)",
        "attention": ("fa3", 648 / 989.4, FA3_NOTE + "; H200 has the same compute, so the H100 curve is used (E)"),
        "memory_large_fraction": 0.9, "memory_src": "[S5] (~4.3 TB/s device copy on the workplace H200)",
        "gpus_per_node": 8,
        "fabric": {"type": "switch", "link_bw_GBps": 25, "usable_link_bw_GBps": 20.6, "links_per_gpu": 18,
                   "per_gpu_bw_GBps": 450, "latency_us": 2,
                   "source": "18x NVLink 4, 900 GB/s bidir = 450 per direction [S28][S8]; usable 20.6 GB/s per link "
                             "(NCCL SM90) [S11]; latency 2 us (E)"},
        "network": NIC_400G | {"table_nodes": 32,
                               "source": "8 compute 400G InfiniBand NICs of the 10 in NVIDIA's HGX H200 system (2 "
                                         "serve storage) [S28]; 48-49 GB/s achieved per 400G NIC [S27][S38]; latency "
                                         "10 us (E); inter-node tables up to 32 nodes (E, non-blocking rail-optimized fabric assumed)"},
        "intra": nvswitch_intra(370, 370, 475, "Same NVLink 4 fabric as H100: " + H100_RING_SRC,
                                "NVLS all-reduce peak 475 GB/s busbw on 8 H200 (NCCL 2.20.3) [S9]; above the wire "
                                "rate because NVSwitch reduces (pitfall 3), so all_reduce only; latency share <0.1%."),
        "intra_alpha_us": NVSWITCH_ALPHA, "intra_alpha_src": NVSWITCH_ALPHA_SRC, "intra_ring_GBps": 370,
        "contention": contention(24),
    },
    {
        "name": "a100",
        "description": "DGX-A100-style node: 8x NVIDIA A100 SXM4 80GB on NVSwitch (NVLink 3), 8x 200G HDR "
                       "InfiniBand. Datasheet peaks; efficiencies from published measurements.",
        "sources": ["S3", "S11", "S29", "S30", "S35", "S36b", "S37", "S38", "X1", "X3", "X4", "X5"],
        "libraries": "GEMM: MAMF via PyTorch [S3]; collectives: NCCL 2.17/2.18 [S29]",
        "gpu_name": "NVIDIA A100 SXM4 80GB", "sm_count": 108, "peak_clock_mhz": 1410, "max_boost_clock_mhz": 1410,
        "clock_factor": 1.0,
        "peak": {"fp32": 19.5, "tf32": 156, "bf16": 312, "fp16": 312},
        "hbm_GB": 80, "hbm_bw_GBps": 2039, "l2_MiB": 40, "llc_MiB": 0, "launch_us": NVIDIA_LAUNCH,
        "gpu_src": "108 SMs at 1410 MHz; dense peaks FP32 19.5, TF32 156, BF16/FP16 312, no FP8 [S3]; 80 GB HBM2e, "
                   "2.039 TB/s, 40 MB L2 [S3]. " + NVIDIA_LAUNCH_SRC,
        "gemm_best": 271.2, "gemm_best_src": "[S3] (MAMF)",
        "dtype_factor": {},
        "dtype_factor_src": "no per-dtype measurement; all 1.0 (E); no fp8 on A100",
        "attention": ("fa2", 0.72, "[X3] FlashAttention-2 reaches up to ~73% of the A100 peak (0.72 used at long "
                      "sequences); sequence-length shape of FA2 on H100 [X1] (E)"),
        "memory_large_fraction": 0.86,
        "memory_src": "(E: hw-figures.md has no A100 copy measurement; ~1.75 TB/s assumed)",
        "gpus_per_node": 8,
        "fabric": {"type": "switch", "link_bw_GBps": 25, "usable_link_bw_GBps": 20, "links_per_gpu": 12,
                   "per_gpu_bw_GBps": 300, "latency_us": 2,
                   "source": "NVLink 3: 12 links, 600 GB/s bidir = 300 per direction [S30] through NVSwitch; usable "
                             "20.0 GB/s per link (NCCL SM80) -> 240 [S11]; latency 2 us (E)"},
        "network": {"nics_per_node": 8, "nic_gbps": 200, "nic_usable_GBps": 23.5, "latency_us": 10, "table_nodes": 32,
                    "usable_src": "S38",
                    "source": "8x 200 Gb/s HDR per node as in DGX A100 (hw-figures.md marks this (?): AWS p4d has "
                              "4x 100G EFA, one cluster in [S36b] 4x HDR); 23.5 GB/s per HDR NIC (SimAI CX6_BW) "
                              "[S38]; latency 10 us (E); inter-node tables up to 32 nodes (E)"},
        "intra": nvswitch_intra(220, 230, None,
                                "Ring collectives 220 GB/s busbw (E): between the measured ~200 on an HPE 8xA100 "
                                "[S29] and NCCL's 12 x 20.0 = 240 model [S11]; all-to-all 230 (E, NCCL model); no "
                                "NVLS on A100.", ""),
        "intra_alpha_us": NVSWITCH_ALPHA, "intra_alpha_src": NVSWITCH_ALPHA_SRC + " A100 values are the H100 ones (E).",
        "intra_ring_GBps": 220,
        "contention": contention(16) | {"source": CONTENTION_SRC + " A100: 16 SMs of 108 (E)."},
    },
    {
        "name": "a10g",
        "description": "AWS g5.48xlarge: 8x NVIDIA A10G 24GB over PCIe Gen4 (no NVLink), 100 Gb/s network. Peaks "
                       "are derived and unverified; collectives are estimates. Measure before relying on it.",
        "sources": ["S11", "S30", "S31", "S32", "S33", "S34", "S35", "S38", "S39", "S40", "X1", "X3", "X4"],
        "libraries": "none measured",
        "gpu_name": "NVIDIA A10G (AWS g5)", "sm_count": 80, "peak_clock_mhz": 1710, "max_boost_clock_mhz": 1710,
        "clock_factor": 1.0,
        "peak": {"fp32": 35, "tf32": 35, "bf16": 70, "fp16": 70},
        "hbm_GB": 24, "hbm_bw_GBps": 600, "l2_MiB": 6, "llc_MiB": 0, "launch_us": NVIDIA_LAUNCH,
        "gpu_src": "(E/?) GA102, compute capability 8.6 [S33]; 80 SMs, 1710 MHz, FP32 = 80 x 1.71 GHz x 256 = 35.0, "
                   "tensor BF16/FP16 at 512 FLOP/clk/SM = 70 dense, TF32 35: derived in hw-figures.md, unverified "
                   "(A10 datasheet: 72 SMs, BF16 125 [S39]); 24 GB GDDR6, 600 GB/s [S31]; 6 MB L2 (?) [S40]. "
                   + NVIDIA_LAUNCH_SRC,
        "gemm_best": 49, "gemm_best_src": "(E: 0.70 of 70 TF/s assumed, no A10G GEMM measurement retrieved)",
        "dtype_factor": {}, "dtype_factor_src": "no measurement; all 1.0 (E)",
        "attention": ("fa2", 0.58, "(E) FlashAttention-2 assumed at 0.8 x its A100 efficiency (0.72 [X3]) with the "
                      "FA2 sequence-length shape [X1]; no A10G attention measurement"),
        "memory_large_fraction": 0.85, "memory_src": "(E: no A10G copy measurement)",
        "gpus_per_node": 8,
        "fabric": {"type": "switch", "link_bw_GBps": 31.5, "usable_link_bw_GBps": 25, "links_per_gpu": 1,
                   "per_gpu_bw_GBps": 31.5, "latency_us": 5,
                   "source": "No NVLink: each GPU has one PCIe Gen4 x16 link, 31.5 GB/s per direction (16 GT/s x 16 "
                             "x 128/130 / 8), ~25 usable [hw-figures 5][S30] (SimAI Gen4 25.6 [S38]); modelled as a "
                             "switch because any pair goes through the PCIe/host fabric with that per-GPU rate; the "
                             "cross-socket path is slower and lives in the collective tables; latency 5 us (E)"},
        "network": {"nics_per_node": 1, "nic_gbps": 100, "nic_usable_GBps": 12, "latency_us": 15, "table_nodes": 4,
                    "usable_src": "S11",
                    "source": "g5.48xlarge: 100 Gbps networking (ENA/EFA), one interface [hw-figures 5][S32]; 12 "
                              "GB/s usable (NCCL NET_BW for 100 Gbit) [S11]; latency 15 us (E); inter-node tables up to 4 nodes (E)"},
        "intra": lambda kind, n: {
            "algorithm": "direct" if kind == "all_to_all" else "ring",
            "GBps": ({2: 22, 4: 16, 8: 12} if kind == "all_to_all" else {2: 22, 4: 18, 8: 14})[n],
            "source": "(E) no g5.48xlarge nccl-tests result retrieved. 8-GPU ring ~14 GB/s: half the 28 GB/s an 8x "
                      "RTX 5090 PCIe Gen5 box reaches, PCIe systems being bound by the CPU/memory fabric [S34] "
                      "(hw-figures 5 expects 10-20); all-to-all 12; 2 and 4 GPUs (one socket) a little faster "
                      "(E). " + RAMP_NOTE},
        "intra_alpha_us": {2: 10, 4: 14, 8: 20},
        "intra_alpha_src": "PCIe collectives 10/14/20 us on 2/4/8 GPUs (E). Ring kinds: alpha / 2(n-1) per step.",
        "intra_ring_GBps": 14,
        "contention": contention(8) | {"source": CONTENTION_SRC + " A10G: 8 SMs of 80 (E)."},
    },
    {
        "name": "b200",
        "description": "HGX B200 node: 8x NVIDIA B200 (180 GB usable) on NVSwitch (NVLink 5), one 400G ConnectX-7 "
                       "NIC per GPU. HGX datasheet peaks; efficiencies from published measurements.",
        "sources": ["S3", "S11", "S12", "S13", "S14", "S15", "S27", "S35", "S37", "S38", "X1", "X2", "X4", "X5"],
        "libraries": "GEMM: MAMF via PyTorch [S3]; collectives: NCCL 2.27 [S12]",
        "gpu_name": "NVIDIA B200 (HGX, 180 GB)", "sm_count": 148, "peak_clock_mhz": 1855, "max_boost_clock_mhz": 1965,
        "clock_factor": 1.0,
        "peak": {"fp32": 75, "tf32": 1100, "bf16": 2250, "fp16": 2250, "fp8": 4500},
        "hbm_GB": 180, "hbm_bw_GBps": 7700, "l2_MiB": 126, "llc_MiB": 0, "launch_us": (5, 5, 1, 2),
        "gpu_src": "HGX B200 spec values used consistently (pitfall 6): dense FP32 75, TF32 1100, BF16/FP16 2250, FP8 "
                   "4500 [S14][S3]; 180 GB usable HBM3e (192 physical), 7.7 TB/s [S14] (DGX pages say 8.0 [S15]); 148 "
                   "SMs [S13]; 1965 MHz max SM clock reported [S3], 1855 MHz behind the 2250 peak (E: 148 x 8192 "
                   "FLOP/clk); 126 MB L2 [S13]. Launch: ~5 us dispatch on B200 [S35], 5 us graph launch, 1 us per "
                   "graph node, 2 us shortest kernel (E).",
        "gemm_best": 1745, "gemm_best_src": "[S3] (MAMF)",
        "dtype_factor": {"fp8": 0.984},
        "dtype_factor_src": "fp8 = (3432.5/4500) / (1745/2250) = 0.984 [S3]; others 1.0 (E, not measured)",
        "attention": ("fa3", 0.713, "[X2] FlashAttention-4 reaches up to 1605-1613 TF/s = 71% of 2250 on B200; "
                      "sequence-length shape of FA3 on H100 [X1] (E)"),
        "memory_large_fraction": 0.9,
        "memory_src": "(E: no saturating B200 copy number retrieved; hw-figures 6 suggests ~90%)",
        "gpus_per_node": 8,
        "fabric": {"type": "switch", "link_bw_GBps": 50, "usable_link_bw_GBps": 40.1, "links_per_gpu": 18,
                   "per_gpu_bw_GBps": 900, "latency_us": 2,
                   "source": "NVLink 5: 18 links, 1.8 TB/s bidir = 900 per direction = 18 x 50, NV18 all pairs "
                             "through NVSwitch [S14][S15]; usable 40.1 GB/s per link (NCCL SM100, 721.8 per GPU) "
                             "[S11][S12]; latency 2 us (E)"},
        "network": NIC_400G | {"table_nodes": 32,
                               "source": "8x 400 Gb/s ConnectX-7 compute NICs (DGX/HGX B200; the Vultr HGX showed 14 "
                                         "ConnectX NICs incl. storage) [S15]; 48-49 GB/s achieved per NIC [S27][S38]; "
                                         "latency 10 us (E); inter-node tables up to 32 nodes (E)"},
        "intra": nvswitch_intra(720, 720, 830,
                                "720 GB/s busbw (E): NCCL's B200 model 18 x 40.1 = 721.8 [S11][S12] (on H100 the same "
                                "model matched the measured 370); no B200 all-to-all measurement retrieved.",
                                "NVLS all-reduce 830+ GB/s busbw on 8 B200 (NCCL 2.27; the user expected 900+) [S12]: "
                                "NVSwitch reduces, so all_reduce only (pitfall 3); latency share <0.1%."),
        "intra_alpha_us": NVSWITCH_ALPHA, "intra_alpha_src": NVSWITCH_ALPHA_SRC + " B200 values are the H100 ones (E).",
        "intra_ring_GBps": 720,
        "contention": contention(24),
    },
    {
        "name": "mi300x",
        "description": "8x AMD Instinct MI300X 192GB, xGMI full mesh (no switch), one 400G NIC per GPU. Datasheet "
                       "peaks with a sustained-clock factor (pitfall 5); efficiencies from published measurements.",
        "sources": ["S3", "S16", "S17", "S18", "S19", "S20", "S23", "S25", "S26", "S27", "S36", "S37", "S41", "S42",
                    "X1", "X4", "X5"],
        "libraries": "GEMM: PyTorch ROCm 6.3 TunableOp MAMF [S3], hipBLASLt [S20]; collectives: RCCL 2.22.3 / ROCm 6.3 "
                     "[S18]",
        "gpu_name": "AMD Instinct MI300X", "sm_count": 304, "peak_clock_mhz": 2100, "max_boost_clock_mhz": 2100,
        "clock_factor": 0.575,
        "peak": {"fp32": 163.4, "tf32": 653.7, "bf16": 1307.4, "fp16": 1307.4, "fp8": 2614.9},
        "hbm_GB": 192, "hbm_bw_GBps": 5300, "l2_MiB": 32, "llc_MiB": 256, "launch_us": AMD_LAUNCH,
        "gpu_src": "304 CUs (8 XCD x 38) at 2100 MHz peak; dense FP32 163.4, TF32 653.7, BF16/FP16 1307.4, FP8 2614.9 "
                   "[S16]; sustained_clock_factor 0.575 = 1207 MHz median clock in dense BF16 GEMM / 2100 [S20] "
                   "(pitfall 5); 192 GB HBM3, 5.3 TB/s [S16]; 32 MB L2 (4 per XCD), 256 MB Infinity Cache [S16][S17]. "
                   + AMD_LAUNCH_SRC,
        "gemm_best": 668.4, "gemm_best_src": "[S3] (MAMF via PyTorch, ROCm 6.3, TunableOp; hipBLASLt MAF 708 [S20])",
        "dtype_factor": {"fp16": 0.924, "fp8": 0.899},
        "dtype_factor_src": "fp16 = 654/708 = 0.924, fp8 = (1273/2614.9) / (708/1307.4) = 0.899, from AMD's MAF "
                            "measurements [S20]; fp32 and tf32 1.0 (E)",
        "attention": ("fa3", 0.75 * 668.4 / (1307.4 * 0.575), AMD_ATTENTION_NOTE),
        "memory_large_fraction": 0.78,
        "memory_src": "(E, weak data: 2-3 TB/s memcpy plateau [S41], ~81% of 5.3 TB/s [S42]; hw-figures suggests "
                      "4.0-4.3 TB/s)",
        "gpus_per_node": 8, "fabric": MI3XX_FABRIC,
        "network": NIC_400G | {"table_nodes": 32,
                               "source": "8x 400 Gb/s NICs, 1:1 GPU:NIC (ConnectX-7 [S25] or Pollara 400 [S26]); "
                                         "48.5 GB/s achieved per 400G NIC as measured for CX-7 [S27] (E for "
                                         "Pollara); latency 10 us (E); inter-node tables up to 32 nodes (E)"},
        "intra": mesh_intra({"all_reduce": 319, "all_to_all": 300, "all_gather": 315, "reduce_scatter": 315},
                            MI300X_ALL_REDUCE, MI300X_SRC8),
        "intra_alpha_us": XGMI_ALPHA, "intra_alpha_src": XGMI_ALPHA_SRC, "intra_ring_GBps": 319,
        "contention": contention(32) | {"source": CONTENTION_SRC + " MI300X: RCCL assumed to hold 32 of 304 CUs (E)."},
    },
    {
        "name": "mi325x",
        "description": "The FarSkip-Collective paper's cluster (5.2): nodes of 8x AMD Instinct MI325X 256GB on an xGMI "
                       "full mesh, 8x 400 Gb/s NICs per node (one per GPU), up to 4 nodes. Datasheet peaks with a "
                       "sustained-clock factor; efficiencies from published measurements.",
        "sources": ["S3", "S16", "S17", "S18", "S19", "S20", "S21", "S23", "S25", "S27", "S36", "S37", "S43", "X1",
                    "X4", "X5", "X6"],
        "libraries": "GEMM: PyTorch TunableOp MAMF at 1000 W [S3], hipBLASLt [S20]; collectives: MI300X RCCL 2.22.3 "
                     "figures [S18] (no MI325X rccl-tests retrieved)",
        "gpu_name": "AMD Instinct MI325X", "sm_count": 304, "peak_clock_mhz": 2100, "max_boost_clock_mhz": 2100,
        "clock_factor": 0.689,
        "peak": {"fp32": 163.4, "tf32": 653.7, "bf16": 1307.4, "fp16": 1307.4, "fp8": 2614.9},
        "hbm_GB": 256, "hbm_bw_GBps": 6000, "l2_MiB": 32, "llc_MiB": 256, "launch_us": AMD_LAUNCH,
        "gpu_src": "Same CDNA3 silicon as MI300X: 304 CUs, 2100 MHz peak, identical peaks [S17][S3][S21]; "
                   "sustained_clock_factor 0.689 = 1447 MHz median BF16 GEMM clock / 2100 (higher power limit than "
                   "MI300X) [S20]; 256 GB HBM3e, 6.0 TB/s [S21][S3]; 32 MB L2, 256 MB Infinity Cache [S17][S3]. "
                   + AMD_LAUNCH_SRC,
        "gemm_best": 784.9, "gemm_best_src": "[S3] (MAMF via PyTorch, TunableOp, 1000 W; hipBLASLt MAF 843 [S20])",
        "dtype_factor": {"fp16": 0.942, "fp8": 0.901},
        "dtype_factor_src": "fp16 = 794/843 = 0.942, fp8 = (1519/2614.9) / (843/1307.4) = 0.901 [S20]; fp32 and tf32 "
                            "1.0 (E)",
        "attention": ("fa3", 0.75 * 784.9 / (1307.4 * 0.689), AMD_ATTENTION_NOTE),
        "memory_large_fraction": 0.78, "memory_src": "(E: no MI325X copy measurement; MI300X estimate reused)",
        "gpus_per_node": 8,
        "fabric": MI3XX_FABRIC | {"source": MI3XX_FABRIC["source"] + "; MI325X uses the same UBB 2.0 fully meshed "
                                  "platform as MI300X [S21] (per-link figures assumed equal, E)"},
        "network": NIC_400G | {"table_nodes": 4,
                               "source": "FarSkip-Collective 5.2 trains on 4 nodes of 8 MI325X with '400Gbps' "
                                         "inter-node bandwidth; its 5.3 two-node system is 'connected with 8 400Gbs "
                                         "NICs' [X6], and MI325X nodes carry 8x ConnectX-7 400G [S25]: read as one "
                                         "400 Gb/s NIC per GPU (3.2 Tb/s per node), not 400 Gb/s per node (if it "
                                         "were, set nics_per_node 1). 48.5 GB/s achieved per NIC [S27]; latency 10 "
                                         "us (E); inter-node tables up to 4 nodes = the paper's cluster"},
        "intra": mesh_intra({"all_reduce": 319, "all_to_all": 300, "all_gather": 315, "reduce_scatter": 315},
                            MI300X_ALL_REDUCE,
                            {k: "MI300X figure reused (identical xGMI, E): " + v for k, v in MI300X_SRC8.items()}),
        "intra_alpha_us": XGMI_ALPHA, "intra_alpha_src": XGMI_ALPHA_SRC, "intra_ring_GBps": 319,
        "contention": contention(32) | {"source": CONTENTION_SRC + " MI325X: RCCL assumed to hold 32 of 304 CUs (E)."},
    },
    {
        "name": "mi355x",
        "description": "8x AMD Instinct MI355X 288GB, Infinity Fabric 4 full mesh (no switch), one 400G NIC per GPU. "
                       "Datasheet peaks with an estimated sustained-clock factor; collectives from a community "
                       "rccl-tests report (low confidence).",
        "sources": ["S3", "S17", "S20", "S22", "S23", "S24", "S25", "S27", "S36", "S37", "X1", "X4", "X5"],
        "libraries": "GEMM: PyTorch MAMF, ROCm 7.0.2 [S3]; collectives: RCCL 2.27.7 / 2.30.4, ROCm 7.2.3 / 7.2.4 [S23]",
        "gpu_name": "AMD Instinct MI355X", "sm_count": 256, "peak_clock_mhz": 2400, "max_boost_clock_mhz": 2400,
        "clock_factor": 0.714,
        "peak": {"fp32": 157.3, "bf16": 2516.6, "fp16": 2516.6, "fp8": 5033},
        "hbm_GB": 288, "hbm_bw_GBps": 8000, "l2_MiB": 32, "llc_MiB": 256, "launch_us": AMD_LAUNCH,
        "gpu_src": "256 CUs (8 XCD x 32) [S17][S22] at 2400 MHz [S3][S24]; dense FP32 157.3, BF16/FP16 2516.6, FP8 5033 "
                   "(10.1 PF quotes are sparse) [S3]; TF32 not published, so no tf32 peak; sustained_clock_factor "
                   "0.714 (E: no MI355X GEMM clock published; chosen so that the PyTorch MAMF 1565 TF/s [S3] sits at "
                   "the same 0.871 software efficiency as MI325X's PyTorch MAMF at its measured clock [S3][S20]); "
                   "288 GB HBM3e, 8.0 TB/s [S3]; 32 MB L2, 256 MB Infinity Cache [S17]. " + AMD_LAUNCH_SRC,
        "gemm_best": 1565, "gemm_best_src": "[S3] (MAMF via PyTorch, ROCm 7.0.2)",
        "dtype_factor": {"fp8": 0.9},
        "dtype_factor_src": "fp8 0.9 (E: the fp8/bf16 ratio AMD measured on MI300X and MI325X [S20]); others 1.0 (E)",
        "attention": ("fa3", 0.75 * 1565 / (2516.6 * 0.714), AMD_ATTENTION_NOTE),
        "memory_large_fraction": 0.78, "memory_src": "(E: no MI355X copy measurement; MI300X estimate reused)",
        "gpus_per_node": 8,
        "fabric": {"type": "mesh", "link_bw_GBps": 76.8, "usable_link_bw_GBps": 60, "links_per_gpu": 7,
                   "per_gpu_bw_GBps": 537.6, "latency_us": 2,
                   "source": "Infinity Fabric 4, 7 links, fully connected 8 GPUs: 153.6 GB/s bidir per link = 76.8 per "
                             "direction, 537.6 per GPU [S23][S24]; usable 60 GB/s per link = measured single-link "
                             "sendrecv 59-61 [S23] (?); latency 2 us (E)"},
        "network": NIC_400G | {"table_nodes": 32,
                               "source": "8x 400G RDMA NICs per node, 1:1 (Pollara 400, ConnectX-7 or Thor 2) [S25]; "
                                         "48.5 GB/s achieved per 400G NIC as measured for CX-7 [S27]; latency 10 us "
                                         "(E); inter-node tables up to 32 nodes (E)"},
        "intra": mesh_intra({"all_reduce": 390, "all_to_all": 352, "all_gather": 377, "reduce_scatter": 397}, None,
                            {"all_reduce": "390 GB/s: midpoint of 381-398 measured [S23] (?);",
                             "all_to_all": "352 GB/s: midpoint of 343-361 measured [S23] (?);",
                             "all_gather": "377 GB/s: midpoint of 366-388 measured [S23] (?);",
                             "reduce_scatter": "397 GB/s: midpoint of 386-408 measured [S23] (?);"}),
        "intra_alpha_us": XGMI_ALPHA, "intra_alpha_src": XGMI_ALPHA_SRC + " MI355X values are the MI300X ones (E).",
        "intra_ring_GBps": 390,
        "contention": contention(32) | {"source": CONTENTION_SRC + " MI355X: RCCL assumed to hold 32 of 256 CUs (E)."},
    },
]
