// LocalTensor<T>: a typed view of a buffer in UB (or L1/L0 for cube positions). Documented
// members modelled: operator[], GetValue/SetValue, ReinterpretCast, GetSize, GetLength,
// SetSize, GetPosition, GetPhyAddr. Scalar accesses are checked like vector ones.
#pragma once
#include <cstring>

#include "ascendc_cpu/runtime.h"

namespace AscendC {

template <class T>
class LocalTensor {
 public:
  using PrimType = T;

  LocalTensor() = default;
  explicit LocalTensor(const ascendc_cpu::detail::TensorDesc& d) : d_(d) {}

  T GetValue(uint32_t index, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) const {
    ascendc_cpu::detail::PipeScope scope(ascendc_cpu::detail::Pipe::kS, "LocalTensor::GetValue", loc);
    T v;
    const uint8_t* p = ascendc_cpu::detail::ReadLocal(d_, int64_t{index} * int64_t{sizeof(T)}, sizeof(T), 1,
                                                      "LocalTensor::GetValue", loc);
    std::memcpy(static_cast<void*>(&v), p, sizeof(T));
    return v;
  }
  void SetValue(uint32_t index, const T& value, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) const {
    ascendc_cpu::detail::PipeScope scope(ascendc_cpu::detail::Pipe::kS, "LocalTensor::SetValue", loc);
    uint8_t* p = ascendc_cpu::detail::WriteLocal(d_, int64_t{index} * int64_t{sizeof(T)}, sizeof(T), 1,
                                                 "LocalTensor::SetValue", loc);
    std::memcpy(p, static_cast<const void*>(&value), sizeof(T));
  }

  // A view starting `offset` elements in; bounds are checked when the view is used.
  LocalTensor operator[](uint32_t offset) const {
    LocalTensor r(*this);
    const int64_t bytes = int64_t{offset} * int64_t{sizeof(T)};
    r.d_.offset += static_cast<uint32_t>(bytes);
    r.d_.extent -= bytes;
    return r;
  }

  template <class U>
  LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(d_);
  }

  uint32_t GetSize() const { return d_.extent > 0 ? static_cast<uint32_t>(d_.extent / int64_t{sizeof(T)}) : 0; }
  uint32_t GetLength() const { return d_.extent > 0 ? static_cast<uint32_t>(d_.extent) : 0; }
  void SetSize(uint32_t size) {  // may only shrink the view: the buffer ends where it ends
    const int64_t bytes = int64_t{size} * int64_t{sizeof(T)};
    if (bytes < d_.extent) d_.extent = bytes;
  }
  TPosition GetPosition() const { return d_.pos; }
  __ubuf__ T* GetPhyAddr() const { return reinterpret_cast<T*>(ascendc_cpu::detail::LocalHostPtr(d_)); }

  const ascendc_cpu::detail::TensorDesc& Desc() const { return d_; }  // emulator only

 private:
  ascendc_cpu::detail::TensorDesc d_;
};

}  // namespace AscendC
