#include "moesim/hwprofiles/ProfileEnums.hpp"

#include <array>
#include <utility>

#include "moesim/common/Error.hpp"

namespace moesim::hw {
namespace {

// One table per enum, in declaration order: the single place where spellings live.
template <typename Enum, std::size_t N>
using Spellings = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Spellings<CollectiveKind, 4> kCollectiveKinds{{{CollectiveKind::ALL_TO_ALL, "all_to_all"},
                                                         {CollectiveKind::ALL_REDUCE, "all_reduce"},
                                                         {CollectiveKind::ALL_GATHER, "all_gather"},
                                                         {CollectiveKind::REDUCE_SCATTER, "reduce_scatter"}}};
constexpr Spellings<CollectiveScope, 2> kScopes{
    {{CollectiveScope::INTRA, "intra"}, {CollectiveScope::INTER, "inter"}}};
constexpr Spellings<CollectiveAlgorithm, 6> kAlgorithms{{{CollectiveAlgorithm::RING, "ring"},
                                                         {CollectiveAlgorithm::NVLS, "nvls"},
                                                         {CollectiveAlgorithm::DIRECT, "direct"},
                                                         {CollectiveAlgorithm::TREE, "tree"},
                                                         {CollectiveAlgorithm::HIERARCHICAL, "hierarchical"},
                                                         {CollectiveAlgorithm::COPY_ENGINE, "copy_engine"}}};
constexpr Spellings<FabricType, 2> kFabricTypes{{{FabricType::SWITCH, "switch"}, {FabricType::MESH, "mesh"}}};
constexpr Spellings<ProvenanceKind, 3> kProvenanceKinds{{{ProvenanceKind::DATASHEET, "datasheet"},
                                                         {ProvenanceKind::PUBLISHED, "published"},
                                                         {ProvenanceKind::CALIBRATED, "calibrated"}}};
constexpr Spellings<AttentionImpl, 2> kAttentionImpls{
    {{AttentionImpl::FUSED, "fused"}, {AttentionImpl::UNFUSED, "unfused"}}};

template <typename Enum, std::size_t N>
std::string spell(const Spellings<Enum, N>& table, Enum value) {
  for (const auto& [candidate, name] : table) {
    if (candidate == value) return std::string(name);
  }
  return "<invalid>";
}

template <typename Enum, std::size_t N>
std::optional<Enum> lookup(const Spellings<Enum, N>& table, std::string_view text) {
  for (const auto& [candidate, name] : table) {
    if (name == text) return candidate;
  }
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string choices(const Spellings<Enum, N>& table) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    out += entry.second;
  }
  return out;
}

}  // namespace

std::string to_string(CollectiveKind kind) {
  return spell(kCollectiveKinds, kind);
}
std::string to_string(CollectiveScope scope) {
  return spell(kScopes, scope);
}
std::string to_string(CollectiveAlgorithm algorithm) {
  return spell(kAlgorithms, algorithm);
}
std::string to_string(FabricType type) {
  return spell(kFabricTypes, type);
}
std::string to_string(ProvenanceKind kind) {
  return spell(kProvenanceKinds, kind);
}
std::string to_string(AttentionPass pass) {
  return pass == AttentionPass::FORWARD ? "forward" : "backward";
}

std::optional<CollectiveKind> try_parse_collective_kind(std::string_view text) {
  return lookup(kCollectiveKinds, text);
}
std::optional<CollectiveScope> try_parse_collective_scope(std::string_view text) {
  return lookup(kScopes, text);
}
std::optional<CollectiveAlgorithm> try_parse_collective_algorithm(std::string_view text) {
  return lookup(kAlgorithms, text);
}
std::optional<FabricType> try_parse_fabric_type(std::string_view text) {
  return lookup(kFabricTypes, text);
}
std::optional<ProvenanceKind> try_parse_provenance_kind(std::string_view text) {
  return lookup(kProvenanceKinds, text);
}
std::optional<AttentionImpl> try_parse_attention_impl(std::string_view text) {
  return lookup(kAttentionImpls, text);
}

CollectiveKind parse_collective_kind(std::string_view text) {
  if (auto kind = try_parse_collective_kind(text)) return *kind;
  throw ConfigError(
      "", "",
      "unknown collective kind '" + std::string(text) + "' (known: " + collective_kind_choices() + ")");
}

CollectiveScope parse_collective_scope(std::string_view text) {
  if (auto scope = try_parse_collective_scope(text)) return *scope;
  throw ConfigError(
      "", "",
      "unknown collective scope '" + std::string(text) + "' (known: " + collective_scope_choices() + ")");
}

std::string collective_kind_choices() {
  return choices(kCollectiveKinds);
}
std::string collective_scope_choices() {
  return choices(kScopes);
}
std::string collective_algorithm_choices() {
  return choices(kAlgorithms);
}
std::string fabric_type_choices() {
  return choices(kFabricTypes);
}
std::string provenance_kind_choices() {
  return choices(kProvenanceKinds);
}

}  // namespace moesim::hw
