// The CPU kernel's running top-k (host/cpu_kernel.cpp): candidates as one 64-bit integer each.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

namespace aop::lightning_indexer {

// A candidate (score, index) packed so that ascending integer order is the spec's order:
// larger score first, ties to the smaller index. The high half is the score's bits mapped to
// an order-preserving integer and inverted; the low half the index. Sorting and selecting
// plain integers is much cheaper than a two-field comparison. -0.0 is taken as +0.0 (they
// compare equal as floats, so ties between them go to the smaller index too).
using Cand = uint64_t;

inline Cand make_cand(float score, int64_t index) {
  const float s = score + 0.0f;  // -0.0 -> +0.0
  uint32_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  const uint32_t ascending = bits & 0x80000000u ? ~bits : bits | 0x80000000u;
  return static_cast<uint64_t>(~ascending) << 32 | static_cast<uint32_t>(index);
}

inline int32_t cand_index(Cand c) { return static_cast<int32_t>(static_cast<uint32_t>(c)); }

inline float cand_score(Cand c) {
  const uint32_t ascending = ~static_cast<uint32_t>(c >> 32);
  const uint32_t bits = ascending & 0x80000000u ? ascending & 0x7fffffffu : ~ascending;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Keys arrive in increasing index order, so once the buffer has been pruned a new key can
// only enter with a score strictly above the current K-th best. NaN scores never enter.
// The buffer holds 2K candidates; a full buffer is pruned to the best K by selection.
class RunningTopK {
 public:
  void reset(Cand* buffer, int64_t k) {
    buf_ = buffer;
    k_ = k;
    n_ = 0;
    pruned_ = false;
    threshold_ = 0.0f;
  }

  // scores[i] is key first + i.
  void push(const float* scores, int64_t count, int64_t first) {
    int64_t i = 0;
    for (; i < count && !pruned_; ++i) {
      if (scores[i] == scores[i]) add(scores[i], first + i);
    }
    for (; i < count; ++i) {
      if (scores[i] > threshold_) add(scores[i], first + i);
    }
  }

  // Sorts the kept candidates (best first); returns how many (<= k).
  int64_t finish() {
    if (n_ > k_) prune();
    std::sort(buf_, buf_ + n_);
    return n_;
  }

 private:
  void add(float score, int64_t index) {
    buf_[n_++] = make_cand(score, index);
    if (n_ == 2 * k_) prune();
  }
  void prune() {
    std::nth_element(buf_, buf_ + (k_ - 1), buf_ + n_);
    n_ = k_;
    threshold_ = cand_score(buf_[k_ - 1]);
    pruned_ = true;
  }

  Cand* buf_ = nullptr;
  int64_t k_ = 0;
  int64_t n_ = 0;
  bool pruned_ = false;
  float threshold_ = 0.0f;
};

}  // namespace aop::lightning_indexer
