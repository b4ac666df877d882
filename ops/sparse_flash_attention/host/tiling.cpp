// The launch tiling of sparse_flash_attention's AscendC kernel (MIX 1:2), from common's tiling
// cache. Work: the flat query rows, shared out evenly over min(rows, AICs) groups. Tiles: the
// largest tile_keys (a multiple of 16, at most kMaxTileKeys) whose cube operands fit the
// platform's L1 (q tile once, P tile once, two gathered kv tiles), L0C (two float32 tiles of
// m_pad x max(tile_keys, n_chunk)) and whose AIV buffers fit the UB; then the widest Q.K^T column
// chunk L0A / L0B hold twice, and the widest P.V output chunk (dividing D) L0B / L0C hold twice.
// Every size below mirrors an InitBuffer call of the kernel (kernel/sparse_flash_attention_cube.h,
// _vector.h, _check.h): a change there changes it here.
#include <algorithm>
#include <string>

#include "ascend_ops/cache.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/kernel_launch.hpp"
#include "ascend_ops/tensor.hpp"
#include "host/sparse_flash_attention.h"

namespace aop::sparse_flash_attention {
namespace {

constexpr int64_t kFractal = 16;
constexpr int64_t kMaxTileKeys = 256;  // positions per hand-off at most
constexpr int64_t kMaxChunk = 256;     // columns per Q.K^T Mmad / P.V Fixpipe at most
constexpr int64_t kMaxLoadRepeat = 255;  // LoadData2DParams::repeatTimes is a uint8_t
constexpr int64_t kMaxSoftmaxHeads = 16;
constexpr int64_t kMaxOutHeads = 8;
constexpr int64_t kMaxIndexChunk = 1024;
constexpr int64_t kMaxCombineHeads = 16;
constexpr int64_t kMaxInBuffers = 6;  // kernel/sparse_flash_attention_vector.h
constexpr int64_t kMaxSplits = 24;
constexpr double kSplitCost = 0.1;
// A unit's fixed cost in tiles, from the emulator's timing model: N1 = 32, K = 2048 on 24 AICs,
// B = 32 runs 74.8 us as 3 units of 6 tiles per AIC and 73.9 us as 4 units of 4 tiles (the AIC
// and AIVs run a group's units as one tile stream; before that, 97 and 112 us: 2 tiles per unit).
constexpr double kUnitCost = 1.7;
constexpr int64_t kUbAlign = 32;
constexpr int64_t kSlotAlign = 512;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
int64_t ub(int64_t bytes) { return round_up(bytes, kUbAlign); }

struct Shape {
  int64_t heads, head_dim, rope_dim, elem, kv_width, m_pad, heads_per_aiv;
};

// One AIV's UB (Vector::Init's InitBuffer calls).
// (The index chunks of a unit's count go through an S / O buffer: no UB of their own.)
int64_t vector_ub(const Shape& s, int64_t kt, int64_t sh, int64_t oh, int64_t in_buffers) {
  const int64_t hp = round_up(s.heads_per_aiv, 8), d = s.head_dim;
  return in_buffers * ub(std::max(sh * kt, oh * d) * 4)          // S or O chunks in (one queue)
         + 2 * ub(sh * kt * s.elem) + 2 * ub(oh * d * s.elem)     // P out, output rows out
         + ub(s.heads_per_aiv * d * 4)                   // acc
         + 2 * ub(2 * hp * 4) + 2 * ub(hp * 4) + ub(2 * hp * 4)  // max, sum x 2 (two units); zero, -inf; alpha x 2
         + ub(hp * 8 * 4)                                // each head's 8 sum lanes
         + ub(round_up(sh, 8) * 4) + ub(2 * round_up(2 * sh, 8) * 4)  // diff, reductions (2 chunks' maxima)
         + ub((round_up(kt, 64) + 64) * 4)               // reduction scratch (WorkFloats)
         + ub(kt * 4) + 3 * ub(sh * 8 * 4);              // mask; each head's max, diff, alpha as blocks
}

// The check phase's UB (DataCheck::Run: index chunks, a staging word, the chunk as float32 with
// ReduceMin's scratch; later every slot),
// released before the vector side's.
int64_t check_ub(int64_t block_dim, int64_t index_chunk) {
  const int64_t fast_floats = index_chunk + round_up(index_chunk, 64) + 64 + 8;  // DataCheck::FastFloats
  return std::max(index_chunk * 4 + 32 + fast_floats * 4, (2 * block_dim * kSfaCheckWords + kSfaCheckWords) * 8);
}

// The combine's UB (Combine::Init), after the vector side's is released.
int64_t combine_ub(int64_t heads, int64_t splits, int64_t head_dim, int64_t elem, int64_t buffers) {
  const int64_t hg = round_up(heads, 8);
  return 3 * ub(splits * hg * 4) + 3 * ub(hg * 4)                       // m, l, w; M, L, zeros
         + ub(heads * head_dim * 4) + buffers * ub(splits * heads * head_dim * 4)  // acc; the splits' accs
         + 2 * ub(heads * head_dim * elem);                              // output rows out
}

bool l1_fits(const Shape& s, int64_t kt, const aop_platform& p) {
  return (s.m_pad * (s.head_dim + s.rope_dim) + s.m_pad * kt + 2 * kt * s.kv_width) * s.elem <= p.l1_bytes;
}

SparseFlashAttentionTiling compute_kernel(const Args& a, const Dims& d, const aop_platform& p) {
  SparseFlashAttentionTiling t{};
  t.batch = d.batch;
  t.q_rows = d.q_rows;
  t.key_rows = d.key_rows;
  t.heads = d.heads_q;
  t.head_dim = d.head_dim;
  t.rope_dim = d.rope_dim;
  t.topk = d.topk;
  t.block_size = d.block_size;
  t.num_blocks = d.num_blocks;
  t.max_blocks = d.max_blocks;
  t.kv_block_stride = d.kv_block_stride;
  t.rope_block_stride = d.rope_block_stride;
  t.sparse_block_size = a.sparse_block_size;
  t.scale_value = static_cast<float>(a.scale_value);
  t.sparse_mode = static_cast<int32_t>(a.sparse_mode);
  t.layout_query = static_cast<int32_t>(a.layout_query);
  t.layout_kv = static_cast<int32_t>(a.layout_kv);
  t.dtype = a.query.dtype == AOP_DTYPE_BFLOAT16 ? 1 : 0;
  t.has_lengths_q = a.actual_seq_lengths_query ? 1 : 0;
  t.has_lengths_kv = a.actual_seq_lengths_kv ? 1 : 0;
  t.value_is_key = d.value_is_key ? 1 : 0;
  t.has_lse = a.softmax_max ? 1 : 0;

  Shape s{};
  s.heads = d.heads_q;
  s.head_dim = d.head_dim;
  s.rope_dim = d.rope_dim;
  s.elem = static_cast<int64_t>(aop_dtype_size(a.query.dtype));
  s.kv_width = d.head_dim + d.rope_dim + (d.value_is_key ? 0 : d.head_dim);
  s.m_pad = round_up(d.heads_q, kFractal);
  s.heads_per_aiv = (d.heads_q + 1) / 2;
  t.m_pad = static_cast<int32_t>(s.m_pad);
  t.heads_per_aiv = static_cast<int32_t>(s.heads_per_aiv);
  t.kv_width = static_cast<int32_t>(s.kv_width);
  t.value_col = static_cast<int32_t>(d.value_is_key ? 0 : d.head_dim + d.rope_dim);
  t.index_chunk = static_cast<int32_t>(std::min(round_up(d.topk, 8), kMaxIndexChunk));

  const int64_t rows = a.layout_query == Layout::kTND ? d.q_rows : d.batch * d.q_rows;
  const int64_t aics = std::max<int32_t>(1, p.aic_cores);

  // Head chunks of the AIV: S / P chunks a multiple of 8 heads (the alpha rows they write start
  // 32-byte aligned) unless one chunk holds all of an AIV's heads.
  const int64_t hpa = s.heads_per_aiv;
  const auto chunk_of = [&](int64_t most) { return hpa <= most ? std::max<int64_t>(hpa, 1) : most; };
  const int64_t width = d.head_dim + d.rope_dim;
  for (int64_t kt = kMaxTileKeys; kt >= kFractal && t.tile_keys == 0; kt -= kFractal) {
    if (!l1_fits(s, kt, p) || 2 * s.m_pad * kt * 4 > p.l0c_bytes || kt / kFractal > kMaxLoadRepeat) continue;
    // The largest P.V output chunk dividing D that L0B / L0C hold twice.
    int64_t nc = 0;
    for (int64_t c = std::min(kMaxChunk, d.head_dim); c >= kFractal && nc == 0; c -= kFractal) {
      if (d.head_dim % c == 0 && 2 * kt * c * s.elem <= p.l0b_bytes && 2 * s.m_pad * c * 4 <= p.l0c_bytes) nc = c;
    }
    // The widest Q.K^T column chunk L0A / L0B hold twice (one LoadData: repeats <= 255).
    int64_t kc = 0;
    for (int64_t c = std::min(kMaxChunk, round_up(width, kFractal)); c >= kFractal && kc == 0; c -= kFractal) {
      if (2 * s.m_pad * c * s.elem <= p.l0a_bytes && 2 * kt * c * s.elem <= p.l0b_bytes &&
          (c / kFractal) * (kt / kFractal) <= kMaxLoadRepeat) {
        kc = c;
      }
    }
    if (nc == 0 || kc == 0 || 2 * s.m_pad * kt * s.elem > p.l0a_bytes) continue;
    // Per buffer count, the widest chunks that fit the UB; of those, the most bytes in flight
    // ((buffers - 1) chunk copies: the copies are latency-bound), then the most buffers.
    int64_t sh = 0, oh = 0, bufs = 0, best_flight = 0;
    for (int64_t b = kMaxInBuffers; b >= 2; --b) {
      int64_t bsh = chunk_of(kMaxSoftmaxHeads), boh = chunk_of(kMaxOutHeads);
      while (vector_ub(s, kt, bsh, boh, b) > p.ub_bytes && (bsh > 8 || boh > 2)) {
        if (boh > 2) {
          boh /= 2;
        } else {
          bsh -= 8;
        }
      }
      const int64_t flight = (b - 1) * std::max(bsh * kt, boh * d.head_dim);
      if (vector_ub(s, kt, bsh, boh, b) <= p.ub_bytes && flight > best_flight) {
        best_flight = flight;
        bufs = b;
        sh = bsh;
        oh = boh;
      }
    }
    if (bufs == 0) continue;
    t.in_buffers = static_cast<int32_t>(bufs);
    t.tile_keys = static_cast<int32_t>(kt);
    t.k_chunk = static_cast<int32_t>(kc);
    t.n_chunk = static_cast<int32_t>(nc);
    t.softmax_heads = static_cast<int32_t>(sh);
    t.out_heads = static_cast<int32_t>(oh);
  }
  // Work: units of the flat query rows over the AICs. Each row's entries may be split over
  // several AICs (flash-decoding: the partials combined by the AIVs after a SyncAll) so that the
  // busiest AIC has the least work: ceil(rows * splits / AICs) units, each of
  // ceil(ceil(positions / splits) / tile_keys) tiles (a full row: K entries of sbs positions, at
  // most the longest batch's keys) plus kUnitCost tiles (a unit's q load and the cube / vector
  // pipeline's fill and drain), each split more costing kSplitCost of a tile (its partial's round
  // trip and share of the combine); at most one split per tile of a full row and kMaxSplits.
  const int64_t keys = a.layout_kv == Layout::kPA_BSND ? d.max_blocks * d.block_size : d.key_rows;  // act_kv at most
  const int64_t kt = std::max<int32_t>(t.tile_keys, 1);
  const int64_t positions = std::max<int64_t>(1, std::min(d.topk * a.sparse_block_size, keys));
  const int64_t tiles = (positions + kt - 1) / kt;
  int64_t splits = 1;
  double best = 0;
  for (int64_t sp = 1; sp <= std::min(tiles, kMaxSplits) && rows > 0; ++sp) {
    const int64_t unit_tiles = ((positions + sp - 1) / sp + kt - 1) / kt;
    const double per_core = static_cast<double>((rows * sp + aics - 1) / aics);
    const double cost =
        per_core * (static_cast<double>(unit_tiles) + kUnitCost) + kSplitCost * static_cast<double>(sp - 1);
    if (sp == 1 || cost < best) {
      best = cost;
      splits = sp;
    }
  }
  // The balanced split (row_tiles): the rows' R * tiles tiles laid end to end, AIC g taking
  // [g * R * tiles / A, (g + 1) * R * tiles / A), one unit per row its range meets (so no AIC
  // idles while another runs a unit more, e.g. 32 rows of 16 tiles on 24 AICs: 21 or 22 tiles
  // where the equal split gives 24 or 16). Taken where its cost (the busiest AIC's tiles, its
  // units' kUnitCost, kSplitCost per piece more of a row) is below the equal split's. Only with
  // fewer than two rows per AIC (decode): every row then goes through a partial and the combine,
  // which the cost does not weigh for many rows (prefill: whole rows balance within a row).
  int64_t row_tiles = 0, pieces = 0;
  if (rows > 0 && rows < 2 * aics && tiles > 1 && rows * tiles >= aics) {
    const int64_t total = rows * tiles;
    const auto start = [&](int64_t g) { return g * total / aics; };
    int64_t most_tiles = 0, most_units = 0, most_pieces = 1, run = 1, last_row = -1;
    for (int64_t g = 0; g < aics; ++g) {
      const int64_t lo = start(g), hi = start(g + 1);
      most_tiles = std::max(most_tiles, hi - lo);
      most_units = std::max(most_units, (hi - 1) / tiles - lo / tiles + 1);
      // a range starting inside a row (not at its first tile) adds a piece to that row
      if (g > 0 && lo % tiles != 0) {
        run = lo / tiles == last_row ? run + 1 : 2;
        last_row = lo / tiles;
        most_pieces = std::max(most_pieces, run);
      }
    }
    const double cost = static_cast<double>(most_tiles) + kUnitCost * static_cast<double>(most_units) +
                        kSplitCost * static_cast<double>(most_pieces - 1);
    if (most_pieces > 1 && cost < best) {
      row_tiles = tiles;
      pieces = most_pieces;
    }
  }
  if (row_tiles > 0) splits = pieces;
  const int64_t units = rows * splits;
  t.splits = static_cast<int32_t>(splits);
  t.row_tiles = static_cast<int32_t>(row_tiles);
  t.block_dim = static_cast<int32_t>(row_tiles > 0 ? aics : std::clamp<int64_t>(units, 1, aics));
  t.units_per_core = static_cast<int32_t>(row_tiles > 0 ? 0 : units / t.block_dim);
  t.cores_with_extra = static_cast<int32_t>(row_tiles > 0 ? 0 : units % t.block_dim);
  // The combine: the (row, head group) items spread over every AIV, at most kMaxCombineHeads heads each.
  // Two items' accs in UB (the next one's copy overlaps this one's work) where an AIV has two.
  const int64_t aivs = 2 * static_cast<int64_t>(t.block_dim);
  const auto combine_heads_of = [&](int64_t buffers) {
    int64_t hc = std::clamp<int64_t>((rows * d.heads_q + aivs - 1) / aivs, 1, std::min<int64_t>(d.heads_q, kMaxCombineHeads));
    while (hc > 1 && combine_ub(hc, splits, d.head_dim, s.elem, buffers) > p.ub_bytes) --hc;
    return hc;
  };
  int64_t combine_heads = combine_heads_of(1), combine_buffers = 1;
  if ((rows * ((d.heads_q + combine_heads - 1) / combine_heads) + aivs - 1) / aivs > 1) {
    combine_buffers = 2;
    combine_heads = combine_heads_of(2);
  }
  t.combine_heads = static_cast<int32_t>(combine_heads);
  t.combine_buffers = static_cast<int32_t>(combine_buffers);
  if (t.tile_keys == 0 || check_ub(t.block_dim, t.index_chunk) > p.ub_bytes ||
      (splits > 1 && combine_ub(t.combine_heads, splits, d.head_dim, s.elem, t.combine_buffers) > p.ub_bytes)) {
    throw aop::Error(AOP_VALUE_ERROR, "sparse_flash_attention: no kernel tiling fits " + std::string(p.soc) +
                                          " (UB " + std::to_string(p.ub_bytes) + ", L1 " + std::to_string(p.l1_bytes) +
                                          " bytes) for N1 = " + std::to_string(d.heads_q) +
                                          ", D = " + std::to_string(d.head_dim) + ", Dr = " + std::to_string(d.rope_dim));
  }
  t.s_slot_floats = d.heads_q * t.tile_keys;
  t.p_slot_elems = d.heads_q * t.tile_keys;
  t.o_slot_floats = d.heads_q * d.head_dim;
  t.workspace_per_aic =
      round_up((2 * t.s_slot_floats + 2 * t.o_slot_floats) * 4 + 2 * t.p_slot_elems * s.elem, kSlotAlign);
  // MIX 1:2: a check slot per AIV (two per AIC), then a verdict line per AIC
  t.slots_offset = round_up(static_cast<int64_t>(launch::check_slots_bytes(3 * static_cast<int64_t>(t.block_dim),
                                                                           kSfaCheckWords)),
                            kSlotAlign);
  t.partials_offset = t.slots_offset + t.block_dim * t.workspace_per_aic;
  t.partial_floats = splits > 1 ? d.heads_q * d.head_dim + 2 * round_up(d.heads_q, 8) : 0;
  t.entries_offset = t.partials_offset + round_up(units * t.partial_floats * 4, kSlotAlign);
  t.workspace_bytes = t.entries_offset + (splits > 1 ? round_up(rows * 4, kSlotAlign) : 0);
  return t;
}

}  // namespace

size_t kernel_workspace_bytes(const SparseFlashAttentionTiling& t) { return static_cast<size_t>(t.workspace_bytes); }

int64_t kernel_ub_bytes(const SparseFlashAttentionTiling& t) {
  Shape s{};
  s.heads = t.heads;
  s.head_dim = t.head_dim;
  s.rope_dim = t.rope_dim;
  s.elem = 2;
  s.kv_width = t.kv_width;
  s.m_pad = t.m_pad;
  s.heads_per_aiv = t.heads_per_aiv;
  return std::max({vector_ub(s, t.tile_keys, t.softmax_heads, t.out_heads, t.in_buffers),
                   check_ub(t.block_dim, t.index_chunk),
                   t.splits > 1 ? combine_ub(t.combine_heads, t.splits, t.head_dim, s.elem, t.combine_buffers) : 0});
}

SparseFlashAttentionTiling kernel_tiling(const Args& a, const Dims& d, const aop_platform& platform) {
  KeyBuilder key("sparse_flash_attention.kernel");
  key.add_tensor(TensorView(a.query))
      .add_tensor(TensorView(a.key))
      .add_tensor(TensorView(a.sparse_indices))
      .add_tensor(TensorView(*a.query_rope))
      .add_tensor(TensorView(*a.key_rope))
      .add_int(static_cast<int64_t>(a.layout_query))
      .add_int(static_cast<int64_t>(a.layout_kv))
      .add_int(d.batch)
      .add_int(d.max_blocks)
      .add_int(a.sparse_block_size)
      .add_int(a.sparse_mode)
      .add_float(a.scale_value)
      .add_bool(d.value_is_key)
      .add_bool(a.actual_seq_lengths_query.has_value())
      .add_bool(a.actual_seq_lengths_kv.has_value())
      .add_bool(a.softmax_max.has_value())
      .add_platform(platform);
  return tiling_cache().get_or_compute_pod<SparseFlashAttentionTiling>(key,
                                                                       [&] { return compute_kernel(a, d, platform); });
}

}  // namespace aop::sparse_flash_attention
