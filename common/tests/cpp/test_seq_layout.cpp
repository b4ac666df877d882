// The shared sequence layouts (ascend_ops/seq_layout.hpp): layout names, the lengths scan and the
// block-table scan, and the messages ops raise from them.
#include <cstdint>
#include <string>
#include <vector>

#include "aop_test.h"
#include "ascend_ops/seq_layout.hpp"
#include "ascend_ops/tensor.hpp"

namespace {

using aop::seq::Layout;
using aop::seq::LengthFault;

template <class T>
aop_tensor view(std::vector<T>& v, std::vector<int64_t> shape) {
  const aop_dtype dtype = sizeof(T) == 8 ? AOP_DTYPE_INT64 : AOP_DTYPE_INT32;
  return aop::TensorView::contiguous(v.data(), shape, dtype).raw();
}

TEST(layouts_parse_and_name) {
  CHECK(aop::seq::parse_layout("TND", "op", "layout", false) == Layout::kTND);
  CHECK(aop::seq::parse_layout("PA_BSND", "op", "layout_kv", true) == Layout::kPA_BSND);
  CHECK_EQ(std::string(aop::seq::layout_name(Layout::kBSND)), std::string("BSND"));
  CHECK_THROWS_AS(aop::seq::parse_layout("PA_BSND", "op", "layout_query", false), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(std::string(e.what()), std::string("op: layout_query should be 'BSND' or 'TND' but is 'PA_BSND'"));
    CHECK(e.status() == AOP_VALUE_ERROR);
  });
}

TEST(lengths_faults_in_order) {
  std::vector<int32_t> ends{3, 5, 4};
  auto c = aop::seq::first_length_fault(view(ends, {3}), 3, true, 10);
  CHECK(c.fault == LengthFault::kBelowPrevious);
  CHECK_EQ(c.batch, 2);
  CHECK_EQ(c.aux, 5);
  CHECK(aop::seq::first_length_fault(view(ends, {3}), 3, false, 10).fault == LengthFault::kNone);
  std::vector<int64_t> lens{2, -1, 99};
  c = aop::seq::first_length_fault(view(lens, {3}), 3, false, 10);
  CHECK(c.fault == LengthFault::kNegative);
  CHECK_EQ(c.batch, 1);
  lens[1] = 1;
  c = aop::seq::first_length_fault(view(lens, {3}), 3, false, 10);
  CHECK(c.fault == LengthFault::kBeyond);
  CHECK_EQ(c.value, 99);
  CHECK_EQ(aop::seq::length_message("lens", c.fault, c.batch, c.value, c.aux, "the key's S2"),
           std::string("lens[2] = 99 is beyond the key's S2 (10)"));
}

TEST(block_table_scan_reads_only_used_entries) {
  std::vector<int32_t> table{0, 1, 99, 7, -1, 5};  // [2, 3]; batch 0 uses 2 blocks
  CHECK_EQ(aop::seq::first_bad_block(view(table, {2, 3}), 0, 3, 8, 4, 8), -1);
  CHECK_EQ(aop::seq::first_bad_block(view(table, {2, 3}), 0, 3, 9, 4, 8), 2);
  CHECK_EQ(aop::seq::first_bad_block(view(table, {2, 3}), 1, 3, 5, 4, 8), 1);
  CHECK_EQ(aop::seq::block_id_message(1, 1, -1, 8, 5, 4),
           std::string("block_table[1][1] = -1 is out of range: key has 8 blocks (batch 1 uses 2 blocks for 5 keys)"));
}

}  // namespace
