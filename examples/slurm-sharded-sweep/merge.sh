#!/usr/bin/env bash
# Merges the array's shard results; fails (exit 2) naming the missing shard or point if a task did not finish.
set -euo pipefail
MOESIM=${MOESIM:-build/app/moesim}
exec "$MOESIM" sweep merge "${OUT:-results/sweep.results.csv}" results/task-*
