// The cost model: kernel work and launch costs from a hardware profile.
#include "moesim/cost/CostModel.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "moesim/cost/OpKernels.hpp"
#include "moesim/hwprofiles/ProfileLoader.hpp"
#include "moesim/models/LayerOps.hpp"
#include "moesim/models/ModelSpec.hpp"

using namespace moesim;
using namespace moesim::cost;

TEST(UnfusedAttention, SplitsIntoTheRunnersChunksAndKeepsItsTime) {
  // The runner's chunk rule (kernels/common/AttentionForward.cu): the largest divisor of B·H whose
  // scores (4 B) and probabilities (2 B) fit 2 GiB. seq 4096: 100.7 MB per head-sequence, so of
  // 4 x 32 = 128 head-sequences 16 fit (1.61 GB; 32 would be 3.2 GB): 8 chunks of QK^T, softmax, PV.
  // seq 2048: 25.2 MB each, all 32 fit in one chunk.
  const auto hw = hw::load_profile("h200");
  models::KernelCost cost;
  cost.name = "attn_core.flash_fwd";
  cost.kind = models::KernelClass::ATTENTION;
  cost.attn_head_dim = 128;
  for (auto [seq, head_sequences, pieces] : {std::tuple{4096, 128, 24}, std::tuple{2048, 32, 3}}) {
    cost.attn_seq = seq;
    cost.flops = 2.0 * head_sequences * seq * (seq * 0.5) * 256;  // causal QK^T + PV
    const auto whole = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::UNFUSED);
    const auto split = cost::unfused_attention_pieces(hw, cost, models::DType::BF16, head_sequences);
    ASSERT_EQ(split.size(), static_cast<std::size_t>(pieces)) << seq;
    // Score traffic per chunk at streaming HBM bandwidth: QK^T writes fp32 scores (4 B per element),
    // the softmax reads the causal half of them and writes bf16 (2 + 2 B), PV reads the bf16 (2 B).
    const double chunk = head_sequences == 128 ? 16 : 32;
    const double stream = cost::streaming_hbm_Bps(hw);
    const double element_ns = static_cast<double>(seq) * seq * chunk / stream * 1e9;
    double total = 0, gemms = 0;
    for (const auto& p : split) {
      total += std::max(p.work.compute_ns, p.work.memory_ns);
      if (p.name.ends_with(".qk")) {
        EXPECT_NEAR(p.work.memory_ns, 4 * element_ns, 1e-6 * element_ns) << p.name;
      }
      if (p.name.ends_with(".pv")) {
        EXPECT_NEAR(p.work.memory_ns, 2 * element_ns, 1e-6 * element_ns) << p.name;
      }
      if (p.name.ends_with(".softmax")) {
        EXPECT_NEAR(p.work.memory_ns, std::min(4 * element_ns, p.work.compute_ns), 1e-6 * element_ns);
      } else {
        gemms += std::max(p.work.compute_ns, p.work.memory_ns);
      }
    }
    // The pieces keep the calibrated time of the whole, the softmax at least half of it.
    EXPECT_NEAR(total, whole.compute_ns, 1e-6 * whole.compute_ns) << seq;
    EXPECT_LE(gemms, 0.5 * whole.compute_ns * (1 + 1e-9)) << seq;
    EXPECT_EQ(split.front().name, "attn_core.flash_fwd.c0.qk");
  }
}

TEST(CostModel, RouterTopkTakesTheProfilesTableOrAnHbmPass) {
  // Qwen3's router at 8192 tokens: 128 experts, k 8; 8192 x (128 x 2 B + 8 x 8 B) = 2,621,440 B.
  models::KernelCost cost;
  cost.name = "gate.softmax_topk";
  cost.kind = models::KernelClass::ROUTER_TOPK;
  cost.route = {8192, 128, 8};
  cost.bytes = 2'621'440;
  auto hw = hw::load_profile("h200");
  // Without a table: an HBM pass of its bytes, no SM time.
  hw.efficiency.router_topk = {};
  const auto pass = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
  EXPECT_EQ(pass.compute_ns, 0);
  EXPECT_NEAR(pass.memory_ns, 2'621'440 / (hw.gpu.hbm_bw_Bps * hw.memory_efficiency(2'621'440)) * 1e9, 1e-9);
  // With one: 8 us + 3.5 ns x 8192 = 36.672 us in all, kernel_min_us of it fixed; SM-bound, with its own
  // factors beside comm.
  hw.efficiency.router_topk = {{8}, {128}, {8e-6}, {3.5e-9}, {1.17}, {1.56}, "test"};
  const auto timed = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
  EXPECT_NEAR(timed.fixed_ns + timed.compute_ns, 36'672, 1e-6);
  EXPECT_NEAR(timed.memory_ns, 2'621'440 / cost::streaming_hbm_Bps(hw) * 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(timed.sm_fraction, 1);
  EXPECT_DOUBLE_EQ(timed.comm_slowdown, 1.17);
  EXPECT_DOUBLE_EQ(timed.comm_drag, 1.56);
}

// Splitting forward attention into the runner's QK^T/softmax/PV pieces changes how it runs, not the work it
// does: the pieces' FLOPs add up to the fused kernel's (the model's count), whichever way it is timed.
TEST(OpKernels, AnOpCountsItsFlopsOnceWhetherFusedOrSplit) {
  const hw::HwProfile hw = hw::load_profile("h200");
  const models::ModelSpec model = models::load_model("qwen3-30b-a3b");
  models::OpContext context;
  context.tokens = 8192;
  context.seq_len = 4096;
  double model_flops = 0;
  for (const auto& k :
       models::layer_op_kernels(model, models::LayerOp::ATTN_CORE, models::Pass::FORWARD, context))
    model_flops += k.flops;
  ASSERT_GT(model_flops, 0);
  for (auto impl : {hw::AttentionImpl::FUSED, hw::AttentionImpl::UNFUSED}) {
    const auto pieces =
        op_kernels({hw, model, impl}, models::LayerOp::ATTN_CORE, models::Pass::FORWARD, context);
    double flops = 0;
    for (const auto& p : pieces) flops += p.flops;
    EXPECT_DOUBLE_EQ(flops, model_flops);
    EXPECT_EQ(pieces.size() > 1, impl == hw::AttentionImpl::UNFUSED);
  }
}

namespace {
// The h100 profile with a hand-made forward attention curve, (512, 0.1) to (8192, 0.5) log-linear, measured
// at 16 sequences x heads, so a test can read it by hand.
hw::HwProfile hand_curve_profile() {
  auto hw = hw::load_profile("h100");
  hw.efficiency.attention_fwd.x = {512, 8192};
  hw.efficiency.attention_fwd.value = {0.1, 0.5};
  hw.efficiency.attention_fwd.batch_heads = 16;
  return hw;
}

models::KernelCost fused_attention_kernel(std::int64_t head_dim) {
  models::KernelCost cost;
  cost.name = "attn_core.flash_fwd";
  cost.kind = models::KernelClass::ATTENTION;
  cost.attn_head_dim = head_dim;
  return cost;
}
}  // namespace

// A KV cache adds score pairs: 1 query after 2,000 cached keys does 2,000 pairs a head, as a causal
// sequence of L = sqrt(1 + 2 x 2,000) = 63.2 queries does (L^2 / 2), so it runs at that length's rate,
// not at a length of 1 (the bottom of the curve). A hand-made curve of batch_heads 16 makes the reading
// exact: 256 sequences x 128 heads read it at 63.25 x sqrt(32,768 / 16) = 2,862.4.
TEST(CostModel, AttentionOverACacheRunsAtTheRateOfItsScorePairs) {
  auto hw = hand_curve_profile();
  models::KernelCost cost = fused_attention_kernel(576);
  cost.attn_seq = 1;
  cost.attn_prefix = 2000;
  cost.attn_batch_heads = 256 * 128;
  cost.flops = 2.0 * 256 * 128 * 2000 * (576 + 512);
  const auto work = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
  // log-x interpolation between (512, 0.1) and (8192, 0.5); L rounded to 63 before the sqrt(2,048) factor.
  const double read_at = 63 * std::sqrt(32768.0 / 16);
  const double efficiency = 0.1 + 0.4 * std::log(read_at / 512) / std::log(16.0);
  EXPECT_NEAR(work.compute_ns, cost.flops / (hw.sustained_peak_flops("bf16") * efficiency) * 1e9,
              1e-6 * work.compute_ns);
  // Without the cache the same call sits at the bottom of the curve: 5x slower.
  cost.attn_prefix = 0;
  const auto no_cache = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
  EXPECT_NEAR(no_cache.compute_ns, cost.flops / (hw.sustained_peak_flops("bf16") * 0.1) * 1e9,
              1e-6 * no_cache.compute_ns);
}

// A sliding window of 1,024 over a sequence of 8,192: 1,024^2 / 2 + 7,168 x 1,024 = 7,864,320 pairs, the work
// of a causal L = sqrt(2 x 7,864,320) = 3,966, where the curve reads 0.1 + 0.4 x log(3966 / 512) / log(16).
// Its rows hold 7,864,320 / 8,192 = 960 keys, the causal rows measured there 3,966 / 2 = 1,983: with a row
// overhead of 256 keys the window runs at (1 + 256 / 1,983) / (1 + 256 / 960) = 0.8914 of that.
TEST(CostModel, WindowedAttentionPaysTheOverheadOfItsShorterRows) {
  auto hw = hand_curve_profile();
  hw.efficiency.attention_rows = {256, "test"};
  models::KernelCost cost = fused_attention_kernel(128);
  cost.attn_seq = 8192;
  cost.attn_batch_heads = 16;
  cost.attn_score_pairs = 7'864'320;
  cost.attn_row_keys = 960;
  cost.flops = 2.0 * 16 * cost.attn_score_pairs * 256;
  const double curve = 0.1 + 0.4 * std::log(3966.0 / 512) / std::log(16.0);
  const double rows = (1 + 256.0 / 1983) / (1 + 256.0 / 960);
  const auto work = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
  EXPECT_NEAR(work.compute_ns, cost.flops / (hw.sustained_peak_flops("bf16") * curve * rows) * 1e9,
              1e-4 * work.compute_ns);
  // Without a measured overhead (or without a window) the curve alone.
  hw.efficiency.attention_rows = {};
  const auto unmeasured = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
  EXPECT_NEAR(unmeasured.compute_ns, cost.flops / (hw.sustained_peak_flops("bf16") * curve) * 1e9,
              1e-4 * unmeasured.compute_ns);
}

// Measured: torch SDPA over a KV cache (kernels/tools/torch_decode_attention.py, the stream held) on one H100
// and one H200, 128 query heads sharing one key head (absorbed MLA's shape at head dim 128), 1 query a
// sequence after 512-8,192 cached keys, cuDNN. The shipped calibrated curves were measured on causal prefill
// only. Read at the work of the call's score pairs they predict the calls of 64-256 sequences over 1,024 keys
// or more within 18% (H100: 0.95-1.18 of the measured time) and 31% (H200: 0.83-1.30); read at the query
// length (1: the curve's floor) 2.6-6.0x too slow. Calls of fewer sequences hold too few work items for the
// SMs: 8 sequences run 2.1-4.6x slower than their work reads, which no curve over work can say.
TEST(CostModel, DecodeAttentionOverACacheFollowsItsScorePairs) {
  const std::string data = std::string(MOESIM_TEST_DATA_DIR) + "/data/calibration/";
  for (const auto& [gpu, file, bound] :
       {std::tuple{"h100", "2026-11-27-nvidia-h100-decode-held/decode-held.json", 0.18},
        std::tuple{"h200", "2026-11-27-nvidia-h200-decode-held/decode-held.json", 0.31}}) {
    std::ifstream in(data + file);
    ASSERT_TRUE(in) << file;
    const auto doc = nlohmann::json::parse(in);
    const auto hw = hw::load_profile(gpu);
    int compared = 0;
    for (const auto& r : doc.at("results")) {
      if (r.at("backend") != "cudnn" || r.at("group").get<int>() != 128) continue;
      const double measured = r.at("time_us").at("p50");
      const std::int64_t batch = r.at("batch"), cached = r.at("cached");
      if (batch < 64 || cached < 1024) continue;
      models::KernelCost cost;
      cost.name = "attn_core.flash_fwd";
      cost.kind = models::KernelClass::ATTENTION;
      cost.attn_head_dim = 128;
      cost.attn_seq = 1;
      cost.attn_batch_heads = batch * 128;
      cost.flops = r.at("flops");
      cost.bytes = r.at("bytes");
      auto time_us = [&](std::int64_t prefix) {
        cost.attn_prefix = prefix;
        const auto w = cost::kernel_work(hw, cost, models::DType::BF16, hw::AttentionImpl::FUSED);
        return (w.fixed_ns + std::max(w.compute_ns, w.memory_ns)) * 1e-3;
      };
      const double pairs = time_us(cached), floor = time_us(0);
      EXPECT_NEAR(pairs / measured, 1.0, bound) << gpu << " B " << batch << " P " << cached;
      EXPECT_GT(floor / measured, 2.5) << gpu << " B " << batch << " P " << cached;
      ++compared;
    }
    EXPECT_EQ(compared, 12) << gpu;
  }
}

// Measured: flex_attention (torch 2.11, compiled, block masks) on one H200 times causal attention through a
// window against full causal attention of the same q, k, v (kernels/tools/torch_window_attention.py,
// data/calibration/2026-11-30-nvidia-h200-window-attention): GPT-OSS's shape (64 query heads, 8 key heads,
// head dim 64) through sliding windows of 128, 1,024 and 4,096, Llama 4's (40, 8, 128) through chunks of
// 8,192; 32,768 tokens a call as sequences of 4,096-32,768. Compared as windowed / full time at each sequence
// length, so the curve's level (cuDNN, head dims 128-192) and flex's cancel. The row overhead comes from the
// full causal calls alone (moesim calibrate, AttentionFit.cpp): per shape the cost per pair at 4,096 over
// that at 32,768 (rows of 2,048 and 16,384 keys on average), R, gives (1 + a / 2,048) = R (1 + a / 16,384);
// the shipped h200 profile holds the mean over the two shapes. The windowed calls (other row lengths) were
// not fitted. With the rows moesim predicts the windowed / full ratio at 0.72-0.78x the measured one for
// windows of 128 (their rows hold fewer keys than a tile and its edge waste: the additive overhead falls
// short), 0.88-0.96x for 1,024 and 1.00-1.04x for 4,096 and the chunks; the curve read at the windows' work
// alone gives 0.34-0.37x, 0.74-0.79x and 0.96-0.98x.
TEST(CostModel, WindowedAttentionAgainstFullFollowsTheMeasuredRatio) {
  const std::string data = std::string(MOESIM_TEST_DATA_DIR) +
                           "/data/calibration/2026-11-30-nvidia-h200-window-attention/window.json";
  std::ifstream in(data);
  ASSERT_TRUE(in) << data;
  const auto doc = nlohmann::json::parse(in);
  std::map<std::pair<std::string, std::int64_t>, double> full_us;
  for (const auto& r : doc.at("results")) {
    if (r.contains("error") || r.at("backend") != "flex" || r.at("window_kind") != "full") continue;
    full_us[{r.at("shape"), r.at("seq")}] = r.at("forward_us");
  }
  // Per pair, a full causal call of L over 32,768 tokens does 32,768 x L / 2 pairs a head.
  double fitted = 0;
  for (const std::string shape : {"gpt-oss", "llama4"}) {
    const double ratio = (full_us.at({shape, 4096}) / 4096) / (full_us.at({shape, 32768}) / 32768);
    fitted += (ratio - 1) / (1.0 / 2048 - ratio / 16384) / 2;
  }
  const auto shipped = hw::load_profile("h200");
  EXPECT_NEAR(shipped.efficiency.attention_rows.overhead_keys, fitted, 0.5);

  const std::map<std::string, std::string> models = {{"gpt-oss", "gpt-oss-20b"}, {"llama4", "llama4-scout"}};
  int compared = 0;
  for (const auto& r : doc.at("results")) {
    if (r.contains("error") || r.at("backend") != "flex" || r.at("window_kind") == "full") continue;
    const std::string shape = r.at("shape"), kind = r.at("window_kind");
    const std::int64_t seq = r.at("seq"), window = r.at("window");
    const models::ModelSpec spec = models::load_model(models.at(shape));
    auto predicted_us = [&](bool windowed, double overhead_keys) {
      auto hw = shipped;
      hw.efficiency.attention_rows.overhead_keys = overhead_keys;
      models::OpContext c;
      c.tokens = 32768;
      c.seq_len = seq;
      if (windowed) {
        c.window = kind == "sliding" ? models::AttentionWindow::SLIDING : models::AttentionWindow::CHUNKED;
        c.window_tokens = window;
      }
      const auto k =
          models::layer_op_kernels(spec, models::LayerOp::ATTN_CORE, models::Pass::FORWARD, c).at(0);
      const auto w = cost::kernel_work(hw, k, models::DType::BF16, hw::AttentionImpl::FUSED);
      return w.fixed_ns + std::max(w.compute_ns, w.memory_ns);
    };
    SCOPED_TRACE(shape + " seq " + std::to_string(seq) + " " + kind + " " + std::to_string(window));
    const double measured = r.at("forward_us").get<double>() / full_us.at({shape, seq});
    const double a = shipped.efficiency.attention_rows.overhead_keys;
    const double rows = predicted_us(true, a) / predicted_us(false, a) / measured;
    const double work_only = predicted_us(true, 0) / predicted_us(false, 0) / measured;
    EXPECT_NEAR(rows, 1.0, 0.3) << "work only " << work_only;
    if (window <= 1024) {
      EXPECT_LT(work_only, 0.81);  // the work alone: 20-66% short
      EXPECT_LT(std::abs(rows - 1), std::abs(work_only - 1)) << rows << " vs " << work_only;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 13);
}
