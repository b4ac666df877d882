// Kernel-side basic types of the AscendC emulator: qualifiers, scalar types, enums.
// Written from the public AscendC documentation (no CANN source): names and enumerators are
// the documented ones so kernel sources compile unchanged with CANN's compiler.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ascendc_cpu/bfloat16.h"
#include "ascendc_cpu/src_loc.h"

// Address-space and function qualifiers mean nothing on the CPU.
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#define GM_ADDR __gm__ uint8_t*
// Kernel types (documented enum KernelMetaType, "设置Kernel类型"). KERNEL_TASK_TYPE_DEFAULT is a
// statement in the kernel body; the emulator checks it against LaunchConfig::kernel_type
// (kernel-type error on a mismatch). Only the Atlas A2 separated-mode types are launchable.
enum KernelMetaType : uint8_t {
  KERNEL_TYPE_AIV_ONLY,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2,
  KERNEL_TYPE_AICORE,
  KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE,
  KERNEL_TYPE_MIX_VECTOR_CORE,
  KERNEL_TYPE_MAX,
};
#define KERNEL_TASK_TYPE_DEFAULT(type) \
  ::ascendc_cpu::detail::DeclareKernelType(static_cast<int>(type), ::ascendc_cpu::SrcLoc::Here())
#define KERNEL_TASK_TYPE(key, type)
// `if ASCEND_IS_AIC { ... }` / `if ASCEND_IS_AIV { ... }` as on the real toolchain, where each
// side's build compiles the other side's branch away; here the core running the kernel decides.
#define ASCEND_IS_AIC (::ascendc_cpu::detail::CoreIsAic())
#define ASCEND_IS_AIV (::ascendc_cpu::detail::CoreIsAiv())

#if !defined(__FLT16_MANT_DIG__)
#error "ascendc_cpu needs a compiler with _Float16 (GCC >= 12 or Clang >= 15 on x86-64/aarch64)"
#endif
using half = _Float16;

namespace AscendC {

enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  MAX,
};
using QuePosition = TPosition;

// Cast rounding modes (documented enum RoundMode).
enum class RoundMode : uint8_t {
  CAST_NONE = 0,  // CAST_RINT when the conversion loses precision, exact otherwise
  CAST_RINT,      // to nearest, ties to even
  CAST_FLOOR,     // toward -inf
  CAST_CEIL,      // toward +inf
  CAST_ROUND,     // to nearest, ties away from zero
  CAST_TRUNC,     // toward zero
  CAST_ODD,       // von Neumann: inexact results get an odd last mantissa bit
};

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE : uint8_t {
  VSEL_CMPMASK_SPR = 0,
  VSEL_TENSOR_SCALAR_MODE,
  VSEL_TENSOR_TENSOR_MODE,
};

enum pipe_t : uint8_t {
  PIPE_S = 0,
  PIPE_V,
  PIPE_M,
  PIPE_MTE1,
  PIPE_MTE2,
  PIPE_MTE3,
  PIPE_ALL,
  PIPE_FIX,
};

enum class HardEvent : uint8_t {  // exactly the real enumerators, in the real order (A2)
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  M_FIX,
  FIX_M,
  MTE3_MTE2,
  MTE2_MTE3,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE2_FIX,
  FIX_MTE2,
  FIX_S,
  M_S,
  FIX_MTE3,
  MTE1_FIX,
  FIX_MTE1,
  FIX_FIX,
  MAX,
};

using event_t = int32_t;

constexpr uint32_t ONE_BLK_SIZE = 32;     // bytes in one DataBlock
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;  // bytes one vector repeat processes

}  // namespace AscendC
