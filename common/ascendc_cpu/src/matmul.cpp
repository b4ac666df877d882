#include "ascendc_cpu/matmul.h"

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
