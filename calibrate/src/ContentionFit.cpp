// The contention section of a calibrated profile from contention_bench results.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/calibrate/Fitting.hpp"

namespace moesim::calibrate::detail {

double held_sms(const ContentionCase& k, const hw::ContentionSpec& spec) {
  return k.ctas && *k.ctas > 0 ? *k.ctas : spec.comm_sms;
}

namespace {

using hw::CollectiveScope;

// Peer copies take no SMs, but their HBM and L2 traffic slows a GEMM beside them.
std::string fit_copy_slowdown(hw::ContentionSpec& spec, const std::vector<double>& gemm_slowdowns,
                              const std::string& tags) {
  if (gemm_slowdowns.empty()) return "";
  spec.compute_slowdown_with_copy = round4(std::max(1.0, geometric_mean(gemm_slowdowns)));
  return " compute_slowdown_with_copy = " + num(spec.compute_slowdown_with_copy, 4) +
         ": geometric mean of the GEMM slowdown over the " + std::to_string(gemm_slowdowns.size()) +
         " peer-copy cases " + tags + " (" + range_text(gemm_slowdowns) + ").";
}

// Bus bytes per second a case's collective moved (nccl-tests convention), from a time and its latency.
double bus_Bps(const ContentionCase& k, double seconds, double latency_s) {
  const auto kind = profile_kind(k.comm);  // none for a copy-engine transfer: its bytes are its bus bytes
  const double bytes = kind ? hw::bus_bytes(*kind, k.ranks, k.bytes) : k.bytes;
  return bytes / std::max(seconds - latency_s, 1e-9);
}

/*
 * HBM sharing from the streaming add (contention_bench --compute add), which alone uses the whole HBM
 * (its bytes/s alone is the capacity C). Beside a collective that moves bus bytes at rate b while they
 * overlap, the add keeps 1/slowdown of C, so the collective's traffic took (1 - 1/slowdown) C:
 *   - copy engines keep their rate, so hbm_bytes_per_copy_byte = (1 - 1/s) C / b;
 *   - NCCL loses rate (its loads and stores queue with the add's), so hbm_bytes_per_comm_byte is the same
 *     ratio with b measured beside the add, and the split of the contended HBM between the add's SMs
 *     (SMs - w) and the comm kernel's w (CTAs, or comm_sms for NCCL's default) gives comm_hbm_weight
 *     = share (SMs - w) / (w (1 - share)).
 * Geometric means over the peer cases; a device-local copy moves both its read and its write through one
 * HBM at several times a peer link's rate and is left out.
 */
std::string fit_hbm_sharing(Context& c, const std::vector<const ContentionCase*>& adds,
                            const std::function<double(const ContentionCase&)>& latency_of) {
  hw::ContentionSpec& spec = c.out.profile.contention;
  const double sms = c.out.profile.gpu.sm_count;
  std::vector<double> copy_f, comm_f, weights;
  for (const ContentionCase* k : adds) {
    if (k->ranks < 2 || !k->compute_with_comm_s || !k->comm_with_compute_s || k->compute_hbm_Bps <= 0)
      continue;
    const double taken = 1 - k->compute_alone_s / *k->compute_with_comm_s;
    const double bus = bus_Bps(*k, *k->comm_with_compute_s, latency_of(*k));
    if (taken <= 0) continue;
    if (k->comm == "ce_copy") {
      copy_f.push_back(taken * k->compute_hbm_Bps / bus);
      continue;
    }
    if (!k->ctas) continue;
    comm_f.push_back(taken * k->compute_hbm_Bps / bus);
    const double w = held_sms(*k, spec);
    if (w > 0 && taken < 1) weights.push_back(taken * (sms - w) / (w * (1 - taken)));
  }
  if (copy_f.empty() && comm_f.empty()) return "";
  std::string text = " HBM sharing from a streaming add beside the collectives (" +
                     fixed(adds.front()->compute_hbm_Bps / 1e9, 0) + " GB/s alone):";
  if (!copy_f.empty()) {
    spec.hbm_bytes_per_copy_byte = round4(geometric_mean(copy_f));
    text += " hbm_bytes_per_copy_byte = " + num(spec.hbm_bytes_per_copy_byte, 4) + ", geometric mean over " +
            std::to_string(copy_f.size()) +
            " peer-copy cases of (1 - 1/add slowdown) x add GB/s / copy bus GB/s (" + range_text(copy_f) +
            "; a read and a write per byte would be 2);";
  }
  if (!comm_f.empty()) {
    spec.hbm_bytes_per_comm_byte = round4(geometric_mean(comm_f));
    text += " hbm_bytes_per_comm_byte = " + num(spec.hbm_bytes_per_comm_byte, 4) + ", the same over " +
            std::to_string(comm_f.size()) + " NCCL cases with the bus GB/s measured beside the add (" +
            range_text(comm_f) + ")";
  }
  if (!weights.empty()) {
    spec.comm_hbm_weight = round4(geometric_mean(weights));
    text += "; comm_hbm_weight = " + num(spec.comm_hbm_weight, 4) +
            ": the contended HBM split between the add's SMs and the comm kernel's CTAs (comm_sms for NCCL's "
            "default), geometric mean of share x (SMs - CTAs) / (CTAs x (1 - share)) (" +
            range_text(weights) + ")";
  }
  // Residual: the add's time beside each collective as the engine shares the HBM, the collective at its
  // bus rate alone (slowed beside compute) as demand.
  ErrorSummary e;
  for (const ContentionCase* k : adds) {
    if (k->ranks < 2 || !k->compute_with_comm_s) continue;
    const double bus_alone = bus_Bps(*k, k->comm_alone_s, latency_of(*k));
    double kernel_share = 1;
    if (k->comm == "ce_copy") {
      kernel_share = 1 - spec.hbm_bytes_per_copy_byte * bus_alone / k->compute_hbm_Bps;
    } else if (k->ctas) {
      const double ctas = held_sms(*k, spec);
      const double comm_weight = spec.comm_hbm_weight * ctas;
      const double demand =
          spec.hbm_bytes_per_comm_byte * bus_alone / spec.comm_slowdown_with_compute / k->compute_hbm_Bps;
      kernel_share = 1 - std::min(demand, comm_weight / (sms - ctas + comm_weight));
    } else {
      continue;
    }
    e.add(k->compute_alone_s / std::max(kernel_share, 1e-3), *k->compute_with_comm_s);
  }
  add_residual(
      c, "contention hbm", e,
      "streaming add's time beside peer copies and NCCL as the engine shares the HBM, all peer cases");
  return text + ".";
}

std::string shape_text(const ContentionCase& k) {
  return std::to_string(k.gemm_m) + "x" + std::to_string(k.gemm_n) + "x" + std::to_string(k.gemm_k);
}

// The engine's SM stretch of a case's GEMM: its SM demand over what the collective leaves it.
double sm_stretch(const ContentionCase& k, const hw::ContentionSpec& spec, int sms) {
  const double demand = hw::gemm_sm_fraction(k.gemm_m, k.gemm_n, 1, sms) * sms;
  return demand / std::min(demand, sms - held_sms(k, spec));
}

bool covers_gemm(const ContentionCase& k) {
  return k.comm_alone_s >= k.compute_alone_s;
}

/*
 * gemm_slowdown_with_comm: with GEMMs of several lengths measured, the residual beyond the engine's SM
 * stretch, per shape, over its cases with a known CTA count whose collective spans the GEMM (geometric
 * mean of slowdown / stretch, at least 1), at the shape's length alone. The longest shape is the reference
 * that compute_slowdown_with_comm and comm_sms come from.
 */
std::string fit_gemm_lengths(hw::ContentionSpec& spec, const std::vector<const ContentionCase*>& nccl,
                             int sms) {
  std::map<std::string, std::vector<const ContentionCase*>> by_shape;
  for (const ContentionCase* k : nccl) by_shape[shape_text(*k)].push_back(k);
  if (by_shape.size() < 2) return "";
  std::map<double, std::pair<std::string, std::vector<double>>> by_length;  // length -> shape, residuals
  for (const auto& [shape, cases] : by_shape) {
    std::vector<double> alone, residuals;
    for (const ContentionCase* k : cases) {
      alone.push_back(k->compute_alone_s);
      if (k->ctas && covers_gemm(*k))
        residuals.push_back(*k->compute_with_comm_s / k->compute_alone_s / sm_stretch(*k, spec, sms));
    }
    if (!residuals.empty()) by_length[round4(geometric_mean(alone) * 1e6) * 1e-6] = {shape, residuals};
  }
  spec.gemm_kernel_s.clear();
  spec.gemm_slowdown.clear();
  std::string text =
      " gemm_slowdown_with_comm: per GEMM shape, the geometric mean over its cases whose "
      "collective spans it of slowdown / the engine's SM stretch (demand / (demand - CTAs "
      "or comm_sms), demand from 128x128 tiles), at least 1:";
  for (const auto& [length, entry] : by_length) {
    spec.gemm_kernel_s.push_back(length);
    spec.gemm_slowdown.push_back(round4(std::max(1.0, geometric_mean(entry.second))));
    text += " " + entry.first + " " + fixed(length * 1e6, 1) + " us " + num(spec.gemm_slowdown.back(), 4) +
            " (" + std::to_string(entry.second.size()) + " cases, " + range_text(entry.second) + ");";
  }
  if (spec.gemm_kernel_s.size() < 2) {
    spec.gemm_kernel_s.clear();
    spec.gemm_slowdown.clear();
    return "";
  }
  text.back() = '.';
  return text;
}

using LatencyOf = std::function<double(const ContentionCase&)>;

/** The contention cases by what ran beside what. */
struct ContentionCases {
  std::vector<const ContentionCase*> nccl;      // GEMMs beside NCCL, longest GEMM shape only
  std::vector<const ContentionCase*> all_nccl;  // GEMMs beside NCCL, every shape
  std::vector<const ContentionCase*> copy_engine;
  std::vector<const ContentionCase*> adds;       // the streaming add (HBM sharing)
  std::vector<const ContentionCase*> softmaxes;  // the runner's causal softmax
};

ContentionCases sort_cases(const std::vector<ContentionCase>& all) {
  ContentionCases cases;
  for (const ContentionCase& k : all) {
    if (k.compute != "gemm") {
      if (k.compute == "add") cases.adds.push_back(&k);
      if (k.compute == "softmax") cases.softmaxes.push_back(&k);
      continue;  // rmsnorm and topk: MemoryKernelFit.cpp and RouterFit.cpp
    }
    if (k.comm == "ce_copy") {
      cases.copy_engine.push_back(&k);
    } else if (profile_kind(k.comm) && k.compute_with_comm_s && k.comm_with_compute_s) {
      cases.nccl.push_back(&k);
    }
  }
  // The factors come from the longest GEMM shape; the others enter gemm_slowdown_with_comm only.
  cases.all_nccl = cases.nccl;
  if (!cases.nccl.empty()) {
    const std::string reference =
        shape_text(**std::max_element(cases.nccl.begin(), cases.nccl.end(), [](auto* a, auto* b) {
          return a->compute_alone_s < b->compute_alone_s;
        }));
    std::erase_if(cases.nccl, [&](const ContentionCase* k) { return shape_text(*k) != reference; });
  }
  return cases;
}

/** Slowdowns of the GEMM beside copy-engine transfers (all, and peer copies only) and of the transfers. */
struct CopyEngineSlowdowns {
  std::vector<double> gemm, comm, peer_gemm;
};

CopyEngineSlowdowns copy_engine_slowdowns(const std::vector<const ContentionCase*>& copy_engine) {
  CopyEngineSlowdowns out;
  for (const ContentionCase* k : copy_engine) {
    if (k->compute_with_comm_s) {
      const double slowdown = *k->compute_with_comm_s / k->compute_alone_s;
      out.gemm.push_back(slowdown);
      // A device-local copy reads and writes this GPU's HBM; a peer copy of an all-to-all does half of each.
      if (k->ranks > 1) out.peer_gemm.push_back(slowdown);
    }
    if (k->comm_with_compute_s) out.comm.push_back(*k->comm_with_compute_s / k->comm_alone_s);
  }
  return out;
}

bool default_ctas(const ContentionCase& k) {
  return k.ctas && *k.ctas == 0;
}

/** The source's sentences on compute_slowdown_with_comm and comm_sms; either may be empty. */
struct SmSharingText {
  std::string residual;
  std::string comm_sms;
};

// 1. The residual compute slowdown from the cases whose CTA count is known and whose collective spans the
// GEMM; 2. the SMs a default NCCL kernel holds: what explains the default-CTA GEMM slowdowns with that
// residual. Without capped cases comm_sms is inferred with the base's residual, and the residual then
// re-derived from the default-CTA cases with that comm_sms (the source text calls it kept from the base).
SmSharingText fit_sm_sharing(hw::ContentionSpec& spec, const std::vector<const ContentionCase*>& nccl,
                             int sms) {
  SmSharingText text;
  std::vector<double> residuals;
  std::set<int> cta_values;
  for (const ContentionCase* k : nccl) {
    if (k->ctas && *k->ctas > 0 && covers_gemm(*k)) {
      residuals.push_back(
          residual_compute_slowdown(*k->compute_with_comm_s / k->compute_alone_s, sms, *k->ctas));
      cta_values.insert(*k->ctas);
    }
  }
  if (!residuals.empty()) {
    spec.compute_slowdown_with_comm = round4(std::max(1.0, geometric_mean(residuals)));
    std::string ctas;
    for (int v : cta_values) ctas += (ctas.empty() ? "" : ", ") + std::to_string(v);
    text.residual = "compute_slowdown_with_comm = geometric mean over the " +
                    std::to_string(residuals.size()) + " cases with an NCCL CTA cap (" + ctas +
                    ") whose collective alone lasts at least as long as the GEMM of " + "GEMM slowdown x (" +
                    std::to_string(sms) + " - CTAs) / " + std::to_string(sms) + " (" + range_text(residuals) +
                    ")";
  }
  std::vector<double> inferred;
  for (const ContentionCase* k : nccl) {
    if (default_ctas(*k) && covers_gemm(*k))
      inferred.push_back(inferred_comm_sms(*k->compute_with_comm_s / k->compute_alone_s,
                                           spec.compute_slowdown_with_comm, sms));
  }
  if (inferred.empty()) return text;
  double mean = 0;
  for (double v : inferred) mean += v / static_cast<double>(inferred.size());
  spec.comm_sms = std::clamp(static_cast<int>(std::lround(mean)), 0, sms - 1);
  if (!residuals.empty()) {
    text.comm_sms = "comm_sms = " + std::to_string(spec.comm_sms) +
                    ": the SM count that, with that residual, explains the " +
                    std::to_string(inferred.size()) +
                    " default-CTA cases whose collective spans the GEMM (GEMM slowdown " +
                    "= r x SMs / (SMs - comm_sms); per case " + range_text(inferred) + ")";
    return text;
  }
  // No capped case: the residual comes from the default-CTA cases with that comm_sms.
  std::vector<double> r;
  for (const ContentionCase* k : nccl) {
    if (default_ctas(*k) && covers_gemm(*k))
      r.push_back(
          residual_compute_slowdown(*k->compute_with_comm_s / k->compute_alone_s, sms, spec.comm_sms));
  }
  spec.compute_slowdown_with_comm = round4(std::max(1.0, geometric_mean(r)));
  text.residual = "compute_slowdown_with_comm from the default-CTA cases with comm_sms " +
                  std::to_string(spec.comm_sms) + " kept from the base";
  return text;
}

bool under_gemm(const ContentionCase& k) {
  return k.comm_alone_s <= *k.compute_with_comm_s;
}

// 3. Collectives under compute. The engine starts an NCCL kernel at the end of the kernels that fill the
// GPU when it arrives (blocks are not preempted), so back to back under a GEMM stream one that fits in
// a GEMM lasts one GEMM (it ends at the next boundary) and one that outlasts it waits half a GEMM on
// average before it runs; comm_slowdown_with_compute is what is left while it runs beside compute.
std::string fit_comm_under_compute(hw::ContentionSpec& spec, const std::vector<const ContentionCase*>& nccl,
                                   const LatencyOf& latency_of) {
  std::vector<double> fitted, fits_ratio;
  std::string example;
  for (const ContentionCase* k : nccl) {
    if (!default_ctas(*k) || k->comm_alone_s <= latency_of(*k)) continue;
    if (under_gemm(*k)) {
      fits_ratio.push_back(*k->comm_with_compute_s / *k->compute_with_comm_s);
      if (example.empty())
        example = "a " + bytes_text(k->bytes) + " " + k->comm + " on " + std::to_string(k->ranks) +
                  " GPUs: " + fixed(k->comm_alone_s * 1e6, 0) + " us alone, " +
                  fixed(*k->comm_with_compute_s * 1e6, 0) + " us under a " +
                  fixed(*k->compute_with_comm_s * 1e6, 0) + " us GEMM";
    } else {
      const double waited = *k->comm_with_compute_s - *k->compute_with_comm_s / 2;
      fitted.push_back(std::max(1.0, comm_bandwidth_slowdown(k->comm_alone_s, waited, latency_of(*k))));
    }
  }
  if (!fitted.empty()) spec.comm_slowdown_with_compute = round4(geometric_mean(fitted));
  std::string text =
      "NCCL kernels start at a kernel boundary: a collective that fits in one GEMM under the GEMM stream "
      "lasted " +
      (fits_ratio.empty() ? std::string("(no such case)") : range_text(fits_ratio)) +
      " GEMMs (the boundary model says 1)";
  if (!example.empty()) text += ", e.g. " + example;
  return text + (fitted.empty()
                     ? "; comm_slowdown_with_compute kept from the base: no default-CTA collective "
                       "outlasts the GEMM"
                     : "; comm_slowdown_with_compute = " + num(spec.comm_slowdown_with_compute, 4) +
                           ": geometric mean over the " + std::to_string(fitted.size()) +
                           " default-CTA cases that outlast the GEMM of (t_with - GEMM/2 - latency) / "
                           "(t_alone - latency), at least 1 (" +
                           range_text(fitted) + ")");
}

// The section's source: what ran (GEMM, sizes, GPU counts) and the sentences of each fit.
std::string nccl_source(Context& c, const std::vector<const ContentionCase*>& nccl, const SmSharingText& sm,
                        const std::string& under_compute) {
  const ContentionCase& first = *nccl.front();
  std::string gemm = std::to_string(first.gemm_m) + "x" + std::to_string(first.gemm_n) + "x" +
                     std::to_string(first.gemm_k) + " bf16";
  std::set<int> ranks;
  std::set<double> sizes;
  for (const ContentionCase* k : nccl) {
    ranks.insert(k->ranks);
    sizes.insert(k->bytes);
  }
  std::string ranks_text, sizes_text;
  for (int r : ranks) ranks_text += (ranks_text.empty() ? "" : ", ") + std::to_string(r);
  for (double b : sizes) sizes_text += (sizes_text.empty() ? "" : ", ") + bytes_text(b);
  return "Calibrated " + files_tags(c, "contention") + " with contention_bench: a " + gemm +
         " GEMM stream on every GPU against NCCL all_reduce / all_to_all of " + sizes_text + " per rank on " +
         ranks_text + " GPUs (NCCL default CTAs and caps), p50. " +
         (sm.residual.empty() ? "" : sm.residual + ". ") + (sm.comm_sms.empty() ? "" : sm.comm_sms + ". ") +
         under_compute + ".";
}

std::string softmax_text(const std::vector<const ContentionCase*>& softmaxes) {
  std::vector<double> slowdowns;
  for (const ContentionCase* k : softmaxes) {
    if (k->ranks > 1 && k->compute_with_comm_s)
      slowdowns.push_back(*k->compute_with_comm_s / k->compute_alone_s);
  }
  if (slowdowns.empty()) return "";
  return " The layer runner's causal softmax (" + fixed(softmaxes.front()->compute_hbm_Bps / 1e9, 0) +
         " GB/s alone) slowed " + range_text(slowdowns) +
         "x beside the same peer collectives: as SM-bound work, not HBM-bound.";
}

void add_contention_residuals(Context& c, const ContentionCases& cases, const LatencyOf& latency_of) {
  const hw::HwProfile& p = c.out.profile;
  const hw::ContentionSpec& spec = p.contention;
  ErrorSummary gemm_e, comm_e;
  for (const ContentionCase* k : cases.all_nccl) {
    if (covers_gemm(*k) && k->ctas) {
      gemm_e.add(k->compute_alone_s * p.gemm_slowdown_with_comm(k->compute_alone_s) *
                     sm_stretch(*k, spec, p.gpu.sm_count),
                 *k->compute_with_comm_s);
    }
  }
  for (const ContentionCase* k : cases.nccl) {
    if (default_ctas(*k)) {
      const double lat = latency_of(*k);
      const double boundary_model =
          under_gemm(*k)
              ? *k->compute_with_comm_s
              : *k->compute_with_comm_s / 2 + lat + (k->comm_alone_s - lat) * spec.comm_slowdown_with_compute;
      comm_e.add(boundary_model, *k->comm_with_compute_s);
    }
  }
  add_residual(c, "contention gemm", gemm_e,
               "GEMM time under comm vs its residual x the SM stretch, every shape, cases whose collective "
               "spans the GEMM");
  add_residual(c, "contention comm", comm_e,
               "collective time under the GEMM vs the kernel-boundary model, all default-CTA cases");
}

}  // namespace

void fit_contention(Context& c) {
  hw::HwProfile& p = c.out.profile;
  hw::ContentionSpec& spec = p.contention;
  const int sms = p.gpu.sm_count;
  const ContentionCases cases = sort_cases(c.in.bench.contention);
  const CopyEngineSlowdowns ce = copy_engine_slowdowns(cases.copy_engine);
  const LatencyOf latency_of = [&](const ContentionCase& k) {
    const auto kind = profile_kind(k.comm);
    if (!kind || !p.has_collective(*kind, CollectiveScope::INTRA)) return 0.0;
    return hw::collective_steps(*kind, k.ranks) * p.step_latency_s(*kind, k.ranks, CollectiveScope::INTRA);
  };
  const std::string copy_text = fit_copy_slowdown(spec, ce.peer_gemm, files_tags(c, "contention"));
  if (cases.nccl.empty()) {
    if (!cases.copy_engine.empty()) {
      spec.source +=
          " Calibration " + files_tags(c, "contention") + " measured copy-engine transfers only (" +
          (cases.copy_engine.front()->ranks == 1 ? "a device-local copy" : "peer copies") +
          "): they slowed the GEMM " + range_text(ce.gemm) + "x and were slowed " + range_text(ce.comm) +
          "x themselves; the engine gives copy-engine transfers no SMs and no bandwidth loss, so the "
          "factors above are kept." +
          copy_text + fit_hbm_sharing(c, cases.adds, latency_of);
    }
    return;
  }
  const SmSharingText sm = fit_sm_sharing(spec, cases.nccl, sms);
  const std::string under_compute = fit_comm_under_compute(spec, cases.nccl, latency_of);
  spec.source = nccl_source(c, cases.nccl, sm, under_compute);
  if (!cases.copy_engine.empty()) {
    spec.source += " Copy-engine transfers slowed the GEMM " + range_text(ce.gemm) + "x and were slowed " +
                   range_text(ce.comm) + "x; the engine gives them no SMs and no bandwidth loss." + copy_text;
  }
  const std::string hbm_text = fit_hbm_sharing(c, cases.adds, latency_of);
  spec.source += hbm_text.empty()
                     ? " HBM sharing (hbm_bytes_per_comm_byte, hbm_bytes_per_copy_byte, "
                       "comm_hbm_weight) is kept from the base: no HBM-bound kernel was measured."
                     : hbm_text;
  spec.source += softmax_text(cases.softmaxes);
  spec.source += fit_gemm_lengths(spec, cases.all_nccl, sms);
  add_contention_residuals(c, cases, latency_of);
  c.calibrated_parts.push_back("contention factors");
}

}  // namespace moesim::calibrate::detail
