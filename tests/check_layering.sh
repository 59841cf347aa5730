#!/usr/bin/env bash
# The link line is the dependency contract, but headers can bypass it: fail if a library includes what it must not.
set -u
root=$1
fail=0
check() {  # folder, forbidden pattern, why
  if grep -rnE "$2" "$root/$1" --include='*.cpp' --include='*.hpp' > /tmp/layering.$$ 2>/dev/null; then
    echo "layering: $1 must not include $3:"; cat /tmp/layering.$$; fail=1
  fi
}
check sim '#include [<"](moesim/(models|cost|schedules|hwprofiles|reports|calibrate)/|CLI/)' "models, cost, schedules, hwprofiles, reports, calibrate or CLI11"
check models '#include [<"](moesim/(sim|schedules|hwprofiles|reports)/|CLI/)' "the engine, schedules, profiles, reports or CLI11"
check hwprofiles '#include [<"](moesim/(sim|schedules|models|reports)/|CLI/)' "the engine, schedules, models, reports or CLI11"
check cost '#include [<"](moesim/(schedules|reports|calibrate|sweep|traces)/|CLI/)' "schedules, reports, calibrate, sweep, traces or CLI11"
check schedules '#include [<"](moesim/(reports|validate|calibrate|sweep)/|CLI/)' "reports, validate, calibrate, sweep or CLI11"
check validate '#include [<"](moesim/(reports|calibrate|sweep)/|CLI/)' "reports, calibrate, sweep or CLI11"
check reports '#include [<"]CLI/' "CLI11"
check calibrate '#include [<"](moesim/(sim|schedules|reports|sweep|validate)/|CLI/)' "the engine, schedules, reports, sweep, validate or CLI11"
check traces '#include [<"](moesim/(sim|models|cost|hwprofiles|schedules|reports|calibrate|validate|sweep)/|CLI/)' "anything but common"
check sweep '#include [<"](moesim/(sim|schedules|models|hwprofiles|reports|calibrate)/|CLI/)' "anything but common"
rm -f /tmp/layering.$$
exit $fail
