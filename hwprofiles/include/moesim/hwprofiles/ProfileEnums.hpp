#pragma once
/**
 * @file The small closed vocabularies of a hardware profile: collective kinds and scopes, fabric
 * types, provenance kinds, attention passes. Each has to_string() and a parse function that
 * accepts exactly the spelling used in the JSON files (lower snake case).
 */
#include <optional>
#include <string>
#include <string_view>

namespace moesim::hw {

/** @brief A collective operation, named as in nccl-tests (`all_to_all_perf`, ...). */
enum class CollectiveKind { ALL_TO_ALL, ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER };

/** @brief Whether a collective group stays inside one node (`intra`) or spans nodes (`inter`). */
enum class CollectiveScope { INTRA, INTER };

/** @brief The algorithm a collective table was measured or derived with (informational). */
/** COPY_ENGINE: peer copies by the DMA engines (cudaMemcpyPeerAsync), no SMs; its tables serve only
 * copy-engine transfers. */
enum class CollectiveAlgorithm { RING, NVLS, DIRECT, TREE, HIERARCHICAL, COPY_ENGINE };

/**
 * @brief Intra-node fabric shape. `switch`: every GPU reaches every peer with all its links
 * (NVSwitch, a PCIe switch). `mesh`: one point-to-point link per GPU pair (AMD xGMI), so a GPU
 * talking to p peers uses only p of its links.
 */
enum class FabricType { SWITCH, MESH };

/** @brief How a profile's numbers were obtained. */
enum class ProvenanceKind { DATASHEET, PUBLISHED, CALIBRATED };

/** @brief Forward or backward attention kernel. */
enum class AttentionPass { FORWARD, BACKWARD };
/** @brief How attention is computed: one fused kernel (FlashAttention, cuDNN SDPA) or GEMMs + softmax. */
enum class AttentionImpl { FUSED, UNFUSED };

/** @brief JSON spelling: "all_to_all", "all_reduce", "all_gather", "reduce_scatter". */
std::string to_string(CollectiveKind kind);
/** @brief JSON spelling: "intra", "inter". */
std::string to_string(CollectiveScope scope);
/** @brief JSON spelling: "ring", "nvls", "direct", "tree", "hierarchical". */
std::string to_string(CollectiveAlgorithm algorithm);
/** @brief JSON spelling: "switch", "mesh". */
std::string to_string(FabricType type);
/** @brief JSON spelling: "datasheet", "published", "calibrated". */
std::string to_string(ProvenanceKind kind);
/** @brief "forward" or "backward". */
std::string to_string(AttentionPass pass);

/** @brief The spelling, or nullopt when `text` names no collective kind. */
std::optional<CollectiveKind> try_parse_collective_kind(std::string_view text);
/** @brief The spelling, or nullopt when `text` names no scope. */
std::optional<CollectiveScope> try_parse_collective_scope(std::string_view text);
/** @brief The spelling, or nullopt when `text` names no algorithm. */
std::optional<CollectiveAlgorithm> try_parse_collective_algorithm(std::string_view text);
/** @brief "fused" or "unfused", or nullopt for anything else. */
std::optional<AttentionImpl> try_parse_attention_impl(std::string_view text);
/** @brief The spelling, or nullopt when `text` names no fabric type. */
std::optional<FabricType> try_parse_fabric_type(std::string_view text);
/** @brief The spelling, or nullopt when `text` names no provenance kind. */
std::optional<ProvenanceKind> try_parse_provenance_kind(std::string_view text);

/** @brief Parses a collective kind; throws ConfigError listing the valid spellings. */
CollectiveKind parse_collective_kind(std::string_view text);
/** @brief Parses a collective scope; throws ConfigError listing the valid spellings. */
CollectiveScope parse_collective_scope(std::string_view text);

/** @brief "all_to_all, all_reduce, all_gather, reduce_scatter": for error messages. */
std::string collective_kind_choices();
/** @brief "intra, inter". */
std::string collective_scope_choices();
/** @brief "ring, nvls, direct, tree, hierarchical". */
std::string collective_algorithm_choices();
/** @brief "switch, mesh". */
std::string fabric_type_choices();
/** @brief "datasheet, published, calibrated". */
std::string provenance_kind_choices();

}  // namespace moesim::hw
