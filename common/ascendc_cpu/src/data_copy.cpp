#include "ascendc_cpu/data_copy.h"

#include <cstring>
#include <sstream>

#include "state.h"

namespace ascendc_cpu::detail {
namespace {
constexpr uint64_t kBlock = 32;
}

void CheckCountBytes(uint64_t count, uint64_t elem, const char* api, SrcLoc loc) {
  if (count == 0) Fail(check::kApiConstraint, loc, std::string(api) + " of 0 elements");
  const uint64_t bytes = count * elem;
  if (bytes % kBlock != 0) {
    std::ostringstream os;
    os << api << " of " << count << " elements = " << bytes
       << " bytes, not a multiple of 32: the hardware moves whole 32-byte blocks and truncates this to "
       << bytes / kBlock * kBlock << " bytes (use DataCopyPad for the tail)";
    Fail(check::kDataCopyUnaligned, loc, os.str());
  }
}

void CheckBlockCount(uint32_t count, uint64_t len, const char* api, SrcLoc loc) {
  if (count < 1 || count > 4095) {
    Fail(check::kApiConstraint, loc, std::string(api) + ": blockCount must be in [1, 4095], got " + std::to_string(count));
  }
  if (len == 0) Fail(check::kApiConstraint, loc, std::string(api) + ": blockLen must be at least 1");
}

PadSpec MakePad(uint64_t left, uint64_t right, uint64_t len, const void* value, uint32_t elem, const char* api,
                SrcLoc loc) {
  if (left * elem > kBlock || right * elem > kBlock) {
    std::ostringstream os;
    os << api << ": leftPadding (" << left << ") and rightPadding (" << right << ") may each cover at most 32 bytes ("
       << kBlock / elem << " elements of " << elem << " bytes)";
    Fail(check::kApiConstraint, loc, os.str());
  }
  if (len % elem != 0) {
    Fail(check::kApiConstraint, loc, std::string(api) + ": blockLen is not a whole number of elements");
  }
  PadSpec p;
  p.left = left * elem;
  p.right = right * elem;
  p.row = (p.left + len + p.right + kBlock - 1) / kBlock * kBlock;
  p.value = value;
  p.elem = elem;
  return p;
}

void DmaGmToLocal(const TensorDesc& dst, const void* src, const GmBounds& src_bounds, const DmaShape& s,
                  const PadSpec& pad, const char* api, SrcLoc loc) {
  PipeScope scope(Pipe::kMte2, api, loc);  // GM -> UB / L1
  const auto* g = static_cast<const uint8_t*>(src);
  WriteLocal(dst, 0, 0, kBlock, api, loc);  // alignment of the destination
  for (uint32_t i = 0; i < s.count; ++i) {
    const int64_t row = static_cast<int64_t>(i * s.dst_stride);
    GmRead(g + i * s.src_stride, s.len, src_bounds, api, loc);
    uint8_t* l = WriteLocal(dst, row, static_cast<int64_t>(pad.row), 1, api, loc);
    std::memset(l, kGarbage, pad.row);
    std::memcpy(l + pad.left, g + i * s.src_stride, s.len);
    if (pad.value != nullptr && pad.left + pad.right != 0) {
      // DataCopyPad（GMToUB非对齐数据搬运）.md: with left / right padding the dummy bytes up to
      // the 32-byte row end take the padding value too (without padding they stay garbage here,
      // stricter than the doc's "the block's first element").
      for (uint64_t b = 0; b < pad.left; b += pad.elem) std::memcpy(l + b, pad.value, pad.elem);
      for (uint64_t b = pad.left + s.len; b < pad.row; b += pad.elem) std::memcpy(l + b, pad.value, pad.elem);
    }
  }
  BlockCounters(loc).gm_to_local.Add(s.count * s.len, s.count);
}

void DmaLocalToGm(void* dst, const GmBounds& dst_bounds, const TensorDesc& src, const DmaShape& s, const char* api,
                  SrcLoc loc) {
  PipeScope scope(Pipe::kMte3, api, loc);  // UB (or L1) -> GM
  auto* g = static_cast<uint8_t*>(dst);
  ReadLocal(src, 0, 0, kBlock, api, loc);
  for (uint32_t i = 0; i < s.count; ++i) {
    const uint8_t* l = ReadLocal(src, static_cast<int64_t>(i * s.src_stride), static_cast<int64_t>(s.len), 1, api, loc);
    GmWrite(g + i * s.dst_stride, s.len, dst_bounds, api, loc);
    std::memcpy(g + i * s.dst_stride, l, s.len);
  }
  BlockCounters(loc).local_to_gm.Add(s.count * s.len, s.count);
}

void DmaLocalToLocal(const TensorDesc& dst, const TensorDesc& src, const DmaShape& s, const char* api, SrcLoc loc) {
  // UB -> UB moves run on the vector pipe; UB -> L1 on MTE3; L1 -> anything on MTE1.
  const Pipe pipe = src.mem == Mem::kUB ? (dst.mem == Mem::kUB ? Pipe::kV : Pipe::kMte3) : Pipe::kMte1;
  PipeScope scope(pipe, api, loc);
  ReadLocal(src, 0, 0, kBlock, api, loc);
  WriteLocal(dst, 0, 0, kBlock, api, loc);
  std::vector<uint8_t> tmp(s.len);
  for (uint32_t i = 0; i < s.count; ++i) {
    std::memcpy(tmp.data(), ReadLocal(src, static_cast<int64_t>(i * s.src_stride), static_cast<int64_t>(s.len), 1, api, loc),
                s.len);
    std::memcpy(WriteLocal(dst, static_cast<int64_t>(i * s.dst_stride), static_cast<int64_t>(s.len), 1, api, loc), tmp.data(),
                s.len);
  }
  BlockCounters(loc).local_to_local.Add(s.count * s.len, s.count);
}

}  // namespace ascendc_cpu::detail
