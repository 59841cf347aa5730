// Collective tables (latency and bus bandwidth per size) from collectives_bench and nccl-tests logs.
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "CalibrationContext.hpp"
#include "SourceText.hpp"
#include "moesim/calibrate/CollectiveFit.hpp"
#include "moesim/common/Error.hpp"

namespace moesim::calibrate::detail {
namespace {

using hw::CollectiveKind;
using hw::CollectiveScope;

struct GroupKey {
  CollectiveKind kind;
  CollectiveScope scope;
  int gpus;
  bool copy_engine = false;  ///< collectives_bench's ce_all_to_all (cudaMemcpyPeerAsync)
  bool operator<(const GroupKey& o) const {
    return std::tie(scope, gpus, kind, copy_engine) < std::tie(o.scope, o.gpus, o.kind, o.copy_engine);
  }
};

using Groups = std::map<GroupKey, std::vector<const CollectiveCase*>>;

constexpr const char* kCopyEngineAllToAll = "ce_all_to_all";

std::string nvls_note(const Context& c) {
  for (const RunInfo& r : c.in.bench.runs) {
    if (r.benchmark != "collectives") continue;
    auto it = r.environment.find("NCCL_NVLS_ENABLE");
    if (it != r.environment.end()) return "NCCL_NVLS_ENABLE=" + it->second;
  }
  return "";
}

// The cases by (kind, scope, GPUs, transport); collectives the profile has no table for become notes.
Groups group_cases(Context& c, const std::vector<CollectiveCase>& cases) {
  const hw::HwProfile& p = c.out.profile;
  Groups groups;
  std::map<std::string, int> other_ops;
  for (const CollectiveCase& k : cases) {
    const bool copy_engine = k.op == kCopyEngineAllToAll;
    auto kind = copy_engine ? std::optional(CollectiveKind::ALL_TO_ALL) : profile_kind(k.op);
    if (!kind) {
      ++other_ops[k.op];
      continue;
    }
    const CollectiveScope scope = k.hosts > 1 ? CollectiveScope::INTER : CollectiveScope::INTRA;
    if (scope == CollectiveScope::INTRA && k.ranks > p.node.gpus_per_node) {
      throw ConfigError(k.file, "",
                        k.op + " on " + std::to_string(k.ranks) +
                            " GPUs of one host, but the profile's node has " +
                            std::to_string(p.node.gpus_per_node) + " GPUs");
    }
    if (k.ranks < 2) continue;
    groups[{*kind, scope, k.ranks, copy_engine}].push_back(&k);
  }
  for (const auto& [op, count] : other_ops) {
    c.out.notes.push_back(op + ": " + std::to_string(count) +
                          " sizes measured; the profile has no table for it");
  }
  return groups;
}

/** A fitted table, and what its source text needs to say about it. */
struct FittedTable {
  hw::CollectiveTable table;
  int capped = 0;   // sizes whose busbw was capped at the fabric port
  double port = 0;  // the port rate (intra-node only)
};

FittedTable make_table(const hw::HwProfile& p, const GroupKey& key, const CollectiveFit& fit) {
  FittedTable out;
  hw::CollectiveTable& table = out.table;
  table.kind = key.kind;
  table.scope = key.scope;
  table.gpus = key.gpus;
  table.algorithm = key.copy_engine                          ? hw::CollectiveAlgorithm::COPY_ENGINE
                    : key.kind == CollectiveKind::ALL_TO_ALL ? hw::CollectiveAlgorithm::DIRECT
                                                             : hw::CollectiveAlgorithm::RING;
  table.step_latency_s = round_significant(fit.step_latency_s, kDigits);
  table.bytes = fit.bytes;
  // The engine never moves a collective's bus bytes faster than the GPU's fabric port (usable link rate x
  // links); a larger latency-free busbw (mid sizes, where NCCL hides start-up under the transfer) is capped
  // there.
  out.port = key.scope == CollectiveScope::INTRA ? p.fabric_injection_bw_Bps(key.gpus - 1) : 0.0;
  for (double b : fit.busbw_Bps) {
    if (out.port > 0 && b > out.port) {
      b = out.port;
      ++out.capped;
    }
    table.busbw_Bps.push_back(round_significant(b, kDigits));
  }
  return out;
}

std::string table_source(const GroupKey& key, const CollectiveFit& fit, const FittedTable& fitted,
                         std::size_t points, const std::string& tags, const std::string& nvls,
                         double fallback) {
  const int steps = hw::collective_steps(key.kind, key.gpus);
  std::string source = "Fitted from " + std::to_string(points) + " measured sizes " + tags + " (p50" +
                       (nvls.empty() ? "" : ", " + nvls) + "): ";
  if (fit.latency_points > 0) {
    source += "latency = median time of the " + std::to_string(fit.latency_points) + " sizes <= 64 KiB (" +
              num(fit.step_latency_s * steps * 1e6, 4) + " us) over " + std::to_string(steps) + " step" +
              (steps > 1 ? "s" : "");
  } else {
    source += "no size <= 64 KiB measured: step latency " + num(fallback * 1e6, 4) + " us kept from the base";
  }
  const int capped = fitted.capped;
  return source + "; busbw = bus_bytes / (time - latency) at the " + std::to_string(fit.bytes.size()) +
         " sizes > 64 KiB whose transfer is >= 10% of the time" +
         (fit.dropped_points > 0 ? " (" + std::to_string(fit.dropped_points) + " latency-bound size" +
                                       (fit.dropped_points > 1 ? "s" : "") + " left out)"
                                 : "") +
         ". busbw at mid sizes can exceed the large-message rate: NCCL overlaps its start-up with the "
         "transfer, which this additive model folds into busbw" +
         (capped > 0 ? "; " + std::to_string(capped) + " size" + (capped > 1 ? "s" : "") +
                           " capped at the fabric port rate " + num(fitted.port / 1e9, 4) +
                           " GB/s (usable link rate x links), the most the engine moves"
                     : std::string()) +
         ".";
}

/** Puts `table` in place of the base's table of the same collective, or adds it. */
void replace_table(hw::HwProfile& p, const hw::CollectiveTable& table, bool copy_engine) {
  bool replaced = false;
  for (auto& existing : p.collectives) {
    if (existing.kind == table.kind && existing.scope == table.scope && existing.gpus == table.gpus &&
        (existing.algorithm == hw::CollectiveAlgorithm::COPY_ENGINE) == copy_engine) {
      existing = table;
      replaced = true;
    }
  }
  if (!replaced) p.collectives.push_back(table);
}

// One group's table: fitted, written into the profile, and compared with every measured size.
void fit_group(Context& c, const GroupKey& key, const std::vector<const CollectiveCase*>& members,
               const std::string& nvls) {
  hw::HwProfile& p = c.out.profile;
  std::vector<SizeTime> points;
  std::set<std::string> files;
  for (const CollectiveCase* k : members) {
    points.push_back({k->bytes, k->time_s});
    files.insert(k->file);
  }
  const bool ce = key.copy_engine;
  const bool has_base = p.has_collective(key.kind, key.scope, ce) &&
                        p.collective_table(key.kind, key.gpus, key.scope, ce).gpus == key.gpus;
  const double fallback =
      p.has_collective(key.kind, key.scope, ce) ? p.step_latency_s(key.kind, key.gpus, key.scope, ce) : 0.0;
  const CollectiveFit fit = fit_collective(key.kind, key.gpus, points, fallback);
  const std::string name = std::string(ce ? "copy-engine " : "") + hw::to_string(key.kind) + " " +
                           hw::to_string(key.scope) + " " + std::to_string(key.gpus);
  if (fit.bytes.empty()) {
    c.out.notes.push_back(name + ": no size with a transfer share >= 10% of its time; " +
                          (has_base ? "the base table stays" : "no table written"));
    return;
  }
  FittedTable fitted = make_table(p, key, fit);
  fitted.table.source = table_source(key, fit, fitted, points.size(), c.tags.tags_of(files), nvls, fallback);
  replace_table(p, fitted.table, ce);
  ErrorSummary e;
  for (const SizeTime& s : points)
    e.add(p.collective_time_s(key.kind, key.gpus, key.scope, s.bytes, ce), s.time_s);
  add_residual(
      c, name, e,
      "time vs steps x latency + bus_bytes / busbw over all " + std::to_string(points.size()) + " sizes");
}

}  // namespace

void fit_collectives(Context& c) {
  std::vector<CollectiveCase> cases = c.in.bench.collectives;
  for (const NcclTestsLog& log : c.in.nccl_tests) {
    for (const CollectiveCase& k : log.cases()) cases.push_back(k);
  }
  const Groups groups = group_cases(c, cases);
  const std::string nvls = nvls_note(c);
  for (const auto& [key, members] : groups) fit_group(c, key, members, nvls);
  if (!groups.empty()) c.calibrated_parts.push_back("collective tables");
}

}  // namespace moesim::calibrate::detail
