"""The process group a run uses: torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK), or one process."""
import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist


@dataclass
class RunContext:
    rank: int
    world: int
    device: torch.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def synchronize(self):
        if self.is_cuda:
            torch.cuda.synchronize(self.device)

    def barrier(self):
        if self.world > 1:
            dist.barrier()
        self.synchronize()

    def gather(self, obj):
        """Every rank's obj, on rank 0 (None elsewhere)."""
        if self.world == 1:
            return [obj]
        out = [None] * self.world if self.rank == 0 else None
        dist.gather_object(obj, out, dst=0)
        return out


def init_context(device_kind, timeout_s=180):
    """Joins torchrun's process group (NCCL on CUDA, gloo on the CPU); one process without torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device_kind == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("--device cuda: no CUDA device is visible")
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    if world > 1:
        kwargs = {"timeout": timedelta(seconds=timeout_s)}
        if device.type == "cuda":
            kwargs["device_id"] = device
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=world, **kwargs)
    return RunContext(rank, world, device)


def close_context(ctx):
    if ctx.world > 1 and dist.is_initialized():
        dist.destroy_process_group()
