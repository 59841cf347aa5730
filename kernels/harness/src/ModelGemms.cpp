#include "moesim/kernels/ModelGemms.hpp"

#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>

#include "moesim/kernels/Json.hpp"

namespace moesim::kernels {
namespace {

std::string table_name(const std::string& op, const std::string& kernel) {
  if (op == "routed_experts") return "expert." + kernel;
  if (op == "shared_experts") return "shared." + kernel;
  if (op == "dense_ffn") return "dense." + kernel;
  return kernel;
}

}  // namespace

std::vector<ModelGemmCase> model_gemm_cases(const std::string& path,
                                            const std::vector<std::int64_t>& token_rows,
                                            const std::vector<std::int64_t>& expert_rows) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open the shapes file");
  std::vector<ModelGemmCase> cases;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::size_t> index_of;
  try {
    const Json file = Json::parse(in);
    for (const Json& entry : file.at("shapes")) {
      const auto op = entry.at("op").get<std::string>(), kernel = entry.at("kernel").get<std::string>();
      const auto n = entry.at("n").get<std::int64_t>(), k = entry.at("k").get<std::int64_t>();
      const std::string use = entry.at("model").get<std::string>() + "/" + op + "." + kernel;
      for (std::int64_t m : op == "routed_experts" ? expert_rows : token_rows) {
        const auto [it, fresh] = index_of.try_emplace({m, n, k}, cases.size());
        if (fresh) cases.push_back({table_name(op, kernel), m, n, k, {}});
        cases[it->second].uses.push_back(use);
      }
    }
  } catch (const Json::exception& error) {
    throw std::invalid_argument(path + ": " + error.what());
  }
  return cases;
}

}  // namespace moesim::kernels
