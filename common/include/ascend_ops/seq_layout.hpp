// The sequence layouts of the attention-style ops (lightning_indexer, sparse_flash_attention):
// BSND (padded batches), TND (packed rows, cumulative ends) and PA_BSND (a paged cache read
// through a block table), and the checks of their lengths tensors and block tables that read
// data. Each op keeps its own error codes and record layout (its kernel writes them); the scans
// and the messages are these, so every op says the same thing about the same fault.
#pragma once
#include <cstdint>
#include <string>

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/tensor.h"

AOP_NAMESPACE_BEGIN
namespace seq {

enum class Layout : int32_t { kBSND = 0, kTND = 1, kPA_BSND = 2 };

inline const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kBSND: return "BSND";
    case Layout::kTND: return "TND";
    case Layout::kPA_BSND: return "PA_BSND";
  }
  return "?";
}

// "BSND" / "TND", and "PA_BSND" where `paged` allows it; otherwise a ValueError
// "<op>: <arg> should be ... but is '<name>'".
[[noreturn]] inline void fail_layout(const std::string& name, const char* op, const char* arg, bool paged) {
  throw Error(AOP_VALUE_ERROR, std::string(op) + ": " + arg + " should be " +
                                   (paged ? "'PA_BSND', 'BSND' or 'TND'" : "'BSND' or 'TND'") + " but is '" + name +
                                   "'");
}
inline Layout parse_layout(const std::string& name, const char* op, const char* arg, bool paged) {
  if (name == "BSND") return Layout::kBSND;
  if (name == "TND") return Layout::kTND;
  if (paged && name == "PA_BSND") return Layout::kPA_BSND;
  fail_layout(name, op, arg, paged);
}

// Entry i of an int32 or int64 tensor (a lengths tensor, a block table) in host memory.
inline int64_t read_index(const aop_tensor& t, int64_t i) {
  return t.dtype == AOP_DTYPE_INT64 ? static_cast<const int64_t*>(t.data)[i] : static_cast<const int32_t*>(t.data)[i];
}

// ---- lengths ----

// A lengths tensor's faults, in the order they are checked for each entry.
enum class LengthFault : int64_t { kNone = -1, kNegative = 0, kBelowPrevious = 1, kBeyond = 2 };

struct LengthCheck {
  LengthFault fault = LengthFault::kNone;
  int64_t batch = 0;  // the entry
  int64_t value = 0;  // its value
  int64_t aux = 0;    // the previous end (kBelowPrevious) or the limit (kBeyond)
};

// The first fault of the [batch] lengths (cumulative ends when `cumulative`): negative, below the
// previous end, beyond `limit`.
inline LengthCheck first_length_fault(const aop_tensor& lengths, int64_t batch, bool cumulative, int64_t limit) {
  int64_t previous = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t v = read_index(lengths, b);
    if (v < 0) return {LengthFault::kNegative, b, v, 0};
    if (cumulative && v < previous) return {LengthFault::kBelowPrevious, b, v, previous};
    if (v > limit) return {LengthFault::kBeyond, b, v, limit};
    previous = v;
  }
  return {};
}

// What a lengths tensor may not exceed, named for messages: the query's rows, the key's rows, or
// what the block table holds.
inline const char* length_limit_name(bool query, Layout layout) {
  if (query) return layout == Layout::kTND ? "the query's T1" : "the query's S1";
  if (layout == Layout::kPA_BSND) return "what the block table holds: max_blocks * block_size";
  return layout == Layout::kTND ? "the key's T2" : "the key's S2";
}

// "<arg>[b] = v is negative" / "... is below the previous end p: cumulative ends never decrease"
// / "... is beyond <limit_name> (limit)": the message without the op's prefix.
inline std::string length_message(const char* arg, LengthFault fault, int64_t b, int64_t v, int64_t aux,
                                  const char* limit_name) {
  const std::string at = std::string(arg) + "[" + std::to_string(b) + "] = " + std::to_string(v);
  switch (fault) {
    case LengthFault::kNegative: return at + " is negative";
    case LengthFault::kBelowPrevious:
      return at + " is below the previous end " + std::to_string(aux) + ": cumulative ends never decrease";
    default: return at + " is beyond " + limit_name + " (" + std::to_string(aux) + ")";
  }
}

// ---- block tables ----

// Blocks a batch of `len` keys uses.
inline int64_t blocks_used(int64_t len, int64_t block_size) { return block_size > 0 ? (len + block_size - 1) / block_size : 0; }

// The first of batch b's used entries of the [B, max_blocks] table outside [0, num_blocks), or -1.
inline int64_t first_bad_block(const aop_tensor& table, int64_t b, int64_t max_blocks, int64_t len, int64_t block_size,
                               int64_t num_blocks) {
  for (int64_t i = 0, used = blocks_used(len, block_size); i < used; ++i) {
    const int64_t id = read_index(table, b * max_blocks + i);
    if (id < 0 || id >= num_blocks) return i;
  }
  return -1;
}

// "block_table[b][i] = id is out of range: key has N blocks (batch b uses k blocks for len keys)"
inline std::string block_id_message(int64_t b, int64_t i, int64_t id, int64_t num_blocks, int64_t len,
                                    int64_t block_size) {
  const std::string n = std::to_string(b);
  return "block_table[" + n + "][" + std::to_string(i) + "] = " + std::to_string(id) + " is out of range: key has " +
         std::to_string(num_blocks) + " blocks (batch " + n + " uses " + std::to_string(blocks_used(len, block_size)) +
         " blocks for " + std::to_string(len) + " keys)";
}

}  // namespace seq
AOP_NAMESPACE_END
