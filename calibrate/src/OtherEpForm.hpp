#pragma once
/**
 * @file A learned implementation profile's form of the EP path's ops at the EP degree its traces did not run.
 */
#include <string>
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"

namespace moesim::calibrate::detail {

// A trace shows each op at one EP degree. Where the base profile's form of an op has steps that run only at
// EP > 1 (the split-size exchange and what waits for it, the chunk sorts), the traced steps include them (EP
// > 1) or lack them (EP 1), and cannot tell which of theirs they are. At the other degree the learned entry
// runs the base's form instead: from an EP > 1 trace, its traced steps become EP > 1 only and the base's
// steps of EP 1 are added for EP 1 (a GEMM at the traced one's rate); from an EP 1 trace, the base's EP > 1
// steps are added where the base has them (those before its first other step first, the rest last). Added
// steps cost the host the base's time times the traced host's speed against the base (learned over base host
// time, per pass, over the ops the base runs alike at every EP degree).
// entry_ep[i]: the EP degree of the trace p.ops[i] was learned from. Needs p.base; says what it did in
// `notes`.
void complete_for_other_ep(cost::ImplementationProfile& p, const std::vector<int>& entry_ep,
                           std::vector<std::string>& notes);

}  // namespace moesim::calibrate::detail
