// The documented "tensor high-dimension split" (level-0) form of the vector APIs: repeatTime
// repeats of one 256-byte vector op, each over 8 DataBlocks of 32 bytes.
//   * mask (continuous): the first `mask` elements of every repeat take part (1..256/sizeof(T));
//     mask[2] (bitwise): bit i of mask[0] (i < 64) / mask[1] (i >= 64) selects element i.
//   * BinaryRepeatParams{dstBlkStride, src0BlkStride, src1BlkStride, dstRepStride, src0RepStride,
//     src1RepStride} and UnaryRepeatParams{dstBlkStride, srcBlkStride, dstRepStride, srcRepStride}:
//     block strides are DataBlocks between the 8 blocks of a repeat, repeat strides DataBlocks
//     between the first blocks of consecutive repeats.
//   * Elements outside the mask are left untouched in dst and are not read.
// Only isSetMask = true (the mask passed in the call) is modelled.
#pragma once
#include <array>

#include "ascendc_cpu/vec_common.h"

namespace AscendC {

// Exactly the public shape of the CANN structs (kernel_struct_binary.h / kernel_struct_unary.h):
// user-provided default constructor, these constructors only, these fields and defaults.
// blockNumber, repeatStrideMode, strideSizeMode and halfBlock exist for source compatibility;
// the emulator models the default values only.
struct BinaryRepeatParams {
  BinaryRepeatParams() {}
  BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                     const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
      : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
        dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
  uint32_t blockNumber = 8;
  uint8_t dstBlkStride = 1;
  uint8_t src0BlkStride = 1;
  uint8_t src1BlkStride = 1;
  uint8_t dstRepStride = 8;
  uint8_t src0RepStride = 8;
  uint8_t src1RepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

struct UnaryRepeatParams {
  UnaryRepeatParams() {}
  UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                    const uint8_t srcRepStrideIn)
      : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
        srcRepStride(srcRepStrideIn) {}
  UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                    const uint8_t srcRepStrideIn, const bool halfBlockIn)
      : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
        srcRepStride(srcRepStrideIn), halfBlock(halfBlockIn) {}
  uint32_t blockNumber = 8;
  uint16_t dstBlkStride = 1;
  uint16_t srcBlkStride = 1;
  uint8_t dstRepStride = 8;
  uint8_t srcRepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
  bool halfBlock = false;
};

}  // namespace AscendC

namespace ascendc_cpu::detail {

// Which elements of one repeat take part.
struct RepeatMask {
  uint64_t bits[2] = {0, 0};
  bool Has(uint32_t e) const { return (bits[e / 64] >> (e % 64)) & 1u; }
};

template <class T>
RepeatMask ContinuousMask(uint64_t mask, const char* api, SrcLoc loc) {
  constexpr uint64_t per_repeat = 256 / sizeof(T);
  if (mask < 1 || mask > per_repeat) {
    Fail(check::kApiConstraint, loc,
         std::string(api) + ": mask must be in [1, " + std::to_string(per_repeat) + "], got " + std::to_string(mask));
  }
  RepeatMask m;
  for (uint64_t e = 0; e < mask; ++e) m.bits[e / 64] |= uint64_t{1} << (e % 64);
  return m;
}

template <class T>
RepeatMask BitMask(const uint64_t mask[], const char* api, SrcLoc loc) {
  RepeatMask m{{mask[0], sizeof(T) == 2 ? mask[1] : 0}};
  if (sizeof(T) == 4 && mask[1] != 0) Fail(check::kApiConstraint, loc, std::string(api) + ": mask[1] must be 0 for 32-bit types");
  if (m.bits[0] == 0 && m.bits[1] == 0) Fail(check::kApiConstraint, loc, std::string(api) + ": empty mask");
  return m;
}

// One operand's addressing: base tensor, block stride and repeat stride in DataBlocks.
struct Operand {
  const TensorDesc* desc;
  uint32_t blk;
  uint32_t rep;
};

// dst[e] = f(src_0[e], ..., src_{N-1}[e]) for every masked element e of every repeat.
template <class T, size_t N, class F>
void RepeatApply(const Operand& dst, const std::array<Operand, N>& srcs, const RepeatMask& mask, uint8_t repeat,
                 const char* api, SrcLoc loc, F f) {
  constexpr uint32_t per_block = 32 / sizeof(T), per_repeat = 256 / sizeof(T);
  auto offset = [&](const Operand& o, uint32_t r, uint32_t e) {
    return (int64_t{r} * o.rep + int64_t{e / per_block} * o.blk) * 32 + int64_t{e % per_block} * int64_t{sizeof(T)};
  };
  ReadLocal(*dst.desc, 0, 0, 32, api, loc);
  for (const Operand& s : srcs) ReadLocal(*s.desc, 0, 0, 32, api, loc);
  for (uint32_t r = 0; r < repeat; ++r) {
    for (uint32_t e = 0; e < per_repeat; ++e) {
      if (!mask.Has(e)) continue;
      std::array<ComputeT<T>, N> v{};
      for (size_t i = 0; i < N; ++i) {
        T x;
        std::memcpy(static_cast<void*>(&x), ReadLocal(*srcs[i].desc, offset(srcs[i], r, e), sizeof(T), 1, api, loc), sizeof(T));
        v[i] = static_cast<ComputeT<T>>(x);
      }
      const T out = static_cast<T>(f(v));
      std::memcpy(WriteLocal(*dst.desc, offset(dst, r, e), sizeof(T), 1, api, loc), static_cast<const void*>(&out), sizeof(T));
    }
  }
  CountVectorOp(loc);
}

}  // namespace ascendc_cpu::detail
