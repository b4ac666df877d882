// TopK (documented high-level API, MERGE_SORT algorithm as on Atlas A2): for each of
// `outter` rows of `inner` elements (inner a multiple of 32; the first n are real data, the
// padding must be filled by the caller), the k largest (isLargest) or smallest values in
// order, with their indices. Output rows are k_pad long: k rounded up to 32 bytes of the
// element type (values) or of int32 (indices); entries past k are unspecified.
// isInitIndex: indices come from srcIndexLocal ([inner], shared by all rows) instead of
// 0..inner-1. isHasfinish: a row whose finishLocal entry is true gets every index set to n.
// Equal values keep the lower position first (the merge sort is stable). The TopkTiling the
// host computes with CANN's tiling API is accepted and ignored.
#pragma once
#include "ascendc_cpu/vec_common.h"

namespace AscendC {

enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };

struct TopKInfo {
  int32_t outter = 1;
  int32_t inner = 32;
  int32_t n = 32;
};

struct TopkTiling {  // opaque here: CANN's host tiling fills it for the NPU build
  int32_t fields[32] = {};
};

template <class T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          TopKMode topkMode = TopKMode::TOPK_NORMAL>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal, const LocalTensor<T>& srcLocal,
          const LocalTensor<int32_t>& srcIndexLocal, const LocalTensor<bool>& finishLocal, const int32_t k,
          const TopkTiling& tiling, const TopKInfo& info, const bool isLargest = true,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  (void)tiling;
  const char* api = "TopK";
  if (info.inner <= 0 || info.inner % 32 != 0 || info.n <= 0 || info.n > info.inner || info.outter <= 0) {
    Fail(ascendc_cpu::check::kApiConstraint, loc, "TopK: need outter > 0, inner a positive multiple of 32 and 0 < n <= inner");
  }
  if (topkMode == TopKMode::TOPK_NSMALL && info.inner != 32) Fail(ascendc_cpu::check::kApiConstraint, loc, "TopK: TOPK_NSMALL needs inner == 32");
  if (k < 1 || k > info.n) Fail(ascendc_cpu::check::kApiConstraint, loc, "TopK: k must be in [1, n]");
  const uint32_t rows = static_cast<uint32_t>(info.outter), inner = static_cast<uint32_t>(info.inner);
  const auto kv = static_cast<uint32_t>((static_cast<uint32_t>(k) * sizeof(T) + 31) / 32 * 32 / sizeof(T));
  const uint32_t ki = (static_cast<uint32_t>(k) + 7) / 8 * 8;
  const T* src = VecSrc(srcLocal, uint64_t{rows} * inner, api, loc);
  const int32_t* six = isInitIndex ? VecSrc(srcIndexLocal, inner, api, loc) : nullptr;
  const bool* fin = isHasfinish ? VecSrc(finishLocal, rows, api, loc) : nullptr;
  std::vector<T> vals(uint64_t{rows} * kv);
  std::vector<int32_t> idxs(uint64_t{rows} * ki);
  std::vector<uint32_t> order(inner);
  for (uint32_t r = 0; r < rows; ++r) {
    const T* row = src + uint64_t{r} * inner;
    for (uint32_t i = 0; i < inner; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const float x = static_cast<float>(row[a]), y = static_cast<float>(row[b]);
      return isLargest ? x > y : x < y;
    });
    for (int32_t j = 0; j < k; ++j) {
      vals[uint64_t{r} * kv + j] = row[order[j]];
      idxs[uint64_t{r} * ki + j] = fin != nullptr && fin[r] ? info.n : (six ? six[order[j]] : static_cast<int32_t>(order[j]));
    }
  }
  std::copy(vals.begin(), vals.end(), VecDst(dstValueLocal, vals.size(), api, loc));
  std::copy(idxs.begin(), idxs.end(), VecDst(dstIndexLocal, idxs.size(), api, loc));
  CountVectorOp(loc);
}

// Variant with caller-provided scratch (documented); the emulator needs none.
template <class T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          TopKMode topkMode = TopKMode::TOPK_NORMAL>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal, const LocalTensor<T>& srcLocal,
          const LocalTensor<int32_t>& srcIndexLocal, const LocalTensor<bool>& finishLocal, const LocalTensor<uint8_t>& tmpLocal,
          const int32_t k, const TopkTiling& tiling, const TopKInfo& info, const bool isLargest = true,
          ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  ascendc_cpu::detail::WriteLocal(tmpLocal.Desc(), 0, 0, 32, "TopK", loc);
  TopK<T, isInitIndex, isHasfinish, isReuseSrc, topkMode>(dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal, finishLocal,
                                                          k, tiling, info, isLargest, loc);
}

}  // namespace AscendC
