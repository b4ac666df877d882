// DataCopy and DataCopyPad between GM and local memory, as documented for Atlas A2:
//  * DataCopy(dst, src, count): one contiguous move; count * sizeof(T) must be a multiple of
//    32 bytes (the hardware moves whole 32-byte DataBlocks and drops the rest) -> checked.
//  * DataCopy(dst, src, DataCopyParams): blockCount bursts of blockLen DataBlocks (32 B);
//    srcStride / dstStride are the gaps between bursts, also in DataBlocks, on both sides.
//  * DataCopyPad(..., DataCopyExtParams / DataCopyParams ...): blockLen in BYTES; the gap on
//    the GM side is in bytes, on the local side in DataBlocks. In local memory every burst
//    starts on a 32-byte boundary: [leftPadding elems][data][rightPadding elems] rounded up
//    to 32 bytes. Pad elements hold paddingValue if isPad, else the SetPadValue value; bytes
//    with no documented value are filled with garbage (but count as written).
//    leftPadding / rightPadding may each cover at most 32 bytes.
//  * DataCopy (count and DataCopyParams forms) GM <-> local: the GM address must be aligned to
//    sizeof(T) (DataCopy（GM与UB连续数据搬运）.md) -> checked, `datacopy-unaligned`.
//  * DataCopyPad: GM needs no alignment; blockCount in [0, 4095], blockLen in [0, 2097151]
//    bytes; blockCount or blockLen 0 moves nothing (a NOP, as on hardware).
// Local tensors must start 32-byte aligned.
#pragma once
#include "ascendc_cpu/global_tensor.h"
#include "ascendc_cpu/local_tensor.h"

namespace AscendC {

// The parameter structs have exactly the public shape of the CANN headers for Atlas A2
// (kernel_struct_data_copy.h): a user-provided default constructor (so they are not aggregates:
// `{...}` calls one of the constructors below, never member-wise initialisation), the listed
// constructors only (no defaulted arguments), and the same fields, types and default values.
struct DataCopyParams {
  DataCopyParams() {}
  DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  union {  // srcStride is the older name of srcGap
    uint16_t srcGap = 0;
    uint16_t srcStride;
  };
  union {  // dstStride is the older name of dstGap
    uint16_t dstGap = 0;
    uint16_t dstStride;
  };
};

struct DataCopyExtParams {
  DataCopyExtParams() {}
  DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                    const uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <class T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() {}
  DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = 0;
};

struct DataCopyPadParams {
  DataCopyPadParams() {}
  DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                    const uint64_t padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
};

}  // namespace AscendC

namespace ascendc_cpu::detail {

// Byte-level DMA shape: `count` bursts of `len` bytes; burst i starts at i * stride.
struct DmaShape {
  uint32_t count;
  uint64_t len;
  uint64_t src_stride;
  uint64_t dst_stride;
};
// Local row layout of GM -> local copies: [left][len][right][dummy up to `row` bytes]; with
// padding and a value, left, right and dummy are the value, else garbage.
struct PadSpec {
  uint64_t left = 0, right = 0, row = 0;
  const void* value = nullptr;  // one element, nullptr: garbage
  uint32_t elem = 1;
};

void DmaGmToLocal(const TensorDesc& dst, const void* src, const GmBounds& src_bounds, const DmaShape& s,
                  const PadSpec& pad, const char* api, SrcLoc loc);
void DmaLocalToGm(void* dst, const GmBounds& dst_bounds, const TensorDesc& src, const DmaShape& s, const char* api,
                  SrcLoc loc);
void DmaLocalToLocal(const TensorDesc& dst, const TensorDesc& src, const DmaShape& s, const char* api, SrcLoc loc);
void CheckCountBytes(uint64_t count, uint64_t elem, const char* api, SrcLoc loc);
void CheckBlockCount(uint32_t count, uint64_t len, const char* api, SrcLoc loc);
PadSpec MakePad(uint64_t left_elems, uint64_t right_elems, uint64_t len, const void* value, uint32_t elem,
                const char* api, SrcLoc loc);

// DataCopy (not Pad) moves GM in units of the element: the GM address must be sizeof(T)-aligned.
template <class T>
void CheckGmAligned(const T* gm, const char* api, SrcLoc loc) {
  if (reinterpret_cast<uintptr_t>(gm) % sizeof(T) != 0) {
    Fail(check::kDataCopyUnaligned, loc,
         std::string(api) + ": the GM address must be aligned to sizeof(T) = " + std::to_string(sizeof(T)) +
             " bytes (use DataCopyPad for byte-aligned GM)");
  }
}
// DataCopyPad: blockCount / blockLen 0 is a NOP; the documented upper limits are checked.
inline bool PadIsNop(uint32_t count, uint64_t len, const char* api, SrcLoc loc) {
  if (count > 4095) Fail(check::kApiConstraint, loc, std::string(api) + ": blockCount must be in [0, 4095], got " + std::to_string(count));
  if (len > 2097151) Fail(check::kApiConstraint, loc, std::string(api) + ": blockLen must be in [0, 2097151] bytes, got " + std::to_string(len));
  return count == 0 || len == 0;
}

}  // namespace ascendc_cpu::detail

namespace AscendC {

// ---- count form --------------------------------------------------------------------------
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  CheckCountBytes(count, sizeof(T), "DataCopy", loc);
  CheckGmAligned(src.GetPhyAddr(), "DataCopy", loc);
  const uint64_t bytes = uint64_t{count} * sizeof(T);
  DmaGmToLocal(dst.Desc(), src.GetPhyAddr(), src.Bounds(), DmaShape{1, bytes, bytes, bytes}, PadSpec{0, 0, bytes}, "DataCopy", loc);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  CheckCountBytes(count, sizeof(T), "DataCopy", loc);
  CheckGmAligned(dst.GetPhyAddr(), "DataCopy", loc);
  const uint64_t bytes = uint64_t{count} * sizeof(T);
  DmaLocalToGm(dst.GetPhyAddr(), dst.Bounds(), src.Desc(), DmaShape{1, bytes, bytes, bytes}, "DataCopy", loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  CheckCountBytes(count, sizeof(T), "DataCopy", loc);
  const uint64_t bytes = uint64_t{count} * sizeof(T);
  DmaLocalToLocal(dst.Desc(), src.Desc(), DmaShape{1, bytes, bytes, bytes}, "DataCopy", loc);
}

// ---- DataCopyParams form (all units DataBlocks of 32 bytes) ------------------------------
inline ascendc_cpu::detail::DmaShape BlockShape(const DataCopyParams& p) {
  const uint64_t len = uint64_t{p.blockLen} * ONE_BLK_SIZE;
  return {p.blockCount, len, len + uint64_t{p.srcStride} * ONE_BLK_SIZE, len + uint64_t{p.dstStride} * ONE_BLK_SIZE};
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const DmaShape s = BlockShape(p);
  CheckBlockCount(s.count, s.len, "DataCopy", loc);
  CheckGmAligned(src.GetPhyAddr(), "DataCopy", loc);
  DmaGmToLocal(dst.Desc(), src.GetPhyAddr(), src.Bounds(), s, PadSpec{0, 0, s.len}, "DataCopy", loc);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const DmaShape s = BlockShape(p);
  CheckBlockCount(s.count, s.len, "DataCopy", loc);
  CheckGmAligned(dst.GetPhyAddr(), "DataCopy", loc);
  DmaLocalToGm(dst.GetPhyAddr(), dst.Bounds(), src.Desc(), s, "DataCopy", loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
              ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  using namespace ascendc_cpu::detail;
  const DmaShape s = BlockShape(p);
  CheckBlockCount(s.count, s.len, "DataCopy", loc);
  DmaLocalToLocal(dst.Desc(), src.Desc(), s, "DataCopy", loc);
}

// ---- DataCopyPad (blockLen in bytes; GM gaps in bytes, local gaps in DataBlocks) ---------
namespace cpu_detail {
inline uint64_t Round32(uint64_t v) { return (v + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE; }

// GM -> UB: with isPad the copy first writes its paddingValue (`value_bytes` raw bytes) into the
// MOV_PAD_VAL register (dav_c220 kernel_operator_data_copy_impl.h, DataCopyPadGm2UBImpl); the
// left / right padding is the register's value either way, so an isPad = false copy pads with
// whatever the last SetPadValue or isPad = true copy left there (garbage if none did).
template <class T>
void PadIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, uint64_t len, uint64_t src_gap,
           uint64_t dst_gap_blocks, bool is_pad, uint8_t left, uint8_t right, const void* value, uint32_t value_bytes,
           ascendc_cpu::SrcLoc loc) {
  using namespace ascendc_cpu::detail;
  const char* api = "DataCopyPad";
  CheckPositionIn(dst.Desc(), Mem::kUB, "dst", api, loc);  // GM -> L1: ReportNotSupport on dav_c220
  if (PadIsNop(count, len, api, loc)) return;
  CheckBlockCount(count, len, api, loc);
  if (is_pad) SetPadValueBytes(value, value_bytes);
  T reg_value;
  const T* v = PadValueBytes(&reg_value, sizeof(T)) ? &reg_value : nullptr;
  const PadSpec pad = MakePad(left, right, len, v, sizeof(T), api, loc);
  DmaGmToLocal(dst.Desc(), src.GetPhyAddr(), src.Bounds(), DmaShape{count, len, len + src_gap, pad.row + dst_gap_blocks * ONE_BLK_SIZE},
               pad, api, loc);
}
template <class T>
void PadOut(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, uint64_t len,
            uint64_t src_gap_blocks, uint64_t dst_gap, ascendc_cpu::SrcLoc loc) {
  using namespace ascendc_cpu::detail;
  CheckPositionIn(src.Desc(), Mem::kUB, "src", "DataCopyPad", loc);  // L1 -> GM: ReportNotSupport on dav_c220
  if (PadIsNop(count, len, "DataCopyPad", loc)) return;
  CheckBlockCount(count, len, "DataCopyPad", loc);
  DmaLocalToGm(dst.GetPhyAddr(), dst.Bounds(), src.Desc(),
               DmaShape{count, len, Round32(len) + src_gap_blocks * ONE_BLK_SIZE, len + dst_gap}, "DataCopyPad", loc);
}
}  // namespace cpu_detail

template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  cpu_detail::PadIn(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
                    pad.rightPadding, &pad.paddingValue, sizeof(T), loc);
}
template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p,
                 ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  cpu_detail::PadOut(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, loc);
}
template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                 const DataCopyPadParams& pad, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  // set_mov_pad_val(padParams.paddingValue): the uint64_t's raw bits, not a conversion to T.
  const uint64_t bits = pad.paddingValue;
  cpu_detail::PadIn(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
                    pad.rightPadding, &bits, sizeof bits, loc);
}
template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                 ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
  cpu_detail::PadOut(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, loc);
}

// Writes the MOV_PAD_VAL register: the padding of later isPad = false DataCopyPad copies, until
// an isPad = true copy overwrites it with its own paddingValue.
template <class T, TPosition pos = TPosition::MAX>
void SetPadValue(T value) {
  ascendc_cpu::detail::SetPadValueBytes(&value, sizeof(T));
}

}  // namespace AscendC
