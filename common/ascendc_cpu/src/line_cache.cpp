#include "line_cache.h"

#include <algorithm>

namespace ascendc_cpu::detail {

namespace {

// The bytes [lo, hi) of a line as a mask.
std::bitset<LineCache::kMaxLineBytes> Range(uint64_t lo, uint64_t hi) {
  std::bitset<LineCache::kMaxLineBytes> m;
  m.set();
  m >>= LineCache::kMaxLineBytes - (hi - lo);
  return m << lo;
}

}  // namespace

LineCache::LineCache(uint64_t capacity_bytes, uint64_t line_bytes)
    : line_bytes_(std::clamp<uint64_t>(line_bytes, 1, kMaxLineBytes)), capacity_lines_(capacity_bytes / line_bytes_) {}

uint64_t LineCache::Access(uint64_t addr, uint64_t bytes, bool write) {
  uint64_t below = 0;
  for (uint64_t at = addr, end = addr + bytes; at < end;) {
    const uint64_t tag = at / line_bytes_, lo = at % line_bytes_;
    const uint64_t hi = std::min<uint64_t>(line_bytes_, lo + (end - at));
    below += TouchLine(tag, Range(lo, hi), write);
    at += hi - lo;
  }
  return below;
}

uint64_t LineCache::TouchLine(uint64_t tag, const ByteMask& bytes, bool write) {
  if (capacity_lines_ == 0) return bytes.count();  // no cache: every byte goes below
  uint64_t below = 0;
  auto it = where_.find(tag);
  if (it == where_.end()) {
    if (lru_.size() == capacity_lines_) below += Evict();
    lru_.push_front(Line{tag, false, !write, write ? bytes : ByteMask{}});
    it = where_.emplace(tag, lru_.begin()).first;
    if (!write) return below + line_bytes_;  // a read miss fills the line
  } else {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
  Line& line = *it->second;
  if (write) {
    if (!line.filled) line.valid |= bytes;
    if (!line.dirty) ++dirty_lines_;
    line.dirty = true;
  } else if (!line.filled && (bytes & ~line.valid).any()) {
    below += line_bytes_;  // reads bytes it never wrote: fill
    line.filled = true;
  }
  return below;
}

uint64_t LineCache::Evict() {
  const uint64_t below = lru_.back().dirty ? line_bytes_ : 0;
  Drop(where_.find(lru_.back().tag));
  return below;
}

void LineCache::Drop(std::unordered_map<uint64_t, std::list<Line>::iterator>::iterator it) {
  if (it->second->dirty) --dirty_lines_;
  lru_.erase(it->second);
  where_.erase(it);
}

void LineCache::Invalidate(uint64_t addr, uint64_t bytes) {
  if (bytes == 0) return;
  for (uint64_t tag = addr / line_bytes_; tag <= (addr + bytes - 1) / line_bytes_; ++tag) {
    auto it = where_.find(tag);
    if (it != where_.end()) Drop(it);
  }
}

void LineCache::Clear() {
  lru_.clear();
  where_.clear();
  dirty_lines_ = 0;
}

}  // namespace ascendc_cpu::detail
