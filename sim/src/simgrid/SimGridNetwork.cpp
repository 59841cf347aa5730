#include "SimGridNetwork.hpp"

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "moesim/common/Error.hpp"

namespace moesim::sim::detail {

namespace sg4 = simgrid::s4u;
using NetPoint = simgrid::kernel::routing::NetPoint;

namespace {

constexpr int kKinds = 3;
/*
 * A comm's rate is bounded for good by the slowest link of its route when it starts (LV08's bandwidth
 * bound); raising a link later does not lift it. A port is therefore wide open until its collective's
 * comms have started, and only then set to its rate, which the max-min constraint enforces either way.
 */
constexpr double kOpenPortBps = 1e15;

std::string id(const std::string& what, int a) {
  return what + std::to_string(a);
}

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bytes_per_s) {
  // Zero latency: a flow's latency is paid by the engine before its comm starts (SimGrid's LV08 would
  // otherwise weigh each flow's share by its route latency, a TCP trait that RDMA and NVLink lack).
  return zone->create_link(name, bytes_per_s)->set_latency(0)->seal();
}

}  // namespace

struct SimGridNetwork::Impl {
  struct Port {
    int gpu = 0;
    PortKind kind = PortKind::PAIRWISE;
    sg4::Host* host = nullptr;
    sg4::Link* out = nullptr;
    sg4::Link* in = nullptr;  ///< the same link as `out` for copy engines
    bool busy = false;
  };

  const Platform& platform;
  double clock_at_start = 0;        ///< SimGrid's clock runs on across engines; a run's time starts here
  std::vector<sg4::Link*> links;    ///< per Platform link
  std::vector<sg4::Host*> direct;   ///< per GPU: its host for one-sided transfers (no port)
  std::vector<Port> ports;          ///< [(gpu * kKinds + kind) * kPortsPerGpu + k]
  std::vector<sg4::CommPtr> comms;  ///< per flow id, while it moves
  std::unordered_map<const void*, int> flow_of;  ///< a moving comm's kernel activity → its flow
  std::vector<int> completed;  ///< flows whose comms SimGrid finished since the engine last looked
  sg4::SemaphorePtr wake;      ///< released once per finished comm
  static Impl* current;        ///< the network of the run in progress (runs are serialized)

  explicit Impl(const Platform& p) : platform(p) {}

  Port& port(int gpu, PortKind kind, int k) {
    return ports[static_cast<std::size_t>((gpu * kKinds + static_cast<int>(kind)) * kPortsPerGpu + k)];
  }
  struct GpuZone {
    sg4::NetZone* zone = nullptr;
    NetPoint* gateway = nullptr;
  };
  void build();
  GpuZone build_gpu(int gpu, sg4::NetZone* root, const std::string& suffix,
                    std::initializer_list<PortKind> kinds);
};

/*
 * Every GPU is a zone of its own: a host for one-sided transfers and port hosts for collectives, each
 * behind the GPU's gateway. The root zone routes gateway to gateway over exactly the links
 * Platform::route() names, so whatever the Platform models between two GPUs (their fabric ports, a
 * mesh link, NICs, a switch fabric's uplinks) SimGrid's comms cross too. A mesh gives ring ports a
 * second zone per GPU, routed as rings stripe (over all of a GPU's fabric links).
 */
void SimGridNetwork::Impl::build() {
  const int world = platform.topology.world_size();
  direct.assign(static_cast<std::size_t>(world), nullptr);
  ports.assign(static_cast<std::size_t>(world * kKinds * kPortsPerGpu), Port{});
  sg4::NetZone* root = sg4::create_full_zone("cluster");
  for (const Link& link : platform.links) links.push_back(make_link(root, link.name, link.capacity_Bps));
  const bool striped_rings = platform.topology.fabric == FabricType::MESH;
  std::vector<GpuZone> main, ring;
  for (int r = 0; r < world; ++r) {
    if (striped_rings) {
      main.push_back(build_gpu(r, root, "", {PortKind::PAIRWISE, PortKind::COPY}));
      ring.push_back(build_gpu(r, root, ".ring", {PortKind::RING}));
    } else {
      main.push_back(build_gpu(r, root, "", {PortKind::PAIRWISE, PortKind::COPY, PortKind::RING}));
    }
  }
  auto connect = [&](const std::vector<GpuZone>& zones, bool spread) {
    for (int a = 0; a < world; ++a) {
      for (int b = 0; b < world; ++b) {
        if (a == b) continue;
        const Route r = platform.route(a, b, spread);
        std::vector<sg4::LinkInRoute> path;
        for (int l : r.source_side) path.emplace_back(links[static_cast<std::size_t>(l)]);
        for (int l : r.destination_side) path.emplace_back(links[static_cast<std::size_t>(l)]);
        const GpuZone& from = zones[static_cast<std::size_t>(a)];
        const GpuZone& to = zones[static_cast<std::size_t>(b)];
        root->add_route(from.zone->get_netpoint(), to.zone->get_netpoint(), from.gateway, to.gateway, path,
                        false);
      }
    }
  };
  connect(main, false);
  if (striped_rings) connect(ring, true);
  root->seal();
}

/*
 * One GPU's zone: its gateway, the transfer host (behind a wide private link: SimGrid routes need a
 * link) when `suffix` is empty, and kPortsPerGpu port hosts of each kind in `kinds`, each behind its
 * own out and in links (one link for both with copy engines).
 */
SimGridNetwork::Impl::GpuZone SimGridNetwork::Impl::build_gpu(int gpu, sg4::NetZone* root,
                                                              const std::string& suffix,
                                                              std::initializer_list<PortKind> kinds) {
  const std::string name = id("gpu", gpu) + suffix;
  GpuZone z;
  z.zone = sg4::create_full_zone(name);
  z.zone->set_parent(root);
  z.gateway = z.zone->create_router(name + ".gw");
  auto attach = [&](sg4::Host* host, sg4::Link* out, sg4::Link* in) {
    z.zone->add_route(host->get_netpoint(), z.gateway, nullptr, nullptr, {sg4::LinkInRoute(out)}, false);
    z.zone->add_route(z.gateway, host->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(in)}, false);
  };
  if (suffix.empty()) {
    direct[static_cast<std::size_t>(gpu)] = z.zone->create_host(name, 1e9);
    sg4::Link* local = z.zone->create_link(name + ".local", kOpenPortBps)
                           ->set_latency(0)
                           ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                           ->seal();
    attach(direct[static_cast<std::size_t>(gpu)], local, local);
  }
  for (PortKind kind : kinds) {
    for (int k = 0; k < kPortsPerGpu; ++k) {
      Port& p = port(gpu, kind, k);
      const std::string port_name =
          name + ".kind" + std::to_string(static_cast<int>(kind)) + ".port" + std::to_string(k);
      p.gpu = gpu;
      p.kind = kind;
      p.host = z.zone->create_host(port_name, 1e9);
      if (kind == PortKind::COPY) {
        p.out = p.in = make_link(z.zone, port_name, kOpenPortBps);
      } else {
        p.out = make_link(z.zone, port_name + ".out", kOpenPortBps);
        p.in = make_link(z.zone, port_name + ".in", kOpenPortBps);
      }
      attach(p.host, p.out, p.in);
    }
  }
  z.zone->seal();
  return z;
}

SimGridNetwork::Impl* SimGridNetwork::Impl::current = nullptr;

/*
 * Finished comms are learned from the network model's state-change signal, one at a time: waiting on
 * every moving comm at once (Comm::wait_any) costs O(comms) per completion, which an all-to-all of
 * thousands of flows cannot afford. SimGrid 3.32 passes the model's action, whose public base (Action)
 * names the kernel activity, the one our Comm holds.
 */
void listen_for_finished_comms() {
  static const bool listening = [] {
    sg4::Link::on_communication_state_change_cb([](simgrid::kernel::resource::NetworkAction& network_action,
                                                   simgrid::kernel::resource::Action::State) {
      auto* net = SimGridNetwork::Impl::current;
      if (net == nullptr) return;
      const auto& action = reinterpret_cast<const simgrid::kernel::resource::Action&>(network_action);
      if (action.get_state() != simgrid::kernel::resource::Action::State::FINISHED) return;
      const auto it = net->flow_of.find(action.get_activity());
      if (it == net->flow_of.end()) return;
      net->completed.push_back(it->second);
      net->flow_of.erase(it);
      net->wake->release();
    });
    return true;
  }();
  (void)listening;
}

SimGridNetwork::SimGridNetwork(const Platform& platform) : impl_(std::make_unique<Impl>(platform)) {
  listen_for_finished_comms();
  impl_->build();
  impl_->clock_at_start = sg4::Engine::get_clock();
  Impl::current = impl_.get();
}

SimGridNetwork::~SimGridNetwork() {
  if (Impl::current == impl_.get()) Impl::current = nullptr;
}

int SimGridNetwork::acquire_port(int gpu, PortKind kind) {
  for (int k = 0; k < kPortsPerGpu; ++k) {
    Impl::Port& p = impl_->port(gpu, kind, k);
    if (p.busy) continue;
    p.busy = true;
    p.out->set_bandwidth(kOpenPortBps);
    if (p.in != p.out) p.in->set_bandwidth(kOpenPortBps);
    return static_cast<int>(&p - impl_->ports.data());
  }
  throw ScheduleError("engine simgrid: more than " + std::to_string(kPortsPerGpu) +
                      " collectives of one kind in flight at once on GPU " + std::to_string(gpu));
}

void SimGridNetwork::release_port(int port) {
  impl_->ports.at(static_cast<std::size_t>(port)).busy = false;
}

void SimGridNetwork::set_port_rate(int port, double bytes_per_s) {
  Impl::Port& p = impl_->ports.at(static_cast<std::size_t>(port));
  // A stalled port (rate 0) keeps a trickle: SimGrid links need a positive bandwidth.
  const double rate = std::max(bytes_per_s, 1.0);
  p.out->set_bandwidth(rate);
  if (p.in != p.out) p.in->set_bandwidth(rate);
}

void SimGridNetwork::start_flow(int flow, int src, int src_port, int dst, int dst_port, double bytes) {
  Impl& net = *impl_;
  auto host = [&](int gpu, int port) {
    return port < 0 ? net.direct.at(static_cast<std::size_t>(gpu))
                    : net.ports.at(static_cast<std::size_t>(port)).host;
  };
  const auto size = static_cast<std::uint64_t>(std::ceil(bytes));
  sg4::CommPtr comm = sg4::Comm::sendto_async(host(src, src_port), host(dst, dst_port), size);
  net.flow_of.emplace(comm->get_impl(), flow);
  if (static_cast<std::size_t>(flow) >= net.comms.size())
    net.comms.resize(static_cast<std::size_t>(flow) + 1);
  net.comms[static_cast<std::size_t>(flow)] = std::move(comm);
}

int SimGridNetwork::live_flows() const {
  return static_cast<int>(impl_->flow_of.size());
}

TimeNs SimGridNetwork::advance(TimeNs until_ns, std::vector<int>& done) {
  Impl& net = *impl_;
  done.clear();
  if (!net.wake) net.wake = sg4::Semaphore::create(0);
  const double deadline = net.clock_at_start + static_cast<double>(until_ns) * 1e-9;
  if (net.completed.empty()) {
    if (net.flow_of.empty()) {
      if (until_ns >= 0) sg4::this_actor::sleep_until(deadline);
      return until_ns;
    }
    const double timeout = until_ns < 0 ? -1.0 : std::max(0.0, deadline - sg4::Engine::get_clock());
    if (net.wake->acquire_timeout(timeout) && net.completed.empty()) return until_ns;
  }
  // Every comm that finished at this instant has signalled: take them all, and their wake-ups.
  while (!net.wake->would_block()) net.wake->acquire();
  done.swap(net.completed);
  std::sort(done.begin(), done.end());
  for (int f : done) net.comms[static_cast<std::size_t>(f)].reset();
  const double ns = (sg4::Engine::get_clock() - net.clock_at_start) * 1e9;
  const TimeNs reached = ns <= 0 ? 0 : static_cast<TimeNs>(std::ceil(ns - 1e-6));
  return until_ns >= 0 ? std::min(reached, until_ns) : reached;
}

}  // namespace moesim::sim::detail
