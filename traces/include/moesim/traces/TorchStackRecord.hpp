#pragma once
/**
 * @file One run record of kernels/torch_stacks (kind "moesim-torch-stack-run"; the format is documented in
 * kernels/torch_stacks/README.md): the configuration a PyTorch reference stack ran, its measured step times
 * and host issue times, the host CPU, and the traces kept beside it.
 */
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace moesim::traces {

/** @brief The widths a torch stack built (config.shape; the model's own at scale 1). */
struct StackShape {
  int hidden = 0, experts = 0, top_k = 0, expert_ffn = 0, shared_experts = 0, shared_ffn = 0;
  std::string attention;  ///< mha, gqa or mla
  int heads = 0, kv_heads = 0, head_dim = 0, kv_lora_rank = 0, q_lora_rank = 0, rope_head_dim = 0,
      v_head_dim = 0;
  std::optional<bool> qk_norm;  ///< per-head query/key RMSNorm; records before 2026-11-27 do not say
  std::optional<bool>
      shared_gate;  ///< a sigmoid gate on the shared experts; records before 2026-11-29 do not say
};

/** @brief A torch-stack record. */
struct TorchStackRecord {
  std::string file;
  std::string name;
  std::string status;  ///< ok, failed, skipped
  // config
  std::string model;  ///< moesim model name
  /// the model spec file the record names (config.model_spec, a path relative to the record's folder): a
  /// user's own model; empty: the shipped spec named by `model`
  std::string model_spec;
  std::string style;           ///< loop, grouped, hf-eager, hf-grouped_mm
  std::string implementation;  ///< moesim-torch-stacks (kernels/torch_stacks' layers) or transformers
  std::string schedule;        ///< regular, farskip
  std::string phase;           ///< forward, train
  std::string routing;         ///< balanced, zipf:S, natural
  std::string dtype;
  std::int64_t tokens = 0;  ///< per rank
  std::int64_t seq = 0;
  int layers = 0;
  int ep = 1;
  int scale = 1;  ///< 1: the model's real widths
  std::uint64_t seed = 1;
  StackShape shape;
  /** @brief Rows per expert per layer on rank 0 under a forced routing (empty otherwise). */
  std::vector<std::vector<std::int64_t>> expert_rows_rank0;
  // measured
  double step_ms_p50 = 0, step_ms_min = 0, step_ms_max = 0;
  double issue_ms_p50 = 0;          ///< rank 0's host time to issue a step (untraced), p50
  double forward_issue_ms_p50 = 0;  ///< ... to issue its forward, p50 (0: the record does not say)
  double gpu_ms_p50 = 0;            ///< rank 0's event-timed GPU time, p50
  /**
   * @brief Host probe (kernels/torch_stacks/host_probe.py, after each timed step): rank 0's median and the
   * mean over ranks of each rank's median, microseconds per eager op; 0 where the record does not say
   * (records before 2026-11-27's evening).
   */
  double host_probe_us_rank0 = 0, host_probe_us_mean = 0;
  std::string device;  ///< GPU name (ranks[0].gpu_before.name)
  /**
   * @brief An interleaved pair's FarSkip speedup as measured (timing.speedup: the median over rounds of
   * regular/farskip step time) and its bootstrap 95% interval; absent for a pair timed as two separate
   * configurations, whose speedup is the ratio of the records' p50s.
   */
  struct MeasuredSpeedup {
    double estimate = 0, low = 0, high = 0;
  };
  std::optional<MeasuredSpeedup> speedup;
  std::string cpu_model;  ///< provenance.host.cpu_model
  std::string date_utc;
  /** @brief Trace files kept beside the record (resolved next to it), rank 0's first. */
  std::vector<std::string> traces;

  /** @brief The record's configuration without its schedule (records that share it form a FarSkip pair). */
  std::string config_key() const;
  /** @brief What models::load_model reads for this record: its model_spec file, else its model's name. */
  const std::string& model_source() const { return model_spec.empty() ? model : model_spec; }
};

/** @brief True when `document` says it is a torch-stack record (kind "moesim-torch-stack-run"). */
bool is_torch_stack_record(const nlohmann::json& document);

/**
 * @brief Reads a record. ConfigError naming the file and JSON pointer for anything missing or malformed;
 * records that did not run (status failed or skipped) are read with status set and no timings.
 */
TorchStackRecord read_torch_stack_record(const std::string& file);

/** @brief As read_torch_stack_record, from a parsed document. */
TorchStackRecord torch_stack_record_from_json(const nlohmann::json& document, const std::string& file);

/** @brief The record beside trace `trace_file` (`NAME.rankR.trace.json[.gz]` -> `NAME.json`), if it exists.
 */
std::optional<std::string> record_beside_trace(const std::string& trace_file);

}  // namespace moesim::traces
