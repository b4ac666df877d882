// The PyNative entry of lightning_indexer (MindSpore tensors, eager).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "include/pynative/utils/pyboost/custom/tensor.h"  // ms::Tensor and its pybind11 caster

namespace aop::lightning_indexer::ms_pynative {

// Validates shapes, dtypes and layouts on the calling thread, allocates the outputs and queues
// the CPU kernel (which checks the lengths and block ids first) behind every op already issued,
// without waiting for MindSpore's queue. Returns (sparse_indices, sparse_values or None):
//   query   [B, S1, N1, D] | [T1, N1, D]
//   key     [num_blocks, block_size, N2, D] | [B, S2, N2, D] | [T2, N2, D]
//   weights [B, S1, N1] | [T1, N1]
//   actual_seq_lengths_query, actual_seq_lengths_key [B]; block_table [B, max_blocks] (None -> nullopt)
//   sparse_indices (out) int32 [B, S1, N2, K] | [T1, N2, K]; sparse_values (out) float32, same shape
// Raises ValueError / TypeError, RuntimeError where this build has no backend for MindSpore's
// device_target. Bad data (a length or block id out of range) raises its ValueError /
// IndexError later, outputs unwritten: at MindSpore's next synchronisation or check_errors().
pybind11::object lightning_indexer(const ms::Tensor& query, const ms::Tensor& key, const ms::Tensor& weights,
                                   const std::optional<ms::Tensor>& actual_seq_lengths_query,
                                   const std::optional<ms::Tensor>& actual_seq_lengths_key,
                                   const std::optional<ms::Tensor>& block_table, const std::string& layout_query,
                                   const std::string& layout_key, int64_t sparse_count, int64_t sparse_mode,
                                   bool return_value);

}  // namespace aop::lightning_indexer::ms_pynative
