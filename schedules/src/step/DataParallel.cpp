#include "DataParallel.hpp"

#include <algorithm>

#include "moesim/models/ParameterCount.hpp"

namespace moesim::schedules::detail {

namespace {
/*
 * Adam per weight of the rank's shard: reads the fp32 gradient, master weight and both moments (16 B) and
 * writes the master weight and moments (12 B) plus the 16-bit model weight (2 B); the gradient-norm pass
 * reads the gradient once more (4 B).
 */
constexpr double kAdamBytesPerParam = 34;
/** Megatron's DDP bucket: max(40M, 1M x data-parallel size) parameters. */
constexpr double kBucketParams = 40e6;
constexpr double kBucketParamsPerReplica = 1e6;
}  // namespace

DataParallel::Bucket DataParallel::empty_bucket(Weights weights, int part) {
  Bucket bucket;
  bucket.weights = weights;
  bucket.part = part;
  return bucket;
}

DataParallel::DataParallel(ProgramBuilder& b, std::vector<LayerRange> parts, int replicas)
    : b_(b), s_(b.scenario()), parts_(std::move(parts)), replicas_(replicas) {
  if (s_.optimizer == Optimizer::NONE) return;
  stream_ = b_.add_stream("dp_comm");
  for (int p = 0; p < static_cast<int>(parts_.size()); ++p) {
    for (Weights w : {Weights::DENSE, Weights::EXPERT}) {
      const double limit =
          std::max(kBucketParams, kBucketParamsPerReplica * static_cast<double>(group(w).size()));
      Bucket open = empty_bucket(w, p);
      for (int l = parts_[static_cast<std::size_t>(p)].last - 1;
           l >= parts_[static_cast<std::size_t>(p)].first; --l) {
        const double params = layer_params(l, w);
        if (params <= 0) continue;
        open.layers.push_back(l);
        open.params += params;
        if (open.params >= limit) {
          buckets_.push_back(open);
          open = empty_bucket(w, p);
        }
      }
      if (!open.layers.empty()) buckets_.push_back(open);
    }
  }
  for (int i = 0; i < static_cast<int>(buckets_.size()); ++i) {
    Bucket& bucket = buckets_[static_cast<std::size_t>(i)];
    bucket.pending = static_cast<int>(bucket.layers.size());
    for (int l : bucket.layers) buckets_of_layer_[l].push_back(i);
  }
}

// Weights of `layer` on this rank: TP splits attention and the dense MLPs (MLA's down-projections are
// replicated, a small share), the EP group splits the routed experts.
double DataParallel::layer_params(int layer, Weights weights) const {
  const auto& m = s_.model;
  const bool allreduce = s_.parallel.moe_comm == MoeComm::ALLREDUCE;
  const double tp = s_.parallel.tp;
  if (weights == Weights::EXPERT) {
    if (!m.is_moe_layer(layer)) return 0;
    return static_cast<double>(m.moe.experts / s_.parallel.ep) *
           static_cast<double>(models::mlp_parameters(m, m.moe.expert_ffn));
  }
  double params = static_cast<double>(models::attention_parameters(m)) / tp + 2.0 * m.hidden;
  if (m.is_moe_layer(layer)) {
    params += static_cast<double>(m.hidden) * m.moe.experts;
    params += static_cast<double>(
                  models::mlp_parameters(m, std::int64_t{m.moe.shared_experts} * m.moe.shared_ffn)) /
              (allreduce ? 1.0 : tp);
  } else {
    params += static_cast<double>(models::mlp_parameters(m, m.dense_ffn)) / (allreduce ? 1.0 : tp);
  }
  return params;
}

std::vector<int> DataParallel::group(Weights weights) const {
  const int E = s_.parallel.ep, P = s_.parallel.pp, tp = s_.parallel.tp;
  const int rank = b_.rank();
  const int stage_base = rank - rank % E;
  const int local = rank % E;
  std::vector<int> members;
  for (int d = 0; d < replicas_; ++d) {
    const int base = d * E * P + stage_base;
    // Dense weights are replicated over the stage's TP groups under all-to-all MoE; all-reduce MoE splits
    // them over the whole EP group (TP = EP), leaving only the replicas.
    if (weights == Weights::DENSE && s_.parallel.moe_comm == MoeComm::ALLTOALL) {
      for (int g = 0; g < E / tp; ++g) members.push_back(base + g * tp + local % tp);
    } else {
      members.push_back(base + local);
    }
  }
  return members;
}

void DataParallel::start(const std::vector<int>& part_order) {
  if (s_.optimizer != Optimizer::ZERO1) return;
  const double bytes_per_param = std::max(models::bytes_per_element(s_.workload.dtype), 2);
  for (int part : part_order) {
    for (int i = 0; i < static_cast<int>(buckets_.size()); ++i) {
      Bucket& bucket = buckets_[static_cast<std::size_t>(i)];
      const std::vector<int> members = group(bucket.weights);
      if (bucket.part != part || members.size() < 2) continue;
      sim::CollectiveSpec c;
      c.name = "dp.param_allgather.p" + std::to_string(part) + ".b" + std::to_string(i) + ".g" +
               std::to_string(members.front());
      c.kind = sim::CollectiveKind::ALL_GATHER;
      c.group = members;
      c.bytes = bucket.params * bytes_per_param;
      bucket.gather = b_.collective(std::move(c), stream_, "dp_allgather", {},
                                    {bucket.layers.back(), false, "dp_allgather"});
    }
  }
}

void DataParallel::before_forward(int layer) {
  if (s_.optimizer != Optimizer::ZERO1 || gathered_[layer]) return;
  gathered_[layer] = true;
  for (int i : buckets_of_layer_[layer]) b_.wait(buckets_[static_cast<std::size_t>(i)].gather);
}

void DataParallel::gradients_ready(int layer) {
  if (s_.optimizer == Optimizer::NONE) return;
  for (int i : buckets_of_layer_[layer]) {
    Bucket& bucket = buckets_[static_cast<std::size_t>(i)];
    if (--bucket.pending == 0) launch(bucket, i);
  }
}

void DataParallel::launch(Bucket& bucket, int index) {
  const std::vector<int> members = group(bucket.weights);
  if (members.size() < 2) return;
  const bool zero1 = s_.optimizer == Optimizer::ZERO1;
  sim::CollectiveSpec c;
  c.name = std::string(zero1 ? "dp.grad_reducescatter" : "dp.grad_allreduce") + ".p" +
           std::to_string(bucket.part) + ".b" + std::to_string(index) + ".g" +
           std::to_string(members.front());
  c.kind = zero1 ? sim::CollectiveKind::REDUCE_SCATTER : sim::CollectiveKind::ALL_REDUCE;
  c.group = members;
  // Megatron reduces gradients in the weights' 16-bit type (DDP grad_reduce_in_fp32 defaults to off).
  c.bytes = bucket.params * std::max(models::bytes_per_element(s_.workload.dtype), 2);
  const std::string category = zero1 ? "dp_reducescatter" : "dp_allreduce";
  reductions_.push_back(b_.collective(std::move(c), stream_, category, {b_.last_compute()},
                                      {bucket.layers.front(), true, category}));
}

void DataParallel::finish() {
  if (s_.optimizer == Optimizer::NONE) return;
  for (int i = 0; i < static_cast<int>(buckets_.size()); ++i) {
    Bucket& bucket = buckets_[static_cast<std::size_t>(i)];
    if (bucket.pending > 0) {
      bucket.pending = 0;
      launch(bucket, i);
    }
  }
  // The optimizer updates the rank's shard: 1/group of each weight kind under ZeRO-1, everything otherwise.
  double params = 0;
  for (const Bucket& bucket : buckets_) {
    const auto members = static_cast<double>(group(bucket.weights).size());
    params += s_.optimizer == Optimizer::ZERO1 ? bucket.params / members : bucket.params;
  }
  b_.memory_kernel("optimizer.adam", "optimizer", params * kAdamBytesPerParam, reductions_,
                   {-1, true, "optimizer"});
}

}  // namespace moesim::schedules::detail
