#include "l2_cache.h"

#include <algorithm>

#include <ascendc_cpu/timing_model.h>

namespace ascendc_cpu::detail {

static_assert(L2Cache::kLineBytes == static_cast<uint64_t>(timing::kL2LineBytes));

namespace {

// The bytes [lo, hi) of a line as a mask.
std::bitset<L2Cache::kLineBytes> Range(uint64_t lo, uint64_t hi) {
  std::bitset<L2Cache::kLineBytes> m;
  m.set();
  m >>= L2Cache::kLineBytes - (hi - lo);
  return m << lo;
}

}  // namespace

uint64_t L2Cache::Access(uint64_t addr, uint64_t bytes, bool write) {
  uint64_t hbm = 0;
  for (uint64_t at = addr, end = addr + bytes; at < end;) {
    const uint64_t tag = at / kLineBytes, lo = at % kLineBytes;
    const uint64_t hi = std::min<uint64_t>(kLineBytes, lo + (end - at));
    hbm += TouchLine(tag, Range(lo, hi), write);
    at += hi - lo;
  }
  return hbm;
}

uint64_t L2Cache::TouchLine(uint64_t tag, const ByteMask& bytes, bool write) {
  if (capacity_lines_ == 0) return bytes.count();  // no L2: every byte goes to HBM
  uint64_t hbm = 0;
  auto it = where_.find(tag);
  if (it == where_.end()) {
    if (lru_.size() == capacity_lines_) hbm += Evict();
    lru_.push_front(Line{tag, false, !write, write ? bytes : ByteMask{}});
    it = where_.emplace(tag, lru_.begin()).first;
    if (!write) return hbm + kLineBytes;  // a read miss fills the line
  } else {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
  Line& line = *it->second;
  if (write) {
    if (!line.filled) line.valid |= bytes;
    if (!line.dirty) ++dirty_lines_;
    line.dirty = true;
  } else if (!line.filled && (bytes & ~line.valid).any()) {
    hbm += kLineBytes;  // reads bytes it never wrote: fill from HBM
    line.filled = true;
  }
  return hbm;
}

uint64_t L2Cache::Evict() {
  const Line& victim = lru_.back();
  const uint64_t hbm = victim.dirty ? kLineBytes : 0;
  if (victim.dirty) --dirty_lines_;
  where_.erase(victim.tag);
  lru_.pop_back();
  return hbm;
}

void L2Cache::Clear() {
  lru_.clear();
  where_.clear();
  dirty_lines_ = 0;
}

}  // namespace ascendc_cpu::detail
