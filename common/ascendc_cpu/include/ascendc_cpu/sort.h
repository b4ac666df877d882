// Sorting in the Atlas A2 layout ("方式一"): a sorted element is an 8-byte (score, index)
// structure, score in the low bytes (float: bytes 0-3; half: bytes 0-1, bytes 2-3 reserved),
// uint32 index in bytes 4-7. Documented APIs modelled:
//   Sort32(dst, scores, indices, repeat)     each repeat sorts 32 scores descending
//   Sort<T, isFullSort>(dst, concat, indices, tmp, repeat)
//                                            isFullSort: all 32*repeat descending, else as Sort32
//   MrgSort<T, isExhaustedSuspension>(dst, {src1..src4}, elementCountList, sortedNum, validBit, repeat)
//                                            merges 2-4 sorted lists (validBit 0b11/0b111/0b1111);
//                                            with isExhaustedSuspension it stops when one list
//                                            runs out and sortedNum[i] tells how many of list i
//                                            were merged; repeat > 1 needs 4 equal, contiguous lists
//   Extract(values, indices, sorted, repeat) splits 32 structures per repeat
//   GetSortLen<T>(n), GetSortOffset<T>(n)     n structures in elements of T
// Equal scores keep their input order (lower position / lower list first).
#pragma once
#include <cstring>

#include "ascendc_cpu/vec_common.h"

namespace AscendC {

// Exactly the public shape (kernel_struct_proposal.h): the default constructor and the
// 4-list constructor only (pass the unused lists too, e.g. the first one again).
template <class T>
struct MrgSortSrcList {
  MrgSortSrcList() {}
  MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                 const LocalTensor<T>& src4In)
      : src1(src1In), src2(src2In), src3(src3In), src4(src4In) {}
  LocalTensor<T> src1;
  LocalTensor<T> src2;
  LocalTensor<T> src3;
  LocalTensor<T> src4;
};

template <class T>
constexpr uint32_t GetSortLen(uint32_t count) {
  return count * 8 / sizeof(T);
}
template <class T>
constexpr uint32_t GetSortOffset(uint32_t count) {
  return count * 8 / sizeof(T);
}

}  // namespace AscendC

namespace ascendc_cpu::detail {

constexpr uint32_t kSortStruct = 8;

// Sort32 / Sort / Extract take `const int32_t repeatTime` with the documented range [0, 255]
// (Sort32.md, Sort.md, Extract.md); the device build compiles the range check out and the value
// reaches an 8-bit repeat field, so a larger one is an error here.
inline uint64_t SortRepeat(int32_t repeat, const char* api, SrcLoc loc) {
  if (repeat < 0 || repeat > 255) {
    Fail(check::kApiConstraint, loc, std::string(api) + ": repeatTime must be in [0, 255], got " + std::to_string(repeat));
  }
  return static_cast<uint64_t>(repeat) * 32;
}

struct Scored {
  float score;
  uint32_t index;
};

template <class T>
Scored LoadStruct(const uint8_t* p) {
  T s;
  std::memcpy(static_cast<void*>(&s), p, sizeof(T));
  Scored r{static_cast<float>(s), 0};
  std::memcpy(&r.index, p + 4, 4);
  return r;
}
template <class T>
void StoreStruct(uint8_t* p, const Scored& v) {
  std::memset(p, 0, kSortStruct);
  const T s = static_cast<T>(v.score);
  std::memcpy(p, static_cast<const void*>(&s), sizeof(T));
  std::memcpy(p + 4, &v.index, 4);
}

template <class T>
void SortRuns(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& scores,
              const AscendC::LocalTensor<uint32_t>& indices, uint32_t run, uint32_t total, const char* api, SrcLoc loc) {
  const T* s = VecSrc(scores, total, api, loc);
  const uint32_t* ix = VecSrc(indices, total, api, loc);
  std::vector<Scored> v(total);
  for (uint32_t i = 0; i < total; ++i) v[i] = Scored{static_cast<float>(s[i]), ix[i]};
  for (uint32_t b = 0; b < total; b += run) {
    std::stable_sort(v.begin() + b, v.begin() + std::min(total, b + run),
                     [](const Scored& x, const Scored& y) { return x.score > y.score; });
  }
  uint8_t* d = WriteLocal(dst.Desc(), 0, int64_t{total} * kSortStruct, 32, api, loc);
  for (uint32_t i = 0; i < total; ++i) StoreStruct<T>(d + i * kSortStruct, v[i]);
  CountVectorOp(loc);
}

}  // namespace ascendc_cpu::detail

namespace AscendC {

template <class T>
void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1, int32_t repeatTime,
            ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  const uint64_t n = ascendc_cpu::detail::SortRepeat(repeatTime, "Sort32", loc);
  ascendc_cpu::detail::SortRuns(dst, src0, src1, 32, static_cast<uint32_t>(n), "Sort32", loc);
}

template <class T, bool isFullSort>
void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
          LocalTensor<T>& tmp, int32_t repeatTime, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const uint64_t n = SortRepeat(repeatTime, "Sort", loc);
  WriteLocal(tmp.Desc(), 0, 0, 32, "Sort", loc);
  SortRuns(dst, concat, index, isFullSort ? static_cast<uint32_t>(n) : 32u, static_cast<uint32_t>(n), "Sort", loc);
}

template <class T>
void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
             int32_t repeatTime, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const uint64_t n = SortRepeat(repeatTime, "Extract", loc);
  const uint8_t* s = ReadLocal(sorted.Desc(), 0, static_cast<int64_t>(n * kSortStruct), 32, "Extract", loc);
  std::vector<Scored> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = LoadStruct<T>(s + i * kSortStruct);
  T* dv = VecDst(dstValue, n, "Extract", loc);
  uint32_t* di = VecDst(dstIndex, n, "Extract", loc);
  for (uint64_t i = 0; i < n; ++i) {
    dv[i] = static_cast<T>(v[i].score);
    di[i] = v[i].index;
  }
  CountVectorOp(loc);
}

template <class T, bool isExhaustedSuspension = false>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
             uint32_t sortedNum[4], uint16_t validBit, int32_t repeatTime,
             ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const char* api = "MrgSort";
  uint32_t lists = 0;
  if (validBit == 0b11) lists = 2;
  if (validBit == 0b111) lists = 3;
  if (validBit == 0b1111) lists = 4;
  if (lists == 0) Fail(ascendc_cpu::check::kApiConstraint, loc, "MrgSort: validBit must be 0b11, 0b111 or 0b1111, got " + std::to_string(validBit));
  if (repeatTime < 1 || repeatTime > 255) Fail(ascendc_cpu::check::kApiConstraint, loc, "MrgSort: repeatTime must be in [1, 255]");
  for (uint32_t l = 0; l < lists; ++l) {  // MrgSort-93.md: each list length in [0, 4095]
    if (elementCountList[l] > 4095) {
      Fail(ascendc_cpu::check::kApiConstraint, loc,
           "MrgSort: elementCountList[" + std::to_string(l) + "] = " + std::to_string(elementCountList[l]) +
               " is past the limit of 4095 structures per list");
    }
  }
  const LocalTensor<T>* src[4] = {&sortList.src1, &sortList.src2, &sortList.src3, &sortList.src4};
  if (repeatTime > 1) {
    bool ok = lists == 4 && !isExhaustedSuspension;
    for (uint32_t i = 1; ok && i < 4; ++i) {
      ok = elementCountList[i] == elementCountList[0] &&
           src[i]->Desc().offset == src[i - 1]->Desc().offset + uint32_t{elementCountList[0]} * kSortStruct;
    }
    if (!ok) Fail(ascendc_cpu::check::kApiConstraint, loc, "MrgSort: repeatTime > 1 needs 4 contiguous lists of equal length without isExhaustedSuspension");
  }
  uint64_t out = 0;
  for (int32_t r = 0; r < repeatTime; ++r) {
    const int64_t shift = int64_t{r} * 4 * elementCountList[0] * kSortStruct;
    std::vector<std::vector<Scored>> in(lists);
    for (uint32_t l = 0; l < lists; ++l) {
      const uint8_t* p = ReadLocal(src[l]->Desc(), shift, int64_t{elementCountList[l]} * kSortStruct, 8, api, loc);
      for (uint32_t i = 0; i < elementCountList[l]; ++i) in[l].push_back(LoadStruct<T>(p + i * kSortStruct));
    }
    std::vector<size_t> pos(lists, 0);
    std::vector<Scored> merged;
    while (true) {
      int best = -1;
      bool exhausted = false;
      for (uint32_t l = 0; l < lists; ++l) {
        if (pos[l] == in[l].size()) {
          exhausted = true;
          continue;
        }
        if (best < 0 || in[l][pos[l]].score > in[static_cast<size_t>(best)][pos[static_cast<size_t>(best)]].score) best = static_cast<int>(l);
      }
      if (best < 0 || (isExhaustedSuspension && exhausted)) break;
      merged.push_back(in[static_cast<size_t>(best)][pos[static_cast<size_t>(best)]++]);
    }
    uint8_t* d = WriteLocal(dst.Desc(), static_cast<int64_t>(out * kSortStruct), static_cast<int64_t>(merged.size() * kSortStruct),
                            r == 0 ? 32 : 1, api, loc);
    for (size_t i = 0; i < merged.size(); ++i) StoreStruct<T>(d + i * kSortStruct, merged[i]);
    out += merged.size();
    for (uint32_t l = 0; l < 4; ++l) sortedNum[l] = l < lists ? static_cast<uint32_t>(pos[l]) : 0;
  }
  CountVectorOp(loc);
}

}  // namespace AscendC
