// How concurrent work shares a GPU and the network. Rates change only here.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "MaxMin.hpp"
#include "Simulation.hpp"
#include "moesim/common/Error.hpp"
#include "simgrid/SimGridNetwork.hpp"

namespace moesim::sim::detail {

/*
 * One GPU, at one instant:
 *   - every SM-driven collective member holds comm_sms SMs (it spins on them even while waiting), and
 *     a running persistent kernel (POOL) holds its pool_sms;
 *   - compute kernels share the remaining SMs max-min fairly by their demand (sm_fraction x SMs);
 *   - while any comm kernel runs, compute also slows by compute_slowdown_with_comm, or by the kernel's own
 *     comm_slowdown when it has one (a GEMM's tail wave, cache interference: what the lost SMs and the HBM
 *     do not explain, calibrated); while copy-engine collectives run, by compute_slowdown_with_copy (the
 *     larger of the two when both run); a kernel with memory_comm_slowdown stretches its memory time by it
 *     while comm kernels run (latency-bound loads queue behind the collective's traffic even when the HBM
 *     has bandwidth to spare, which the sharing below does not show);
 *   - a power-capped GPU (Platform::compute_speed < 1) stretches compute time by 1 / speed;
 *   - the HBM is shared by traffic (share_hbm): copy engines first, then the kernels, at their
 *     SM-limited rates, and the comm kernels' own loads and stores, in proportion to the SMs that issue them.
 * A kernel's rate (work per ns) is then 1 / max(stretched compute time, stretched memory time).
 */
void Simulation::recompute_gpu(int rank) {
  auto& gpu = gpus_[static_cast<std::size_t>(rank)];
  gpu.dirty = false;
  const auto& res = platform_.gpu;
  const double sms = res.sm_count;
  const double held = std::min(sms - 1, gpu.comm_sms + gpu.pool_sms);
  auto slowdown_of = [&](const KernelWork& w) {
    double slowdown = 1.0;
    if (gpu.comm_kernels > 0)
      slowdown = w.comm_slowdown > 0 ? w.comm_slowdown : res.compute_slowdown_with_comm;
    if (gpu.copy_collectives > 0) slowdown = std::max(slowdown, res.compute_slowdown_with_copy);
    return slowdown / platform_.speed_of(rank);  // a power-capped clock stretches clock-bound work
  };
  std::vector<double> demand;
  for (OpId id : gpu.fluid_kernels)
    demand.push_back(ops_[static_cast<std::size_t>(id)].work.sm_fraction * sms);
  std::vector<double> granted = water_fill(sms - held, demand);
  std::vector<double> sm_rate(demand.size());
  std::vector<double> hbm_need(demand.size());
  for (std::size_t i = 0; i < demand.size(); ++i) {
    const KernelWork& w = ops_[static_cast<std::size_t>(gpu.fluid_kernels[i])].work;
    double compute_time = granted[i] > 0 ? w.compute_ns * slowdown_of(w) * demand[i] / granted[i] : 0;
    const double memory_time = gpu.comm_kernels > 0 ? w.memory_ns * w.memory_comm_slowdown : w.memory_ns;
    double time = std::max(compute_time, memory_time);
    sm_rate[i] = granted[i] > 0 || w.compute_ns <= 0 ? 1.0 / time : 0.0;
    hbm_need[i] = w.memory_ns * sm_rate[i];  // fraction of HBM bandwidth it would use
  }
  const std::vector<double> hbm = share_hbm(rank, granted, hbm_need);
  for (std::size_t i = 0; i < demand.size(); ++i) {
    OpId id = gpu.fluid_kernels[i];
    const KernelWork& w = ops_[static_cast<std::size_t>(id)].work;
    double rate = sm_rate[i];
    if (w.memory_ns > 0 && hbm[i] < hbm_need[i]) rate = std::min(rate, hbm[i] / w.memory_ns);
    set_rate(fluids_[static_cast<std::size_t>(kernel_slot_[static_cast<std::size_t>(id)])], rate,
             EventType::KERNEL_DONE, id);
  }
}

/*
 * HBM bandwidth (1.0 = hbm_Bps) among the traffic of one GPU, from contention_bench's streaming add
 * beside collectives on H200s:
 *   - copy-engine transfers take f_copy bytes per bus byte first (a peer copy lost at most 6% beside
 *     the add, which lost 1 - 1/1.22 of its bandwidth: twice the copy's bus bytes);
 *   - compute kernels (demand: their memory time over their time at the SM-limited rate, weight: their
 *     SMs) and SM-driven collective members (demand: f_comm x bus bandwidth, weight: comm_hbm_weight x
 *     comm_sms) share the rest by weighted water filling, so a streaming kernel starves NCCL to a share
 *     near its SM count (a 512 MiB all_to_all ran 3x slower beside the add, 3.5x with 2 CTAs);
 *   - a collective's share caps its bus bandwidth for recompute_network (comm_bus_cap).
 * Returns each kernel's share; a kernel's memory time stretches when its share is below its demand.
 */
std::vector<double> Simulation::share_hbm(int rank, const std::vector<double>& granted,
                                          const std::vector<double>& hbm_need) {
  auto& gpu = gpus_[static_cast<std::size_t>(rank)];
  const auto& res = platform_.gpu;
  std::vector<double> demand = hbm_need;
  std::vector<double> weight;
  for (double g : granted)
    weight.push_back(std::max(g, 1.0));  // even a kernel squeezed off the SMs issues loads
  std::vector<int> comm;
  double copy_share = 0;
  if (res.hbm_Bps > 0) {
    for (int c : gpu.flowing) {
      const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
      const double bus = collectives_[static_cast<std::size_t>(c)].cost.bus_Bps;
      if (spec.transport == Transport::COPY_ENGINE) {
        copy_share += res.copy_hbm_bytes_per_byte * bus / res.hbm_Bps;
        continue;
      }
      comm.push_back(c);
      demand.push_back(res.comm_hbm_bytes_per_byte * sm_comm_port(rank, bus) / res.hbm_Bps);
      weight.push_back(res.comm_hbm_weight * sms_of(spec));
    }
  }
  std::vector<double> hbm = weighted_water_fill(std::max(0.0, 1.0 - copy_share), demand, weight);
  std::vector<std::pair<int, double>> caps;
  for (std::size_t j = 0; j < comm.size(); ++j) {
    const std::size_t at = hbm_need.size() + j;
    if (hbm[at] < demand[at] * (1 - 1e-9))
      caps.emplace_back(comm[j], hbm[at] * res.hbm_Bps / res.comm_hbm_bytes_per_byte);
  }
  hbm.resize(hbm_need.size());
  if (caps != gpu.comm_bus_cap) {
    gpu.comm_bus_cap = std::move(caps);
    network_dirty_ = true;
    mark_ports_changed(rank);
  }
  return hbm;
}

// The slowest drag among the running kernels sets the comm kernels' rate.
double Simulation::sm_comm_port(int gpu, double bus) const {
  double drag = 1.0;
  for (OpId id : gpus_[static_cast<std::size_t>(gpu)].running) {
    const double own = ops_[static_cast<std::size_t>(id)].work.comm_drag;
    drag = std::max(drag, own > 0 ? own : platform_.gpu.comm_slowdown_with_compute);
  }
  return bus / drag;
}

double Simulation::comm_bus_cap(int gpu, int collective) const {
  for (const auto& [c, cap] : gpus_[static_cast<std::size_t>(gpu)].comm_bus_cap) {
    if (c == collective) return cap;
  }
  return std::numeric_limits<double>::infinity();
}

/*
 * Every active flow crosses its physical links plus two ports of its own collective: the sender's
 * egress and the receiver's ingress, each as fast as the collective's measured bus bandwidth (copy
 * engines: one port per GPU for both directions, twice as fast). Alone,
 * a collective is limited by those ports and so reproduces its table; concurrent collectives meet on
 * the physical links. One-sided transfers cross their physical links only. Symmetric runs keep only
 * source-side links, with capacity split among the ranks that share them, which is exact when every rank
 * sends the same.
 *
 * The links and ports live in a MaxMinSystem that re-solves only what changed since the last step: the
 * flows that started or ended, and the ports whose GPU started or ended a kernel or changed its HBM
 * share. Resources are ordered as one max-min problem over links, then (symmetric runs) links at full
 * capacity, then each collective's ports in the order their data began to move.
 */
void Simulation::add_link_resources() {
  // Symmetric runs see each link twice: split among the ranks that send through it (pairwise flows
  // from rank 0) and whole (rings, which are simulated across every hop at once).
  const bool split = program_.is_symmetric();
  const auto links = platform_.links.size();
  for (std::size_t l = 0; l < links; ++l) {
    const Link& link = platform_.links[l];
    link_resource_.push_back(
        network_.add_resource(link.capacity_Bps / (split ? link.source_sharers : 1) / 1e9, l));
  }
  if (!split) return;
  for (std::size_t l = 0; l < links; ++l)
    whole_link_resource_.push_back(network_.add_resource(platform_.links[l].capacity_Bps / 1e9, links + l));
}

void Simulation::open_ports(int c) {
  const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
  auto& st = collectives_[static_cast<std::size_t>(c)];
  const auto n = spec.group.size();
  const bool copy = spec.transport == Transport::COPY_ENGINE;
  if (grid_ != nullptr) {
    // SimGrid: each member holds a port host of its GPU; its out link is the egress port, its in link
    // the ingress port (one link for both with copy engines).
    const PortKind kind = copy                                      ? PortKind::COPY
                          : spec.kind == CollectiveKind::ALL_TO_ALL ? PortKind::PAIRWISE
                                                                    : PortKind::RING;
    for (std::size_t i = 0; i < n; ++i) st.ports.push_back(grid_->acquire_port(spec.group[i], kind));
    if (!copy) st.ports.insert(st.ports.end(), st.ports.begin(), st.ports.end());
  } else {
    const std::uint64_t base = (port_blocks_ + 1) << 32;  // after every link
    for (std::size_t p = 0; p < (copy ? n : 2 * n); ++p)
      st.ports.push_back(network_.add_resource(0, base + p));
  }
  opened_ports_.push_back(c);
  if (copy) return;
  for (std::size_t i = 0; i < n; ++i) {
    const int gpu = gpu_of(spec.group[i]);
    gpus_[static_cast<std::size_t>(gpu)].comm_ports.emplace_back(c, static_cast<int>(i));
  }
}

void Simulation::close_ports(int c) {
  auto& st = collectives_[static_cast<std::size_t>(c)];
  if (st.ports.empty()) return;
  const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
  if (grid_ != nullptr) {
    for (std::size_t i = 0; i < spec.group.size(); ++i) grid_->release_port(st.ports[i]);
  } else {
    for (int port : st.ports) network_.remove_resource(port);
  }
  st.ports.clear();
  std::erase(opened_ports_, c);
  if (spec.transport == Transport::COPY_ENGINE) return;
  for (int r : spec.group) {
    std::erase_if(gpus_[static_cast<std::size_t>(gpu_of(r))].comm_ports,
                  [c](const std::pair<int, int>& p) { return p.first == c; });
  }
}

void Simulation::update_member_ports(int c, int member) {
  const auto& spec = program_.collectives()[static_cast<std::size_t>(c)];
  const auto& st = collectives_[static_cast<std::size_t>(c)];
  const double bus = st.cost.bus_Bps / 1e9;
  const auto n = spec.group.size();
  const auto i = static_cast<std::size_t>(member);
  if (spec.transport == Transport::COPY_ENGINE) {
    // Copy engines run beside compute, and a GPU's copies in and out share one budget: an even
    // all-to-all that sends and receives the same reproduces the table, a GPU that sends more than it
    // receives (a Combine from hot experts) uses what the idle direction leaves. A symmetric run
    // carries only rank 0's sends, so there the port is the table's rate alone.
    // SimGrid moves every member's data, so its ports are those of a full program.
    if (grid_ != nullptr) {
      grid_->set_port_rate(st.ports[i], 2 * bus * 1e9);
    } else {
      network_.set_capacity(st.ports[i], program_.is_symmetric() ? bus : 2 * bus);
    }
    return;
  }
  const int gpu = gpu_of(spec.group[i]);
  const double rate = std::min(sm_comm_port(gpu, bus), comm_bus_cap(gpu, c) / 1e9);
  if (grid_ != nullptr) {
    grid_->set_port_rate(st.ports[i], rate * 1e9);  // the port host's out and in links
    return;
  }
  network_.set_capacity(st.ports[i], rate);      // egress
  network_.set_capacity(st.ports[n + i], rate);  // ingress
}

void Simulation::recompute_network() {
  network_dirty_ = false;
  network_seq_ = seq_++;
  for (int c : opened_ports_) {
    const auto members = program_.collectives()[static_cast<std::size_t>(c)].group.size();
    for (std::size_t i = 0; i < members; ++i) update_member_ports(c, static_cast<int>(i));
  }
  opened_ports_.clear();
  for (int g : ports_changed_gpus_) {
    auto& gpu = gpus_[static_cast<std::size_t>(g)];
    gpu.ports_changed = false;
    for (const auto& [c, member] : gpu.comm_ports) update_member_ports(c, member);
  }
  ports_changed_gpus_.clear();
  if (grid_ != nullptr) return;  // SimGrid shares the links among its comms itself
  for (int f : network_.solve()) set_flow_rate(f, network_.rate(f));
}

MaxMinSystem::Mode max_min_mode() {
  const char* value = std::getenv("MOESIM_MAXMIN");
  const std::string mode = value == nullptr ? "" : value;
  if (mode.empty() || mode == "incremental") return MaxMinSystem::Mode::INCREMENTAL;
  if (mode == "from-scratch") return MaxMinSystem::Mode::FROM_SCRATCH;
  if (mode == "checked") return MaxMinSystem::Mode::CHECKED;
  throw ConfigError("", "MOESIM_MAXMIN",
                    "= \"" + mode + "\": expected incremental (the default), from-scratch or checked");
}

}  // namespace moesim::sim::detail
