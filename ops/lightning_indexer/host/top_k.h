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
// only enter with a score strictly above the worst kept candidate. NaN scores never enter.
// The buffer holds 2K candidates; a full buffer is pruned to about 1.25K (at least K) by a
// pivot taken from a sorted sample and one branch-free pass, much cheaper than an exact
// selection; an unlucky pivot (fewer than K kept) falls back to nth_element. The kept set
// always holds the best K of the keys seen, since only candidates with K better ones leave.
// Sorts c[0 .. n) ascending; scratch holds n. LSD radix sort by bytes, skipping the bytes all
// candidates share (e.g. the index's high bytes): no data-dependent branches, unlike a
// comparison sort on scores in random order.
inline void radix_sort(Cand* c, int64_t n, Cand* scratch) {
  if (n < 64) {
    std::sort(c, c + n);
    return;
  }
  uint32_t count[8][256] = {};
  for (int64_t i = 0; i < n; ++i) {
    for (int b = 0; b < 8; ++b) ++count[b][(c[i] >> (8 * b)) & 0xff];
  }
  Cand* from = c;
  Cand* to = scratch;
  for (int b = 0; b < 8; ++b) {
    if (count[b][(c[0] >> (8 * b)) & 0xff] == static_cast<uint32_t>(n)) continue;  // one value: no-op pass
    uint32_t offset[256];
    uint32_t sum = 0;
    for (int v = 0; v < 256; ++v) {
      offset[v] = sum;
      sum += count[b][v];
    }
    for (int64_t i = 0; i < n; ++i) to[offset[(from[i] >> (8 * b)) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  if (from != c) std::copy(from, from + n, c);
}

class RunningTopK {
 public:
  void reset(Cand* buffer, int64_t k) {
    buf_ = buffer;
    k_ = k;
    n_ = 0;
    pruned_ = false;
    threshold_ = 0.0f;
  }

  // scores[i] is key first + i. Branch-free: every score is written, the count advances only
  // for those that enter (accepted scores come in random order: a branch would mispredict).
  void push(const float* scores, int64_t count, int64_t first) {
    for (int64_t i = 0; i < count;) {
      const int64_t piece = std::min(count - i, 2 * k_ - n_);  // room left: n_ stays < 2K
      if (!pruned_) {
        for (int64_t j = i; j < i + piece; ++j) {
          buf_[n_] = make_cand(scores[j], first + j);
          n_ += scores[j] == scores[j];
        }
      } else {
        for (int64_t j = i; j < i + piece; ++j) {
          buf_[n_] = make_cand(scores[j], first + j);
          n_ += scores[j] > threshold_;
        }
      }
      i += piece;
      if (n_ == 2 * k_) prune(k_ + k_ / 4);
    }
  }

  // Sorts the kept candidates (best first); returns how many (<= k).
  int64_t finish() {
    if (n_ > k_) {
      prune(k_ + k_ / 8);
      if (n_ > k_) std::nth_element(buf_, buf_ + (k_ - 1), buf_ + n_);
      n_ = std::min(n_, k_);
    }
    radix_sort(buf_, n_, buf_ + k_);  // the buffer's upper half is free now
    return n_;
  }

 private:
  static constexpr int64_t kSample = 256;
  static constexpr int64_t kMinSampled = 1024;  // below this many candidates, nth_element

  // Keeps at least k_ candidates, about `target`, and sets the threshold.
  void prune(int64_t target) {
    Cand pivot = 0;
    int64_t kept = 0;
    if (n_ >= kMinSampled) {
      Cand sample[kSample], scratch[kSample];
      for (int64_t s = 0; s < kSample; ++s) sample[s] = buf_[s * n_ / kSample];
      radix_sort(sample, kSample, scratch);
      pivot = sample[std::min(kSample - 1, target * kSample / n_)];
      for (int64_t i = 0; i < n_; ++i) kept += buf_[i] <= pivot;
    }
    if (kept >= k_ && kept < n_) {
      int64_t w = 0;
      for (int64_t i = 0; i < n_; ++i) {
        const Cand c = buf_[i];
        buf_[w] = c;
        w += c <= pivot;
      }
      n_ = w;
    } else {
      std::nth_element(buf_, buf_ + (k_ - 1), buf_ + n_);
      n_ = k_;
      pivot = buf_[k_ - 1];
    }
    threshold_ = cand_score(pivot);
    pruned_ = true;
  }

  Cand* buf_ = nullptr;
  int64_t k_ = 0;
  int64_t n_ = 0;
  bool pruned_ = false;
  float threshold_ = 0.0f;
};

}  // namespace aop::lightning_indexer
