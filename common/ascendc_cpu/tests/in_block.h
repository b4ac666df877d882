// Runs a lambda as the kernel of a one-block launch, for API semantics tests: data moves in
// and out of local tensors with SetValue / GetValue, so no GM region is involved.
#pragma once
#include <functional>
#include <vector>

#include "ascendc_cpu/launch.h"
#include "kernel_operator.h"

namespace emu_test {

inline std::function<void()>& Body() {
  static std::function<void()> body;
  return body;
}
inline void Trampoline(GM_ADDR) { Body()(); }

inline ascendc_cpu::LaunchReport InBlock(std::function<void()> body,
                                         ascendc_cpu::KernelType type = ascendc_cpu::KernelType::kAivOnly) {
  Body() = std::move(body);
  ascendc_cpu::LaunchConfig config{"ops", 1, 196608, ascendc_cpu::Order::kInOrder};
  config.kernel_type = type;
  return ascendc_cpu::Launch(config, {}, Trampoline, nullptr);
}
// The same on one cube core (an AIC_ONLY launch): for the cube APIs.
inline ascendc_cpu::LaunchReport InCubeBlock(std::function<void()> body) {
  return InBlock(std::move(body), ascendc_cpu::KernelType::kAicOnly);
}

template <class T>
void Fill(const AscendC::LocalTensor<T>& t, const std::vector<T>& v) {
  for (size_t i = 0; i < v.size(); ++i) t.SetValue(static_cast<uint32_t>(i), v[i]);
}
template <class T>
std::vector<T> Read(const AscendC::LocalTensor<T>& t, uint32_t n) {
  std::vector<T> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = t.GetValue(i);
  return v;
}

}  // namespace emu_test
