// The timing model's caches: which accesses hit. Fully associative LRU over fixed-size lines
// (up to 512 bytes), write-back. A write allocates its line without a fill and remembers which
// bytes it wrote; a read of any other byte of such a line fills it. A dirty line costs one line
// of traffic below when it is evicted or, at the end of the launch, once for every line still
// dirty (DirtyBytes). Used for the L2 shared by all cores (the scheduler runs one core at a time,
// so no locking) and for each core's scalar data cache. Every launch starts cold.
#pragma once
#include <bitset>
#include <cstdint>
#include <list>
#include <unordered_map>

namespace ascendc_cpu::detail {

class LineCache {
 public:
  static constexpr uint64_t kMaxLineBytes = 512;

  LineCache(uint64_t capacity_bytes, uint64_t line_bytes);
  // One access of `bytes` at address `addr`; returns the bytes it moves from and to the level
  // below (line fills and write-backs of evicted dirty lines).
  uint64_t Access(uint64_t addr, uint64_t bytes, bool write);
  // Bytes to write back the lines still dirty (the end of the launch).
  uint64_t DirtyBytes() const { return dirty_lines_ * line_bytes_; }
  // Drops the lines of [addr, addr + bytes) (a clean-and-invalidate; write-backs not counted).
  void Invalidate(uint64_t addr, uint64_t bytes);
  void Clear();

 private:
  using ByteMask = std::bitset<kMaxLineBytes>;
  struct Line {
    uint64_t tag;
    bool dirty;
    bool filled;     // holds every byte (read from below)
    ByteMask valid;  // the bytes written, while not filled
  };
  uint64_t TouchLine(uint64_t tag, const ByteMask& bytes, bool write);
  uint64_t Evict();
  void Drop(std::unordered_map<uint64_t, std::list<Line>::iterator>::iterator it);

  uint64_t line_bytes_;
  uint64_t capacity_lines_;
  std::list<Line> lru_;  // front: most recently used
  std::unordered_map<uint64_t, std::list<Line>::iterator> where_;
  uint64_t dirty_lines_ = 0;
};

}  // namespace ascendc_cpu::detail
