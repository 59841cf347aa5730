"""A minimal torchrun: starts N processes of `python3 -m MODULE ARGS` on this host (MODULE: torch_stacks.run).

  python3 -m torch_stacks.launch --nproc 2 [--port P] [--pin] [--module torch_stacks.check] -- ARGS...

Sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun does; returns the worst exit code.
--pin gives each rank its own share of the physical cores (all hardware threads of each, none shared with
another rank), as numactl or a launcher's CPU binding would; unpinned, the OS may run two ranks' Python threads
on the hardware threads of one core.
It exists because Debian's torch 1.13 torchrun fails under Python 3.11 (the CPU tests), and it keeps the
device's command the same.
"""
import argparse
import glob
import os
import subprocess
import sys


def core_groups(nproc):
    """The CPUs this process may use, as `nproc` disjoint sets of whole physical cores (all their hardware
    threads), from /sys's topology; None where the topology is not readable."""
    allowed = os.sched_getaffinity(0)
    cores = {}
    for path in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list"):
        cpu = int(path.split("/")[-3][3:])
        if cpu not in allowed:
            continue
        with open(path, encoding="utf-8") as f:
            cores.setdefault(f.read().strip(), set()).add(cpu)
    if len(cores) < nproc:
        return None
    ordered = sorted(cores.values(), key=min)
    share = len(ordered) // nproc
    return [set().union(*ordered[r * share:(r + 1) * share]) for r in range(nproc)]


def main():
    p = argparse.ArgumentParser(prog="torch_stacks.launch")
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--module", default="torch_stacks.run")
    p.add_argument("--pin", action="store_true", help="each rank on its own physical cores")
    p.add_argument("args", nargs=argparse.REMAINDER, help="-- then the module's arguments")
    a = p.parse_args()
    run_args = a.args[1:] if a.args[:1] == ["--"] else a.args
    groups = core_groups(a.nproc) if a.pin else None
    if a.pin and groups is None:
        sys.exit("torch_stacks.launch: --pin: fewer physical cores than processes, or no CPU topology in /sys")
    procs = []
    for rank in range(a.nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(a.nproc),
                   LOCAL_WORLD_SIZE=str(a.nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(a.port))
        pin = (lambda cpus=groups[rank]: os.sched_setaffinity(0, cpus)) if groups else None
        procs.append(subprocess.Popen([sys.executable, "-m", a.module, *run_args], env=env, preexec_fn=pin))
    codes = [proc.wait() for proc in procs]
    return max(codes, key=abs)


if __name__ == "__main__":
    sys.exit(main())
