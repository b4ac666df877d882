// The Graph-mode entries of lightning_indexer (ms.jit, GRAPH_MODE Cells), used through
// ops.Custom(func="<_ms .so>:aop_lightning_indexer_aot", func_type="aot"); see
// python/ascend_ops/lightning_indexer/ms.py.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/lightning_indexer.h"

// The aot kernel, MindSpore 2.10's CPU aot signature. params (inputs, then outputs):
//   0 query, 1 key, 2 weights, 3 actual_seq_lengths_query, 4 actual_seq_lengths_key,
//   5 block_table (tensors; an absent optional tensor is a placeholder, see `present`),
//   6 layout_query, 7 layout_key (Layout codes: 0 BSND, 1 TND, 2 PA_BSND), 8 sparse_count,
//   9 sparse_mode, 10 present (bit 0: actual_seq_lengths_query, bit 1: actual_seq_lengths_key,
//   bit 2: block_table), 11 return_value (scalar inputs: 0-d int64 / int32 / bool),
//   12 sparse_indices int32 [B, S1, N2, K] | [T1, N2, K], 13 sparse_values float32 (the same
//   shape, or [0] when return_value is 0).
// Returns 0; a host error (outputs untouched) leaves as a std::runtime_error "ValueError:
// lightning_indexer: ...", which MindSpore raises as RuntimeError with that text.
extern "C" __attribute__((visibility("default"))) int aop_lightning_indexer_aot(int nparam, void** params, int* ndims,
                                                                               int64_t** shapes, const char** dtypes,
                                                                               void* stream, void* extra);

namespace aop::lightning_indexer::ms_graph {

// The aot symbol above, for ops.Custom(func="<path>:<symbol>").
constexpr const char* kAotSymbol = "aop_lightning_indexer_aot";

// The code of a layout name for the aot kernel's layout inputs; ValueError (the PyNative
// message) for an unknown name.
int64_t layout_code(const std::string& name, const std::string& arg, bool is_key);

// Host validate() on the shapes and dtype names the graph compiler infers for the six tensor
// inputs (absent optional tensors flagged by `present`, as for the aot kernel) and the
// attributes, so Graph mode reports a bad argument at compile time with the PyNative exception
// and message. Returns the output shape, or an empty vector when a shape has an unknown
// (negative) dimension: the aot kernel checks at run time then. Raises ValueError / TypeError.
std::vector<int64_t> output_shape(const std::vector<std::vector<int64_t>>& shapes,
                                  const std::vector<std::string>& dtypes, int64_t layout_query, int64_t layout_key,
                                  int64_t sparse_count, int64_t sparse_mode, int64_t present);

// The host Args from the six tensor views in the order above (the optional ones dropped unless
// `present` flags them) and the attributes; ValueError for an unknown layout code. Shared by
// the aot kernel and the Ascend graph kernel (mindspore/ascend/graph_npu.cpp). No outputs set.
Args graph_args(const aop_tensor* views, int64_t layout_query, int64_t layout_key, int64_t sparse_count,
                int64_t sparse_mode, int64_t present);

}  // namespace aop::lightning_indexer::ms_graph
