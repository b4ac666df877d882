// The timing model's L2 cache: which GM bytes reach HBM. Shared by every core of a launch (the
// scheduler runs one core at a time, so no locking). Fully associative LRU over 512-byte lines,
// write-back. A write allocates its line without reading HBM and remembers which bytes it wrote;
// a read of any other byte of such a line fills it from HBM. A dirty line costs one line of HBM
// traffic when it is evicted or, at the end of the launch, once for every line still dirty (it
// will be written back some time). Every launch starts cold.
#pragma once
#include <bitset>
#include <cstdint>
#include <list>
#include <unordered_map>

namespace ascendc_cpu::detail {

class L2Cache {
 public:
  static constexpr uint64_t kLineBytes = 512;  // timing::kL2LineBytes

  explicit L2Cache(uint64_t capacity_bytes) : capacity_lines_(capacity_bytes / kLineBytes) {}
  // One GM access of `bytes` at address `addr`; returns the HBM bytes it causes.
  uint64_t Access(uint64_t addr, uint64_t bytes, bool write);
  // HBM bytes to write back the lines still dirty (the end of the launch).
  uint64_t DirtyBytes() const { return dirty_lines_ * kLineBytes; }
  void Clear();

 private:
  using ByteMask = std::bitset<kLineBytes>;
  struct Line {
    uint64_t tag;
    bool dirty;
    bool filled;      // holds every byte (read from HBM)
    ByteMask valid;   // the bytes written, while not filled
  };
  uint64_t TouchLine(uint64_t tag, const ByteMask& bytes, bool write);
  uint64_t Evict();

  uint64_t capacity_lines_;
  std::list<Line> lru_;  // front: most recently used
  std::unordered_map<uint64_t, std::list<Line>::iterator> where_;
  uint64_t dirty_lines_ = 0;
};

}  // namespace ascendc_cpu::detail
