#pragma once
/**
 * @file What a learned implementation profile takes from its base where its traces could not show it: the EP
 * path's ops at the EP degree the traces did not run, and the kernels of model features the traced models
 * lack.
 */
#include <string>
#include <vector>

#include "moesim/cost/ImplementationProfile.hpp"
#include "moesim/models/ModelSpec.hpp"

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

// Steps of the base that run only for a model feature (`when: qk_norm`, `when: shared_gate`) which no traced
// model has: a trace of Mixtral shows no per-head q/k norms, one of DeepSeek no gate on the shared experts,
// so their learned ops would charge a Qwen3 or a Qwen1.5 nothing for them. Each learned op gets the base's
// steps of such features after its own, their host time the base's times the traced host's speed against the
// base (as above). Needs p.base; says what it did in `notes`.
void add_untraced_feature_steps(cost::ImplementationProfile& p, const std::vector<models::ModelSpec>& traced,
                                std::vector<std::string>& notes);

}  // namespace moesim::calibrate::detail
