#!/usr/bin/env bash
# A schedule's name lives in its family's files only: no code elsewhere branches on one. Fails on any
# comparison with a registered schedule name ('== "farskip"', '"megakernel" !=') in C++ sources outside
# the family folders of schedules/src. kernels/ is the GPU runner: its schedule names are its own. Hidden folders (.git, the device tool's
# staging copy .device-carry) are not sources.
set -u
moesim=$1 root=$2
fail=0
names=$("$moesim" list schedules | grep -oE '^[a-z0-9-]+:' | tr -d :)
[[ -n $names ]] || { echo "check_schedule_names: moesim list schedules printed no names"; exit 1; }
for name in $names; do
  hits=$(grep -rnE "(==|!=) *\"$name\"|\"$name\" *(==|!=)" "$root" --include='*.cpp' --include='*.hpp' --exclude-dir='.*' \
           | grep -vE "^$root/(tests|kernels|build[^/]*)/|^$root/schedules/src/(layers|foldmoe|flashmoe)/")
  if [[ -n $hits ]]; then echo "schedule name '$name' compared outside its family:"; echo "$hits"; fail=1; fi
done
exit $fail
