// kernels/tools/model_gemm_shapes.json lists the GEMMs gemm_bench's `models` group and
// torch_gemm_compare.py time: every plain GEMM the simulator emits for one forward layer of every
// shipped model (attention and MLA projections, router, routed and shared experts, dense FFN), at
// TP 1 with one GEMM per expert. The GPU node cannot run the simulator, so the list is data; this
// test keeps it equal to what models::layer_op_kernels says.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "moesim/models/LayerOps.hpp"
#include "moesim/models/ModelSpec.hpp"

namespace moesim {
namespace {

using models::LayerOp;

nlohmann::ordered_json simulator_shapes() {
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const std::string& name : models::shipped_model_names()) {
    const models::ModelSpec spec = models::load_model(name);
    bool has_dense_layer = false;
    for (int layer = 0; layer < spec.layers; ++layer)
      has_dense_layer = has_dense_layer || !spec.is_moe_layer(layer);
    models::OpContext context;
    context.tokens = 1024;
    context.seq_len = 1024;
    context.routed_rows = 1024;
    context.experts_total_local = 1;
    context.expert_loop = true;
    std::set<std::tuple<std::string, std::int64_t, std::int64_t>> seen;
    for (LayerOp op : {LayerOp::ATTN_QKV, LayerOp::ATTN_OUT, LayerOp::GATE, LayerOp::ROUTED_EXPERTS,
                       LayerOp::SHARED_EXPERTS, LayerOp::DENSE_FFN}) {
      if (op == LayerOp::DENSE_FFN && !has_dense_layer) continue;
      for (const models::KernelCost& k : models::layer_op_kernels(spec, op, models::Pass::FORWARD, context)) {
        if (k.kind != models::KernelClass::GEMM) continue;
        const std::string kernel = k.name.substr(k.name.find('.') + 1);
        if (!seen.insert({models::to_string(op) + kernel, k.gemm.n, k.gemm.k}).second) continue;
        shapes.push_back({{"model", name},
                          {"op", models::to_string(op)},
                          {"kernel", kernel},
                          {"n", k.gemm.n},
                          {"k", k.gemm.k}});
      }
    }
  }
  return shapes;
}

TEST(ModelGemmShapesTest, ShapesFileListsTheSimulatorsGemmsOfEveryShippedModel) {
  std::ifstream in(MOESIM_MODEL_GEMM_SHAPES);
  ASSERT_TRUE(in) << "cannot open " << MOESIM_MODEL_GEMM_SHAPES;
  const nlohmann::ordered_json file = nlohmann::ordered_json::parse(in);
  const nlohmann::ordered_json expected = simulator_shapes();
  ASSERT_GT(expected.size(), 50u);  // 12 models, 7-11 GEMMs each
  EXPECT_EQ(file.at("shapes"), expected)
      << "regenerate the \"shapes\" array of " << MOESIM_MODEL_GEMM_SHAPES << " as:\n"
      << expected.dump(1);
}

}  // namespace
}  // namespace moesim
