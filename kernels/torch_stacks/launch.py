"""A minimal torchrun: starts N processes of `python3 -m MODULE ARGS` on this host (MODULE: torch_stacks.run).

  python3 -m torch_stacks.launch --nproc 2 [--port P] [--module torch_stacks.check] -- ARGS...

Sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun does; returns the worst exit code.
It exists because Debian's torch 1.13 torchrun fails under Python 3.11 (the CPU tests), and it keeps the
device's command the same.
"""
import argparse
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(prog="torch_stacks.launch")
    p.add_argument("--nproc", type=int, required=True)
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--module", default="torch_stacks.run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="-- then the module's arguments")
    a = p.parse_args()
    run_args = a.args[1:] if a.args[:1] == ["--"] else a.args
    procs = []
    for rank in range(a.nproc):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(a.nproc),
                   LOCAL_WORLD_SIZE=str(a.nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(a.port))
        procs.append(subprocess.Popen([sys.executable, "-m", a.module, *run_args], env=env))
    codes = [proc.wait() for proc in procs]
    return max(codes, key=abs)


if __name__ == "__main__":
    sys.exit(main())
