// The kernel line that called an emulated API: every API takes a defaulted SrcLoc last, so
// errors name the caller's file and line (GCC/Clang __builtin_FILE/LINE in a default argument
// evaluate at the call site).
#pragma once

namespace ascendc_cpu {

struct SrcLoc {
  const char* file;
  int line;
  static constexpr SrcLoc Here(const char* f = __builtin_FILE(), int l = __builtin_LINE()) {
    return SrcLoc{f, l};
  }
};

}  // namespace ascendc_cpu
