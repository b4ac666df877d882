// The CPU kernel: per (query row, block of heads), the selected positions in tiles of kTile keys:
// gather and widen the latent + rope rows (transposed for the logits, row-major for P.V),
// logits on the tile, online softmax in float32, P rounded to the input dtype, P.V accumulated
// in float32, one rounding of the output. The [rows, heads, K] logits never exist whole.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ascend_ops/error.hpp"
#include "ascend_ops/parallel.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/attend_bf16.h"
#include "host/batches.h"
#include "host/sparse_flash_attention.h"
#include "host/tile_math.h"

namespace aop::sparse_flash_attention {
namespace {

constexpr int64_t kTile = 64;          // keys per tile, a multiple of kKeyVector
constexpr int64_t kHeadBlock = 128;    // heads per work item at most
constexpr int64_t kItemsPerThread = 4; // split heads further until there are this many items per thread
// bfloat16 path: rows are split into runs of positions until there are kMinItems work items,
// runs of at least kMinRun positions. From the shape only, never the thread count: the results
// must not depend on it.
constexpr int64_t kMinItems = 16;
constexpr int64_t kMinRun = 256;

// ---- 16-bit storage <-> float32 ----

float bf16_bits_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t float_to_bf16_bits(float f) {  // round to nearest even; NaN stays NaN
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float load(aop_dtype dtype, const void* base, int64_t i) {
  switch (dtype) {
    case AOP_DTYPE_BFLOAT16: return bf16_bits_to_float(static_cast<const uint16_t*>(base)[i]);
    case AOP_DTYPE_FLOAT16: return static_cast<float>(static_cast<const _Float16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

// dst[i] = element (at + i) of base widened to float32, i < n.
void widen(aop_dtype dtype, const void* base, int64_t at, int64_t n, float* dst) {
  if (n == 0) return;  // (Dr = 0: base may be null)
  switch (dtype) {
    case AOP_DTYPE_BFLOAT16: {
      const uint16_t* src = static_cast<const uint16_t*>(base) + at;
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t u = static_cast<uint32_t>(src[i]) << 16;
        std::memcpy(dst + i, &u, sizeof u);
      }
      break;
    }
    case AOP_DTYPE_FLOAT16: widen_f16(static_cast<const _Float16*>(base) + at, n, dst); break;
    default: std::memcpy(dst, static_cast<const float*>(base) + at, static_cast<size_t>(n) * sizeof(float));
  }
}

// x rounded to the dtype and back (the probabilities the cube would read).
float round_to(aop_dtype dtype, float x) {
  switch (dtype) {
    case AOP_DTYPE_BFLOAT16: return bf16_bits_to_float(float_to_bf16_bits(x));
    case AOP_DTYPE_FLOAT16: return static_cast<float>(static_cast<_Float16>(x));
    default: return x;
  }
}

void store(aop_dtype dtype, void* base, int64_t i, float x) {
  switch (dtype) {
    case AOP_DTYPE_BFLOAT16: static_cast<uint16_t*>(base)[i] = float_to_bf16_bits(x); break;
    case AOP_DTYPE_FLOAT16: static_cast<_Float16*>(base)[i] = static_cast<_Float16>(x); break;
    default: static_cast<float*>(base)[i] = x;
  }
}

// Where logical position p of a batch lives: the row offset (in elements, N2 = 1) into key /
// value and into key_rope.
struct KvRows {
  const Args* a;
  const Dims* d;
  const Batch* batch;
  int64_t b;
  void locate(int64_t p, int64_t* kv, int64_t* rope) const {
    if (a->layout_kv == Layout::kPA_BSND) {
      const int64_t block = read_index(*a->block_table, b * d->max_blocks + p / d->block_size);
      const int64_t slot = p % d->block_size;
      *kv = block * d->kv_block_stride + slot * d->head_dim;
      *rope = block * d->rope_block_stride + slot * d->rope_dim;
    } else {
      const int64_t row = a->layout_kv == Layout::kTND ? batch->kv_begin + p : b * d->key_rows + p;
      *kv = row * d->head_dim;
      *rope = row * d->rope_dim;
    }
  }
};

// The positions row r attends (the contract's P), in order, repeats kept.
void selected_positions(const Args& a, const Dims& d, const Batch& x, int64_t r, std::vector<int64_t>& P) {
  P.clear();
  const int64_t thr = visible_threshold(a.sparse_mode, x, r);
  const int64_t n = entries_read(thr, d.topk, a.sparse_block_size);
  const int32_t* idx = static_cast<const int32_t*>(a.sparse_indices.data) + (x.q_begin + r) * d.topk;
  const int64_t sbs = a.sparse_block_size;
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] == -1) break;
    const int64_t lo = static_cast<int64_t>(idx[i]) * sbs;
    if (lo >= thr) continue;
    for (int64_t p = lo; p < std::min(lo + sbs, thr); ++p) P.push_back(p);
  }
}

struct Scratch {
  std::vector<int64_t> positions;
  std::vector<float> q, kt, v, logits, acc, m, l, alpha, row;
};

// One work item: row `row` (batch-relative r) for heads [h0, h1).
void attend(const Args& a, const Dims& d, const Batch& x, int64_t b, int64_t r, int64_t h0, int64_t h1, Scratch& s) {
  const aop_dtype dtype = a.query.dtype;
  const int64_t D = d.head_dim, Dr = d.rope_dim, W = D + Dr, H = h1 - h0, N1 = d.heads_q;
  const int64_t row = x.q_begin + r;
  const float scale = static_cast<float>(a.scale_value);
  selected_positions(a, d, x, r, s.positions);
  const int64_t count = static_cast<int64_t>(s.positions.size());

  void* out = a.attention_out.data;
  float* lse_max = a.softmax_max ? static_cast<float*>(a.softmax_max->data) : nullptr;
  float* lse_sum = a.softmax_sum ? static_cast<float*>(a.softmax_sum->data) : nullptr;
  // BSND: [B, 1, S1, G] at (b, r); TND: [1, T1, G] at the flat row: both row * N1.
  const int64_t lse_at = row * N1;
  if (count == 0) {
    for (int64_t i = row * N1 * D + h0 * D; i < row * N1 * D + h1 * D; ++i) store(dtype, out, i, 0.0f);
    if (lse_max) {
      std::fill(lse_max + lse_at + h0, lse_max + lse_at + h1, 0.0f);
      std::fill(lse_sum + lse_at + h0, lse_sum + lse_at + h1, 0.0f);
    }
    return;
  }

  s.q.resize(static_cast<size_t>(H * W));
  for (int64_t h = 0; h < H; ++h) {
    const int64_t head = h0 + h;
    for (int64_t c = 0; c < D; ++c) s.q[h * W + c] = load(dtype, a.query.data, (row * N1 + head) * D + c);
    for (int64_t c = 0; c < Dr; ++c) s.q[h * W + D + c] = load(dtype, a.query_rope->data, (row * N1 + head) * Dr + c);
  }
  s.kt.assign(static_cast<size_t>(W * kTile), 0.0f);
  s.v.resize(static_cast<size_t>(kTile * D));
  s.row.resize(static_cast<size_t>(Dr));
  s.logits.resize(static_cast<size_t>(H * kTile));
  s.acc.assign(static_cast<size_t>(H * D), 0.0f);
  s.m.assign(static_cast<size_t>(H), -std::numeric_limits<float>::infinity());
  s.l.assign(static_cast<size_t>(H), 0.0f);
  s.alpha.resize(static_cast<size_t>(H));

  const KvRows where{&a, &d, &x, b};
  for (int64_t t0 = 0; t0 < count; t0 += kTile) {
    const int64_t T = std::min(kTile, count - t0);
    const int64_t TP = (T + kKeyVector - 1) / kKeyVector * kKeyVector;
    // Gather: K transposed [W][TP] (padding keys zero), V row-major [T][D].
    for (int64_t j = 0; j < TP; ++j) {
      if (j >= T) {
        for (int64_t c = 0; c < W; ++c) s.kt[c * TP + j] = 0.0f;
        continue;
      }
      int64_t kv = 0, rope = 0;
      where.locate(s.positions[static_cast<size_t>(t0 + j)], &kv, &rope);
      // Widen the row once (one dtype switch per row), then transpose it into kt.
      float* vj = s.v.data() + j * D;
      widen(dtype, a.key.data, kv, D, vj);
      for (int64_t c = 0; c < D; ++c) s.kt[c * TP + j] = vj[c];
      if (!d.value_is_key) widen(dtype, a.value.data, kv, D, vj);
      widen(dtype, a.key_rope->data, rope, Dr, s.row.data());
      for (int64_t c = 0; c < Dr; ++c) s.kt[(D + c) * TP + j] = s.row[static_cast<size_t>(c)];
    }
    tile_logits(s.q.data(), H, s.kt.data(), TP, W, scale, s.logits.data());
    // Online softmax: new running max, rescale factor, unnormalised probabilities rounded to
    // the input dtype for P.V (the sum keeps them unrounded).
    for (int64_t h = 0; h < H; ++h) {
      float* lg = s.logits.data() + h * TP;
      float m = s.m[h];
      for (int64_t j = 0; j < T; ++j) m = std::max(m, lg[j]);
      s.alpha[h] = std::exp(s.m[h] - m);
      float sum = 0.0f;
      for (int64_t j = 0; j < T; ++j) {
        const float e = std::exp(lg[j] - m);
        sum += e;
        lg[j] = round_to(dtype, e);
      }
      s.l[h] = s.l[h] * s.alpha[h] + sum;
      s.m[h] = m;
      // tile_accumulate reads p with stride T: compact the row in place.
      if (TP != T) std::memmove(s.logits.data() + h * T, lg, static_cast<size_t>(T) * sizeof(float));
    }
    tile_accumulate(s.acc.data(), H, D, s.alpha.data(), s.logits.data(), T, s.v.data(), D);
  }
  for (int64_t h = 0; h < H; ++h) {
    const float inv = 1.0f / s.l[h];
    const int64_t base = (row * N1 + h0 + h) * D;
    for (int64_t c = 0; c < D; ++c) store(dtype, out, base + c, s.acc[h * D + c] * inv);
    if (lse_max) {
      lse_max[lse_at + h0 + h] = s.m[h];
      lse_sum[lse_at + h0 + h] = s.l[h];
    }
  }
}

// Writes row `row`'s outputs from its softmax state (heads padded to Hp, acc rows of lda).
void finish_row(const Args& a, const Dims& d, int64_t row, const float* m, const float* l, const float* acc,
                int64_t lda) {
  const int64_t N1 = d.heads_q, D = d.head_dim;
  float* lse_max = a.softmax_max ? static_cast<float*>(a.softmax_max->data) : nullptr;
  float* lse_sum = a.softmax_sum ? static_cast<float*>(a.softmax_sum->data) : nullptr;
  uint16_t* out = static_cast<uint16_t*>(a.attention_out.data) + row * N1 * D;
  for (int64_t h = 0; h < N1; ++h) {
    const bool empty = m[h] == -std::numeric_limits<float>::infinity();
    const float inv = empty ? 0.0f : 1.0f / l[h];
    for (int64_t c = 0; c < D; ++c) out[h * D + c] = float_to_bf16_bits(empty ? 0.0f : acc[h * lda + c] * inv);
    if (lse_max) {
      lse_max[row * N1 + h] = empty ? 0.0f : m[h];
      lse_sum[row * N1 + h] = empty ? 0.0f : l[h];
    }
  }
}

// The bfloat16 path (host/attend_bf16.cpp): work items are (row, run of positions), every head of
// the row at once, so each gathered row feeds all N1 heads; runs of a row are merged in a fixed
// order afterwards (m = max, l and acc rescaled by exp(m_run - m) and summed).
void run_bf16(const Args& a, const Dims& d, const std::vector<Batch>& bs,
              const std::vector<std::pair<int64_t, int64_t>>& rows, AttendBf16Fn attend_fn) {
  const Bf16Shape shape{d.heads_q, d.head_dim, d.rope_dim};
  const int64_t N1 = d.heads_q, D = d.head_dim, Dr = d.rope_dim, Hp = shape.Hp(), Dp = shape.Dp();
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  if (n_rows == 0) return;
  const int64_t most = d.topk * a.sparse_block_size;  // positions a row can have at most
  int64_t runs = 1;
  if (n_rows < kMinItems) {
    runs = std::max<int64_t>(1, std::min((kMinItems + n_rows - 1) / n_rows, (most + kMinRun - 1) / kMinRun));
  }
  const int64_t run_len = ((most + runs - 1) / runs + kBf16Tile - 1) / kBf16Tile * kBf16Tile;
  runs = (most + run_len - 1) / run_len;
  const int64_t part_size = 2 * Hp + Hp * D;  // m, l, acc [Hp][D]
  std::vector<float> parts(runs > 1 ? static_cast<size_t>(n_rows * runs * part_size) : 0);

  const auto* key = static_cast<const uint16_t*>(a.key.data);
  const auto* value = static_cast<const uint16_t*>(a.value.data);
  const auto* key_rope = a.key_rope ? static_cast<const uint16_t*>(a.key_rope->data) : nullptr;
  const auto* query = static_cast<const uint16_t*>(a.query.data);
  const auto* query_rope = a.query_rope ? static_cast<const uint16_t*>(a.query_rope->data) : nullptr;
  const float scale = static_cast<float>(a.scale_value);
  aop::parallel_for(n_rows * runs, 1, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> positions;
    std::vector<const uint16_t*> kp, rp, vp;
    std::vector<uint32_t> qp(static_cast<size_t>(bf16_qp_size(shape))), pp(static_cast<size_t>(kBf16Tile / 2 * Hp)),
        vpack(static_cast<size_t>(kBf16Tile / 2 * Dp));
    std::vector<float> logits(static_cast<size_t>(kBf16Tile * Hp)), alpha(static_cast<size_t>(Hp)),
        m(static_cast<size_t>(Hp)), l(static_cast<size_t>(Hp)), acc(static_cast<size_t>(bf16_acc_size(shape)));
    const std::vector<uint16_t> zero(static_cast<size_t>(std::max(D, Dr) + 32), 0);
    std::vector<const char*> lines(static_cast<size_t>(bf16_lines_size(shape)));
    const Bf16Buffers buf{qp.data(), logits.data(), pp.data(), vpack.data(), alpha.data(), zero.data(),
                          lines.data(), m.data(), l.data(), acc.data()};
    for (int64_t item = begin; item < end; ++item) {
      const auto [b, r] = rows[static_cast<size_t>(item / runs)];
      const Batch& x = bs[static_cast<size_t>(b)];
      const int64_t row = x.q_begin + r, run = item % runs;
      selected_positions(a, d, x, r, positions);
      const int64_t count = static_cast<int64_t>(positions.size());
      const int64_t p0 = std::min(count, run * run_len), n = std::min(count, p0 + run_len) - p0;
      kp.resize(static_cast<size_t>(n));
      rp.resize(static_cast<size_t>(n));
      vp.resize(static_cast<size_t>(n));
      const KvRows where{&a, &d, &x, b};
      for (int64_t j = 0; j < n; ++j) {
        int64_t kv = 0, rope = 0;
        where.locate(positions[static_cast<size_t>(p0 + j)], &kv, &rope);
        kp[static_cast<size_t>(j)] = key + kv;
        rp[static_cast<size_t>(j)] = key_rope ? key_rope + rope : zero.data();
        vp[static_cast<size_t>(j)] = value + kv;
      }
      attend_fn(shape, query + row * N1 * D, query_rope ? query_rope + row * N1 * Dr : zero.data(), kp.data(),
                rp.data(), d.value_is_key ? kp.data() : vp.data(), n, scale, buf);
      if (runs == 1) {
        finish_row(a, d, row, m.data(), l.data(), acc.data(), Dp);
        continue;
      }
      float* part = parts.data() + item * part_size;
      std::copy_n(m.data(), Hp, part);
      std::copy_n(l.data(), Hp, part + Hp);
      for (int64_t h = 0; h < Hp; ++h) std::copy_n(acc.data() + h * Dp, D, part + 2 * Hp + h * D);
    }
  });
  if (runs == 1) return;
  aop::parallel_for(n_rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> m(static_cast<size_t>(Hp)), l(static_cast<size_t>(Hp)), acc(static_cast<size_t>(Hp * D));
    for (int64_t i = begin; i < end; ++i) {
      const auto [b, r] = rows[static_cast<size_t>(i)];
      const float* first = parts.data() + i * runs * part_size;
      for (int64_t h = 0; h < Hp; ++h) {
        float mh = -std::numeric_limits<float>::infinity();
        for (int64_t u = 0; u < runs; ++u) mh = std::max(mh, first[u * part_size + h]);
        m[static_cast<size_t>(h)] = mh;
        float lh = 0.0f;
        float* ah = acc.data() + h * D;
        std::fill_n(ah, D, 0.0f);
        if (mh != -std::numeric_limits<float>::infinity()) {
          for (int64_t u = 0; u < runs; ++u) {  // runs in order: the same sums for any thread count
            const float* part = first + u * part_size;
            if (part[h] == -std::numeric_limits<float>::infinity()) continue;
            const float w = std::exp(part[h] - mh);
            lh += part[Hp + h] * w;
            const float* src = part + 2 * Hp + h * D;
            for (int64_t c = 0; c < D; ++c) ah[c] += src[c] * w;
          }
        }
        l[static_cast<size_t>(h)] = lh;
      }
      finish_row(a, d, bs[static_cast<size_t>(b)].q_begin + r, m.data(), l.data(), acc.data(), D);
    }
  });
}

}  // namespace

void run_cpu(const Args& a) {
  const Dims d = validate(a);
  if (a.query.device.type != AOP_DEVICE_CPU) {
    throw aop::Error(AOP_VALUE_ERROR, "sparse_flash_attention: the cpu backend needs tensors on cpu, query is on " +
                                          device_string(a.query.device));
  }
  check_data(a, d);
  const std::vector<Batch> bs = batches(a, d);
  const aop_dtype dtype = a.query.dtype;
  const int64_t N1 = d.heads_q, D = d.head_dim;

  // Rows no batch covers (BSND rows >= act_q, TND rows past the last end): zeros.
  const int64_t total_rows = a.layout_query == Layout::kTND ? d.q_rows : d.batch * d.q_rows;
  std::vector<char> covered(static_cast<size_t>(total_rows), 0);
  std::vector<std::pair<int64_t, int64_t>> rows;  // (batch, r) of every covered row
  for (int64_t b = 0; b < d.batch; ++b) {
    const Batch& x = bs[static_cast<size_t>(b)];
    for (int64_t r = 0; r < x.q_len; ++r) {
      covered[static_cast<size_t>(x.q_begin + r)] = 1;
      rows.emplace_back(b, r);
    }
  }
  for (int64_t row = 0; row < total_rows; ++row) {
    if (covered[static_cast<size_t>(row)]) continue;
    for (int64_t i = row * N1 * D; i < (row + 1) * N1 * D; ++i) store(dtype, a.attention_out.data, i, 0.0f);
    if (a.softmax_max) {
      std::fill_n(static_cast<float*>(a.softmax_max->data) + row * N1, N1, 0.0f);
      std::fill_n(static_cast<float*>(a.softmax_sum->data) + row * N1, N1, 0.0f);
    }
  }

  if (dtype == AOP_DTYPE_BFLOAT16 && d.head_dim % 2 == 0 && d.rope_dim % 2 == 0) {
    if (const AttendBf16Fn fn = select_attend_bf16()) {
      run_bf16(a, d, bs, rows, fn);
      return;
    }
  }

  // Work items: (row, head block). Few rows (decode) are split by heads so every thread works;
  // each block re-gathers the row's keys, which the last-level cache then serves.
  const int64_t threads = std::max<int32_t>(1, aop_num_threads());
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  int64_t head_block = std::min<int64_t>(N1, kHeadBlock);
  while (head_block > 4 && n_rows * ((N1 + head_block - 1) / head_block) < threads * kItemsPerThread) head_block /= 2;
  const int64_t blocks = (N1 + head_block - 1) / head_block;
  aop::parallel_for(n_rows * blocks, 1, [&](int64_t begin, int64_t end) {
    Scratch s;
    for (int64_t item = begin; item < end; ++item) {
      const auto [b, r] = rows[static_cast<size_t>(item / blocks)];
      const int64_t h0 = item % blocks * head_block;
      attend(a, d, bs[static_cast<size_t>(b)], b, r, h0, std::min(N1, h0 + head_block), s);
    }
  });
}

}  // namespace aop::sparse_flash_attention
