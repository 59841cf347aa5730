#!/usr/bin/env bash
# Runs one example the way its README says and diffs what it prints against the expected output stored
# beside it (SimGrid's examples-as-tests habit). Outputs carry simulated times only, so they are diffed
# as they are. Usage:
#   run_example.sh sweep  MOESIM EXAMPLE_DIR                 sweep.json's results CSV vs expected.csv
#                                                            (not the progress lines: they come in
#                                                            completion order)
#   run_example.sh script MOESIM EXAMPLE_DIR [--sections REGEX] SCRIPT [ARG...]
#                                                            SCRIPT ARG... MOESIM's stdout vs expected.txt;
#                                                            with --sections, only expected.txt's sections
#                                                            whose header matches REGEX (a section starts at
#                                                            a '#' line after a data line), for a run of a
#                                                            documented subset
#   run_example.sh readme MOESIM REPO_ROOT                   scripts/quickstart's commands after its build
#                                                            vs the README block between the
#                                                            quickstart-output markers
set -euo pipefail
mode=$1 moesim=$2 dir=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case $mode in
  sweep)
    "$moesim" sweep "$dir/sweep.json" --jobs 2 --out "$work/results.csv" > "$work/progress.txt" 2>&1 ||
      { cat "$work/progress.txt" >&2; exit 1; }
    diff -u "$dir/expected.csv" "$work/results.csv"
    ;;
  script)
    sections=.
    if [[ $1 == --sections ]]; then
      sections=$2
      shift 2
    fi
    script=$1
    shift
    awk -v re="$sections" '/^#/ && !after_header { keep = $0 ~ re } { after_header = /^#/ } keep' \
      "$dir/expected.txt" > "$work/expected.txt"
    "$dir/$script" "$@" "$moesim" > "$work/stdout.txt"
    diff -u "$work/expected.txt" "$work/stdout.txt"
    ;;
  readme)
    # What scripts/quickstart runs once moesim is built, with this build's moesim.
    awk 'done { print } /^cmake --build / { done = 1 }' "$dir/scripts/quickstart" |
      sed "s|build/app/moesim|\"$moesim\"|g" > "$work/run.sh"
    grep -q ' simulate ' "$work/run.sh" || { echo "no simulate command after the build in scripts/quickstart" >&2; exit 1; }
    awk '/<!-- quickstart-output:end -->/ { inside = 0 } inside && !/^```/ { print }
         /<!-- quickstart-output:begin -->/ { inside = 1 }' "$dir/README.md" > "$work/expected.txt"
    [[ -s $work/expected.txt ]] || { echo "README.md has no quickstart-output block" >&2; exit 1; }
    (cd "$work" && bash -euo pipefail run.sh > stdout.txt)
    diff -u "$work/expected.txt" "$work/stdout.txt"
    ;;
  *)
    echo "run_example.sh: unknown mode $mode (sweep, script, readme)" >&2
    exit 2
    ;;
esac
