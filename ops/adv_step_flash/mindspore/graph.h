// The Graph-mode entries of advance_step_flashattn (ms.jit, GRAPH_MODE Cells), used through
// ops.Custom(func="<_ms .so>:aop_adv_step_flash_aot", func_type="aot"); see
// python/ascend_ops/adv_step_flash/ms.py.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

// The aot kernel, MindSpore 2.10's CPU aot signature. params: num_seqs, num_queries,
// block_size (scalar inputs: 0-d int64 / int32), input_tokens, sampled_token_ids,
// input_positions, seq_lens, slot_mapping, block_tables (inputs; the four outputs written in
// place) and one int32 [1] output (always 0). Returns 0; a host error (outputs untouched) leaves as a
// std::runtime_error "IndexError: advance_step_flashattn: ...", which MindSpore raises as
// RuntimeError with that text.
extern "C" __attribute__((visibility("default"))) int aop_adv_step_flash_aot(int nparam, void** params, int* ndims,
                                                                            int64_t** shapes, const char** dtypes,
                                                                            void* stream, void* extra);

namespace aop::adv_step_flash::ms_graph {

// The aot symbol above, for ops.Custom(func="<path>:<symbol>").
constexpr const char* kAotSymbol = "aop_adv_step_flash_aot";

// Host validate() on the ints (num_seqs, num_queries, block_size: the constants of the graph,
// or stand-ins derived from the shapes when an int is not constant) and the shapes and dtype
// names the graph compiler infers for the six tensors (input_tokens, sampled_token_ids,
// input_positions, seq_lens, slot_mapping, block_tables), so Graph mode reports a bad argument
// at compile time with the PyNative exception and message. Shapes with an unknown (negative)
// dimension are left to the aot kernel. Raises ValueError / TypeError.
void validate_signature(const std::vector<int64_t>& ints, const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<std::string>& dtypes);

}  // namespace aop::adv_step_flash::ms_graph
