// Launch tiling of the int8 write (kv_cache_dtype "int8"): the cores, and the UB chunk.
// Split by tokens, every core loads the whole scale / offset tables; with a per-channel table
// that is 2 x H*D floats per core (k_scale, v_scale), 32 copies at T = 64. A sliced launch splits
// the cores into token groups x channel groups instead: a core loads only its channel slice of a
// per-channel table (and the cores of token group 0 check theirs), so the launch reads one copy
// per token group. A small cost model (bytes moved and the slowest core's cycles) picks the split.
#include <algorithm>
#include <optional>

#include "ascend_ops/kernel_launch.hpp"
#include "host/tiling_quant.h"

namespace aop::reshape_and_cache {
namespace {

constexpr int64_t kBurstAlign = 32;
constexpr int64_t kMaxBursts = 4095;  // DataCopyPad blockCount limit

// The cost model (cycles of the busiest core), fitted to the emulator's timing model of a 910B
// (common/ascendc_cpu README, "The timing model"; H = 8, D = 128, float16, T = 64: splits 1 x 4
// to 32 x 1 within 3% of the model): it ranks splits, it does not predict device time.
constexpr int64_t kLaunchCycles = 3240;    // the launch head, 1.8 µs at 1.8 GHz
constexpr int64_t kFixedCycles = 3000;     // the slots, the tables and core 0's check (DMA latencies), the last DMA out
constexpr int64_t kExchangeCycles = 1550;  // the check's SyncAll and the codes' DMA back (block_dim > 1)
constexpr int64_t kBatchCycles = 50;       // per batch and tensor: the DMA in and the instructions' starts
constexpr int64_t kElemsPerCycle = 5;      // the conversion's vector steps over a core's elements
constexpr int64_t kPieceCycles = 4;        // a written token's DMA out, per piece (cache group) and tensor
// Of the splits whose estimated time (with the launch head) is within this factor of the
// fastest's, the one with the fewest GM bytes.
constexpr double kTimeSlack = 1.25;

// The UB chunk (elements per buffer) with the fixed part for `block_dim` cores: the per-channel
// tables (one per scale / offset given), the staging of a raw scale and the scale check's two-table
// verdict buffer; then per chunk element two input buffers, two int8 output buffers, the float32
// work buffer and the float16 step of the float32 -> int8 conversion.
int64_t ub_chunk(const ReshapeAndCacheTiling& t, const aop_platform& platform, int64_t block_dim) {
  int64_t tables = 0;
  for (int i = 0; i < 4; ++i) tables += t.scale_dtype[i] >= 0 ? 1 : 0;
  const int64_t fixed = rac_check_ub_bytes(block_dim) + (tables + 3) * t.table_elems * 4;
  const int64_t in_bytes = static_cast<int64_t>(aop_dtype_size(static_cast<aop_dtype>(t.in_dtype)));
  const int64_t per_elem = kRacBufferNum * (in_bytes + 1) + 4 + 2;
  return (platform.ub_bytes - fixed) / per_elem / kBurstAlign * kBurstAlign;
}

// GM bytes of the per-channel tables (the raw scales / offsets of H*D elements).
int64_t per_channel_table_bytes(const ReshapeAndCacheTiling& t) {
  int64_t bytes = 0;
  for (int i = 0; i < 4; ++i) {
    const int64_t row = i % 2 == 0 ? t.key_row_elems : t.value_row_elems;
    if (t.scale_dtype[i] < 0 || t.scale_numel[i] != row) continue;
    bytes += row * (t.scale_dtype[i] == kRacFloat32 ? 4 : 2);
  }
  return bytes;
}

// Whether a layout's groups (heads) start on 32-element slices: each piece of a slice is then
// whole 32-byte blocks in UB and whole NZ chunks in the cache.
bool slices_fit(const RacCacheLayout& l, int64_t row, int64_t slice) {
  return slice > 0 && row % slice == 0 && slice % kBurstAlign == 0 && (l.group_elems % kBurstAlign == 0 || l.group_elems == row);
}

struct Split {
  int64_t chans, groups, batch;
  int64_t bytes, cycles;
};

// Written pieces (cache groups) of one token's slice of `slice` elements of a row.
int64_t pieces(const RacCacheLayout& l, int64_t row, int64_t slice) {
  return l.group_elems >= row ? 1 : (slice + l.group_elems - 1) / l.group_elems + 1;
}

// The split into `groups` token groups x `chans` channel groups, or none when the rows do not
// slice so (kernel/reshape_and_cache_quant.h: 32-element slices of at most 2040 floats).
std::optional<Split> sliced_split(const ReshapeAndCacheTiling& t, const aop_platform& platform, int64_t chans,
                                  int64_t groups, int64_t table_bytes) {
  const int64_t key_slice = t.key_row_elems / chans;
  const int64_t value_slice = t.has_value != 0 ? t.value_row_elems / chans : 0;
  const int64_t slice = std::max(key_slice, value_slice);
  if (key_slice * chans != t.key_row_elems || value_slice * chans != t.value_row_elems ||
      slice > kRacMaxRepeatRowFloats || !slices_fit(t.key_layout, t.key_row_elems, key_slice) ||
      (t.has_value != 0 && !slices_fit(t.value_layout, t.value_row_elems, value_slice))) {
    return std::nullopt;
  }
  Split s{chans, groups, 0, 0, 0};
  const int64_t block_dim = groups * chans;
  const int64_t most = (t.num_tokens + groups - 1) / groups;  // tokens of the busiest core
  s.batch = std::min({ub_chunk(t, platform, block_dim) / slice, kRacMaxRepeat, kMaxBursts, std::max<int64_t>(most, 1)});
  if (s.batch < 1) return std::nullopt;
  const int64_t batches = (most + s.batch - 1) / s.batch;
  const int64_t tensors = t.has_value != 0 ? 2 : 1;
  const int64_t elems = most * (key_slice + value_slice);
  const int64_t outs = most * (pieces(t.key_layout, t.key_row_elems, key_slice) +
                               (t.has_value != 0 ? pieces(t.value_layout, t.value_row_elems, value_slice) : 0));
  s.cycles = kLaunchCycles + kFixedCycles + (block_dim > 1 ? kExchangeCycles : 0) + batches * tensors * kBatchCycles +
             elems / kElemsPerCycle + outs * kPieceCycles;
  // the tables (each core its slice: one copy per token group), the check's exchange, each core
  // its group's slots
  s.bytes = groups * table_bytes + launch::check_exchange_bytes(block_dim) + chans * t.num_tokens * t.slot_bytes;
  return s;
}

// The splits of at most aiv_cores cores: every channel count that slices the rows, with every
// token-group count cores_for_units gives; the fewest bytes among those near the fastest.
std::optional<Split> best_split(const ReshapeAndCacheTiling& t, const aop_platform& platform, int64_t table_bytes) {
  const int64_t cores = std::max<int64_t>(platform.aiv_cores, 1);
  std::optional<Split> best;
  int64_t fastest = -1;
  for (int pass = 0; pass < 2; ++pass) {  // 0: the fastest estimate; 1: the pick
    for (int64_t chans = 1; chans <= cores; ++chans) {
      int64_t last = 0;
      for (int64_t k = 1; k <= cores / chans; ++k) {
        const int64_t groups = launch::cores_for_units(t.num_tokens, k);
        if (groups == last) continue;
        last = groups;
        const std::optional<Split> s = sliced_split(t, platform, chans, groups, table_bytes);
        if (!s) break;  // the slices do not depend on the groups
        if (pass == 0) {
          if (fastest < 0 || s->cycles < fastest) fastest = s->cycles;
        } else if (static_cast<double>(s->cycles) <= kTimeSlack * static_cast<double>(fastest) &&
                   (!best || s->bytes < best->bytes || (s->bytes == best->bytes && s->cycles < best->cycles))) {
          best = s;
        }
      }
    }
  }
  return best;
}

}  // namespace

void quant_tiling(ReshapeAndCacheTiling& t, const aop_platform& platform) {
  const int64_t row = std::max(t.key_row_elems, t.value_row_elems);
  t.table_elems = (row + 7) / 8 * 8;
  t.chan_groups = 1;
  t.sliced = 0;
  const int64_t table_bytes = per_channel_table_bytes(t);
  const std::optional<Split> best = table_bytes > 0 ? best_split(t, platform, table_bytes) : std::nullopt;
  if (best) {
    t.sliced = 1;
    t.chan_groups = static_cast<int32_t>(best->chans);
    t.block_dim = static_cast<int32_t>(best->groups * best->chans);
    t.tokens_per_core = static_cast<int32_t>(t.num_tokens / best->groups);
    t.cores_with_extra = static_cast<int32_t>(t.num_tokens % best->groups);
    t.key_slice_elems = t.key_row_elems / best->chans;
    t.value_slice_elems = t.has_value != 0 ? t.value_row_elems / best->chans : 0;
    t.batch_tokens = best->batch;
    // at least a row (as the token split's chunk): core 0's scale check uses the work buffer as
    // the reduction's scratch over a whole table
    const int64_t rows = std::min(ub_chunk(t, platform, t.block_dim), (row + kBurstAlign - 1) / kBurstAlign * kBurstAlign);
    t.chunk_elems = static_cast<int32_t>(std::max(best->batch * std::max(t.key_slice_elems, t.value_slice_elems), rows));
    return;
  }
  // split by tokens (the caller's block_dim), a row (or a burst of it) per chunk
  int64_t chunk = std::min(ub_chunk(t, platform, t.block_dim), (row + kBurstAlign - 1) / kBurstAlign * kBurstAlign);
  if (t.key_layout.chunk_elems < t.key_layout.group_elems || t.value_layout.chunk_elems < t.value_layout.group_elems) {
    chunk = std::min<int64_t>(chunk, kMaxBursts * kBurstAlign);  // one 32-byte burst per chunk
  }
  t.chunk_elems = static_cast<int32_t>(std::max<int64_t>(kBurstAlign, chunk));
}

}  // namespace aop::reshape_and_cache
