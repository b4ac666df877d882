// GlobalTensor<T>: a typed view of global memory (documented: SetGlobalBuffer, operator[],
// GetValue/SetValue, GetPhyAddr, GetSize). Scalar accesses are bounds-checked and counted.
#pragma once
#include <cstring>

#include "ascendc_cpu/runtime.h"

namespace AscendC {

template <class T>
class GlobalTensor {
 public:
  using PrimType = T;

  void SetGlobalBuffer(__gm__ T* buffer, uint64_t buffer_size = 0) {
    base_ = buffer;
    size_ = buffer_size;
    bounds_ = ascendc_cpu::detail::GmRegionOf(buffer);
  }

  T GetValue(uint64_t index, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) const {
    ascendc_cpu::detail::PipeScope scope(ascendc_cpu::detail::Pipe::kS, "GlobalTensor::GetValue", loc);
    ascendc_cpu::detail::GmRead(base_ + index, sizeof(T), bounds_, "GlobalTensor::GetValue", loc);
    ++ascendc_cpu::detail::BlockCounters(loc).gm_scalar_reads;
    T v;
    std::memcpy(static_cast<void*>(&v), static_cast<const void*>(base_ + index), sizeof(T));
    return v;
  }
  void SetValue(uint64_t index, const T& value, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) const {
    ascendc_cpu::detail::PipeScope scope(ascendc_cpu::detail::Pipe::kS, "GlobalTensor::SetValue", loc);
    ascendc_cpu::detail::GmWrite(base_ + index, sizeof(T), bounds_, "GlobalTensor::SetValue", loc);
    ++ascendc_cpu::detail::BlockCounters(loc).gm_scalar_writes;
    std::memcpy(static_cast<void*>(base_ + index), static_cast<const void*>(&value), sizeof(T));
  }

  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor r(*this);
    r.base_ = base_ + offset;
    r.size_ = size_ > offset ? size_ - offset : 0;
    return r;
  }

  __gm__ T* GetPhyAddr() const { return base_; }
  __gm__ T* GetPhyAddr(uint64_t offset) const { return base_ + offset; }
  uint64_t GetSize() const { return size_; }
  const ascendc_cpu::detail::GmBounds& Bounds() const { return bounds_; }  // emulator only

 private:
  __gm__ T* base_ = nullptr;
  uint64_t size_ = 0;
  ascendc_cpu::detail::GmBounds bounds_;
};

}  // namespace AscendC
