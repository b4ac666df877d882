#include "ascendc_cpu/matmul.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "state.h"

namespace ascendc_cpu::detail {

void CheckPosition(const TensorDesc& t, AscendC::TPosition want, const char* what, const char* api, SrcLoc loc) {
  if (MemOf(t.pos) != MemOf(want) || t.mem != MemOf(want)) {
    Fail(check::kApiConstraint, loc,
         std::string(api) + ": " + what + " must be a tensor at " +
             (want == AscendC::TPosition::A2 ? "A2 (L0A)" : want == AscendC::TPosition::B2 ? "B2 (L0B)" : "CO1 (L0C)"));
  }
}

void CheckPositionIn(const TensorDesc& t, Mem want, const char* what, const char* api, SrcLoc loc) {
  if (t.mem != want) {
    Fail(check::kApiConstraint, loc, std::string(api) + ": " + what + " must be in " + MemName(want) + ", not " + MemName(t.mem));
  }
}

}  // namespace ascendc_cpu::detail

namespace ascendc_cpu::detail {

float DeqF16Scale(uint64_t deq, const char* api, SrcLoc loc) {
  if (deq == kDeqScalarUnset) {
    Fail(check::kApiConstraint, loc,
         std::string(api) + " DEQF16: deqScalar was never set (the real FixpipeParamsV220 leaves it uninitialised, "
                            "and Fixpipe loads it into the quantisation register whatever SetFixpipePreQuantFlag set)");
  }
  // kernel_operator_fixpipe_v2_impl.h: "bits[31:13] is deq value of fp32"; the rest is dropped.
  if ((deq >> 32) != 0 || (deq & 0x1FFFu) != 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(deq));
    Fail(check::kApiConstraint, loc,
         std::string(api) + " DEQF16: deqScalar " + buf +
             " has bits outside [31:13], which the hardware ignores (it takes bits [31:13] of an fp32): round the "
             "scale to 10 mantissa bits first");
  }
  const uint32_t bits = static_cast<uint32_t>(deq);
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  if (!std::isfinite(scale)) {
    Fail(check::kApiConstraint, loc, std::string(api) + " DEQF16: the deq scale is not finite");
  }
  return scale;
}

void CheckFixpipeMode(bool src_float, bool src_int32, const char* dst_type, AscendC::QuantMode_t q, bool to_l1,
                      SrcLoc loc) {
  using AscendC::QuantMode_t;
  const std::string dst = dst_type;
  // dav-c220 L0C -> GM pairs (CheckFixpipeL0C2GMParam) and the quantPre each needs (Fixpipe docs).
  bool pair_ok = false, mode_ok = false, modelled = true;
  if (src_float) {
    pair_ok = dst == "float" || dst == "half" || dst == "bfloat16_t" || dst == "int8_t" || dst == "uint8_t";
    if (dst == "float") mode_ok = q == QuantMode_t::NoQuant;
    if (dst == "half") mode_ok = q == QuantMode_t::F322F16;
    if (dst == "bfloat16_t") mode_ok = q == QuantMode_t::F322BF16;
    if (dst == "int8_t" || dst == "uint8_t") {
      mode_ok = q == QuantMode_t::QF322B8_PRE || q == QuantMode_t::VQF322B8_PRE;
      modelled = false;
    }
  } else if (src_int32) {
    pair_ok = dst == "int32_t" || dst == "half" || dst == "int8_t" || dst == "uint8_t";
    if (dst == "int32_t") mode_ok = q == QuantMode_t::NoQuant;
    if (dst == "half") {
      mode_ok = q == QuantMode_t::DEQF16 || q == QuantMode_t::VDEQF16;
      modelled = q != QuantMode_t::VDEQF16;
    }
    if (dst == "int8_t" || dst == "uint8_t") {
      mode_ok = q == QuantMode_t::REQ8 || q == QuantMode_t::VREQ8;
      modelled = false;
    }
  }
  const std::string src = src_float ? "float" : src_int32 ? "int32_t" : "other";
  // L0C -> L1 (CheckFixpipeL0C2L1Param): no same-type copy (no NoQuant), no float -> float, int32 -> int32.
  if (to_l1 && (dst == "float" || dst == "int32_t")) pair_ok = false;
  if (!pair_ok) {
    Fail(check::kApiConstraint, loc,
         std::string("Fixpipe: L0C ") + src + (to_l1 ? " -> L1 " : " -> GM ") + dst +
             " is not an Atlas A2 pair (to GM: float -> float/half/bfloat16_t/int8_t/uint8_t, int32_t -> "
             "int32_t/half/int8_t/uint8_t; to L1 the same without float -> float and int32_t -> int32_t)");
  }
  if (!mode_ok) {
    Fail(check::kApiConstraint, loc,
         "Fixpipe: quantPre " + std::to_string(static_cast<int>(q)) + " does not convert L0C " + src + " to " + dst +
             " (float -> float: NoQuant, -> half: F322F16, -> bfloat16_t: F322BF16; int32_t -> int32_t: NoQuant, "
             "-> half: DEQF16 / VDEQF16)");
  }
  if (!modelled) Fail(check::kApiConstraint, loc, "Fixpipe: this quantPre (tensor or 8-bit quantisation) is not modelled");
}

}  // namespace ascendc_cpu::detail
