"""Where and with what a record was measured: git, software versions, GPUs, driver, clocks, host CPU."""
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone

import torch

_ENV_PREFIXES = ("NCCL_", "TORCH_", "CUDA_VISIBLE_DEVICES", "NVSHMEM_", "OMP_NUM_THREADS", "PYTORCH_")


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def git_sha():
    """MOESIM_GIT_SHA where the tree travelled without .git (the device), else git's HEAD, else 'unknown'."""
    sha = os.environ.get("MOESIM_GIT_SHA")
    if sha:
        return sha
    return _run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "HEAD"]) or "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _versions():
    versions = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda}
    if torch.cuda.is_available():
        nccl = torch.cuda.nccl.version()
        versions["nccl"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
        versions["cudnn"] = torch.backends.cudnn.version()
    try:
        import transformers  # noqa: PLC0415 (optional: present on the device)
        versions["transformers"] = transformers.__version__
    except ImportError:
        versions["transformers"] = None
    return versions


def gpu_state(device):
    """Name, memory, SMs and, through NVML where it is installed, driver, clocks (MHz), power (W), temperature."""
    if device.type != "cuda":
        return None
    props = torch.cuda.get_device_properties(device)
    state = {"index": device.index, "name": props.name, "memory_MiB": props.total_memory // 2**20,
             "sms": props.multi_processor_count}
    try:
        import pynvml  # noqa: PLC0415 (nvidia-ml-py)
        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        index = int(visible.split(",")[device.index]) if visible else device.index
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        state.update(
            driver=pynvml.nvmlSystemGetDriverVersion(),
            sm_clock_MHz=pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
            sm_clock_max_MHz=pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
            mem_clock_MHz=pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
            power_W=pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
            temperature_C=pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
        )
    except Exception as e:  # noqa: BLE001 (NVML is optional; say why it is missing)
        state["nvml_error"] = f"{type(e).__name__}: {e}"
    return state


def provenance():
    return {
        "git_sha": git_sha(),
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": sys.argv,
        "host": {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
                 "cpu_affinity": len(os.sched_getaffinity(0)), "kernel": platform.release()},
        "versions": _versions(),
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith(_ENV_PREFIXES)},
    }
