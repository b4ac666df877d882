// The Graph-mode entries of reshape_and_cache (ms.jit, GRAPH_MODE Cells), used through
// ops.Custom(func="<_ms .so>:aop_reshape_and_cache_aot", func_type="aot"); see
// python/ascend_ops/reshape_and_cache/ms.py.
#pragma once
#include <cstdint>
#include <string>
#include <vector>


// The aot kernel, MindSpore 2.10's CPU aot signature. params: key, value, key_cache,
// value_cache, slot_mapping (or key-only: key, key_cache, slot_mapping), optionally an int64 [2]
// attrs input (cache_mode, head_num), and one int32 [1] output (always 0). Returns 0; a host error (caches untouched) leaves as a std::runtime_error
// "IndexError: reshape_and_cache: ...", which MindSpore raises as RuntimeError with that text.
extern "C" __attribute__((visibility("default"))) int aop_reshape_and_cache_aot(int nparam, void** params,
                                                                               int* ndims, int64_t** shapes,
                                                                               const char** dtypes, void* stream,
                                                                               void* extra);

namespace aop::reshape_and_cache::ms_graph {

// The aot symbol above, for ops.Custom(func="<path>:<symbol>").
constexpr const char* kAotSymbol = "aop_reshape_and_cache_aot";

// Host validate() on the shapes and dtype names the graph compiler infers, so Graph mode
// reports a bad argument at compile time with the same exception and message as PyNative.
// Shapes with an unknown (negative) dimension are left to the aot kernel. Order: key, value,
// key_cache, value_cache, slot_mapping. Raises ValueError / TypeError.
// Key-only: (key, key_cache, slot_mapping). An attrs input (int64 [2]) may follow either form;
// its values at compile time are cache_mode / head_num.
void validate_signature(const std::vector<std::vector<int64_t>>& shapes, const std::vector<std::string>& dtypes,
                        int64_t cache_mode, int64_t head_num);

}  // namespace aop::reshape_and_cache::ms_graph
