#pragma once
/**
 * @file The GEMMs of every shipped model, as gemm_bench's `models` group times them.
 *
 * kernels/tools/model_gemm_shapes.json lists, per model, every plain GEMM the simulator emits for one
 * forward layer ({"model", "op", "kernel", "n", "k"}; tests/kernels/ModelGemmShapes_test keeps it equal
 * to the simulator). A GEMM over all tokens (attention and MLA projections, router, shared experts,
 * dense FFN) is timed at each of `token_rows`, a routed expert's at each of `expert_rows`; one product
 * (m, n, k) is timed once and lists every model GEMM it stands for.
 */
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::kernels {

struct ModelGemmCase {
  std::string
      name;  ///< table name: the kernel ("qkv_proj"), MLP kernels prefixed "expert.", "shared.", "dense."
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<std::string> uses;  ///< "model/op.kernel" of every model GEMM with this product
};

/**
 * @brief The products of the shapes file at the given row counts, in file order.
 * @throws std::invalid_argument "PATH: problem" for a file that cannot be read or has the wrong layout.
 */
std::vector<ModelGemmCase> model_gemm_cases(const std::string& path,
                                            const std::vector<std::int64_t>& token_rows,
                                            const std::vector<std::int64_t>& expert_rows);

}  // namespace moesim::kernels
