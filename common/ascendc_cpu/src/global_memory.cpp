// Global memory: every access must fall inside one registered region; writes must target an
// output or workspace region; pipes.cpp checks the ordering of accesses (pipe-race,
// gm-cross-block-write: two cores write the same bytes unordered) and the scalar data cache.
#include <algorithm>
#include <sstream>

#include "state.h"

namespace ascendc_cpu::detail {
namespace {

std::string Describe(const LaunchState& l, uintptr_t p) {
  std::ostringstream os;
  const RegionState* best = nullptr;
  uint64_t best_dist = ~uint64_t{0};
  for (const RegionState& r : l.regions) {
    const uint64_t dist = p < r.begin ? r.begin - p : (p >= r.end ? p - r.end + 1 : 0);
    if (dist < best_dist) {
      best_dist = dist;
      best = &r;
    }
  }
  if (best == nullptr) return "no GM region is registered";
  const int64_t off = static_cast<int64_t>(p) - static_cast<int64_t>(best->begin);
  os << "nearest region '" << best->region.name << "' (" << best->region.bytes
     << " bytes), address is at its byte offset " << off;
  return os.str();
}

RegionState* Containing(LaunchState& l, uintptr_t p) {
  if (l.overlapping_views) {  // views of one allocation overlap: the first region that holds p
    for (RegionState& r : l.regions) {
      if (p >= r.begin && p < r.end) return &r;
    }
    return nullptr;
  }
  auto it = std::upper_bound(l.regions.begin(), l.regions.end(), p,
                             [](uintptr_t v, const RegionState& r) { return v < r.begin; });
  if (it == l.regions.begin()) return nullptr;
  RegionState& r = *std::prev(it);
  return p < r.end ? &r : nullptr;
}

// The region of the access, checked against the region the tensor was set on.
RegionState& Find(BlockState& b, uintptr_t p, uint64_t bytes, const GmBounds& bounds, const char* api, const char* dir,
                  SrcLoc loc) {
  LaunchState& l = *b.launch;
  RegionState* r = Containing(l, p);
  if (bounds.end != 0) {
    RegionState* home = bounds.region >= 0 && static_cast<size_t>(bounds.region) < l.regions.size()
                            ? &l.regions[static_cast<size_t>(bounds.region)]
                            : Containing(l, bounds.begin);
    if (p >= bounds.begin && p + bytes <= bounds.end && home != nullptr) return *home;
    std::ostringstream os;
    const int64_t off = static_cast<int64_t>(p) - static_cast<int64_t>(bounds.begin);
    os << api << ": GM " << dir << " of " << bytes << " bytes at byte offset " << off << " of '"
       << (home ? home->region.name : "?") << "' (" << bounds.end - bounds.begin << " bytes), the region the GlobalTensor was set on";
    if (r != nullptr && r != home) os << "; the bytes belong to '" << r->region.name << "'";
    Fail(check::kGmOutOfBounds, loc, os.str());
  }
  if (r != nullptr && p + bytes <= r->end) return *r;
  std::ostringstream os;
  os << api << ": GM " << dir << " of " << bytes << " bytes is outside every registered region; " << Describe(l, p);
  Fail(check::kGmOutOfBounds, loc, os.str());
}

}  // namespace

GmBounds GmRegionOf(const void* p) {
  BlockState* b = CurrentBlockOrNull();
  if (b == nullptr) return {};
  const auto addr = reinterpret_cast<uintptr_t>(p);
  // A pointer one past a region's end is the empty slice of a block with no work.
  LaunchState& l = *b->launch;
  RegionState* r = nullptr;
  for (RegionState& s : l.regions) {  // a view's own region first: views of one allocation overlap
    if (s.begin == addr) r = &s;
  }
  if (r == nullptr) r = Containing(l, addr);
  if (r == nullptr && addr > 0) r = Containing(l, addr - 1);
  return r ? GmBounds{r->begin, r->end, static_cast<int32_t>(r - l.regions.data())} : GmBounds{};
}

void GmRead(const void* p, uint64_t bytes, const GmBounds& bounds, const char* api, SrcLoc loc) {
  BlockState& b = Block(loc);
  if (bytes == 0) return;
  RegionState& r = Find(b, reinterpret_cast<uintptr_t>(p), bytes, bounds, api, "read", loc);
  CurrentPipe(b, Pipe::kS, api, loc);
  ShadowGm(b, r, reinterpret_cast<uintptr_t>(p) - r.begin, bytes, false);
  b.counters.gm_read_bytes += bytes;
}

void GmWrite(const void* p, uint64_t bytes, const GmBounds& bounds, const char* api, SrcLoc loc) {
  BlockState& b = Block(loc);
  if (bytes == 0) return;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  RegionState& r = Find(b, addr, bytes, bounds, api, "write", loc);
  if (r.region.kind == GmKind::kInput) {
    std::ostringstream os;
    os << api << ": writes " << bytes << " bytes into input region '" << r.region.name
       << "' at byte offset " << addr - r.begin;
    Fail(check::kGmReadOnly, loc, os.str());
  }
  const uint64_t first = addr - r.begin;
  if (!r.in_view.empty()) {
    for (uint64_t i = first; i < first + bytes; ++i) {
      if (r.in_view[i] != 0) continue;
      std::ostringstream os;
      os << api << ": GM write of " << bytes << " bytes at byte offset " << first << " of '" << r.region.name
         << "' touches byte offset " << i << ", a gap of the view (not one of its elements' bytes: another view's "
         << "rows or padding inside the allocation)";
      Fail(check::kGmOutOfBounds, loc, os.str());
    }
  }
  CurrentPipe(b, Pipe::kS, api, loc);
  // Two cores writing the same bytes with nothing ordering them is gm-cross-block-write; the
  // happens-before detector (pipes.cpp) decides, SyncAll and cross-core flags order.
  ShadowGm(b, r, first, bytes, true);
  const uint32_t mine = static_cast<uint32_t>(b.core + 1);  // who wrote each byte, for order-dependence reports
  for (uint64_t i = first; i < first + bytes; ++i) r.owner.At(i) = mine;
  b.counters.gm_write_bytes += bytes;
}

}  // namespace ascendc_cpu::detail
