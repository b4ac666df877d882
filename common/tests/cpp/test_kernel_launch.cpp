// The argument list common's launch builds from an op's GM tensors (ascend_ops/kernel_launch.hpp):
// the tensors in order, then workspace, error record and tiling; a wrapper gets block_dim and the
// stream first.
#include <array>
#include <cstdint>

#include "aop_test.h"
#include "ascend_ops/kernel_launch.hpp"

namespace {

uint32_t g_block_dim = 0;
void* g_stream = nullptr;
uint8_t* g_args[5] = {};

void fake_wrapper(uint32_t block_dim, void* stream, uint8_t* a, uint8_t* b, uint8_t* ws, uint8_t* rec, uint8_t* t) {
  g_block_dim = block_dim;
  g_stream = stream;
  uint8_t* args[5] = {a, b, ws, rec, t};
  for (int i = 0; i < 5; ++i) g_args[i] = args[i];
}

}  // namespace

TEST(tensors_then_workspace_record_tiling) {
  int64_t a[4] = {}, workspace[8] = {}, record[8] = {}, tiling[2] = {};
  aop_tensor view{};
  view.data = a;
  view.ndim = 1;
  view.shape[0] = 4;
  view.strides[0] = 1;
  view.dtype = AOP_DTYPE_INT64;
  const std::array<aop::launch::GmTensor, 2> tensors{
      aop::launch::gm(view, "a", aop::launch::GmRole::kInput),
      aop::launch::gm_absent("b", aop::launch::GmRole::kOutput)};
  CHECK_EQ(tensors[0].span_bytes, uint64_t{32});
  CHECK(tensors[1].data == nullptr && tensors[1].span_bytes == 0);
  const auto p = aop::launch::kernel_pointers(tensors, workspace, record, tiling);
  CHECK_EQ(p.size(), size_t{5});
  int stream = 0;
  aop::launch::call_with_pointers(&fake_wrapper, p, uint32_t{3}, static_cast<void*>(&stream));
  CHECK_EQ(g_block_dim, uint32_t{3});
  CHECK(g_stream == &stream);
  CHECK(g_args[0] == reinterpret_cast<uint8_t*>(a) && g_args[1] == nullptr);
  CHECK(g_args[2] == reinterpret_cast<uint8_t*>(workspace) && g_args[3] == reinterpret_cast<uint8_t*>(record));
  CHECK(g_args[4] == reinterpret_cast<uint8_t*>(tiling));
}

TEST(cores_for_cost_keeps_the_exchange_within_its_budget) {
  using aop::launch::check_exchange_bytes;
  using aop::launch::cores_for_cost;
  CHECK_EQ(check_exchange_bytes(1), int64_t{0});
  CHECK_EQ(check_exchange_bytes(16), int64_t{16 * 16 * 8 + 16 * 8});
  const aop::launch::CoreCost cost{77, 38, 604, 1537};
  // 16 units: one core is the fastest (no SyncAll), whatever the budget
  CHECK_EQ(cores_for_cost(16, 48, cost, 1 << 30), int64_t{1});
  // 256 units: the fastest launch whose exchange fits 2521 bytes (16 cores: 2176), not 43 cores
  CHECK_EQ(cores_for_cost(256, 48, cost, 2521), int64_t{16});
  CHECK_EQ(cores_for_cost(256, 48, cost, 1 << 30), aop::launch::cores_for_units(256, 48));
  // no budget: one core
  CHECK_EQ(cores_for_cost(256, 48, cost, 0), int64_t{1});
}
