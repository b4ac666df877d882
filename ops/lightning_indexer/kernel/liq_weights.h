// lightning_indexer_quant, AIV side, before the check phase: wq[r, h] = fp16(weights[r, h] *
// query_dequant_scale[r, h]) (the contract's NPU numerics: the product rounded to float16) for
// the query rows of the group's units, into the group's region of the workspace ([wq_group_rows, N1]
// float16: splits of one row may belong to several groups, and cores never write the same bytes),
// which the group's AIC loads as the A matrix of the head reduction. With one query row per work
// item the item is the flat query row, so the rows follow from the tiling alone (no length is read
// before the check). The group's two AIVs take half of the rows each, then both set kWqReady
// (mode 2): the AIC waits for it (WqReady) before its first load of wq, while the AIVs check the
// owned rows' query scales and products (ScaleCheck::QueryRows, kernel/liq_scale_check.h: after each
// chunk's copy out, the last one after the flag) and go on to the check phase.
#pragma once
#include "kernel_operator.h"
#include "aop_kernel/core_share.h"
#include "kernel/liq_scale_check.h"
#include "kernel/liq_tiling.h"
#include "kernel/lightning_indexer_check.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

constexpr uint16_t kWqReady = 9;  // AIVs -> AIC: the group's wq rows are in GM (0..8: the handshake and verdict)

// The flat query rows [begin, end) of a group's units (every unit of item i is row i); the group
// owns rows [begin, owned_end): those whose last split is among its units (each row has one
// owner, a later group's rows come later: the rows whose scales this group checks).
struct GroupRows {
  int64_t begin, end, owned_end;
};
__aicore__ inline GroupRows RowsOfGroup(const LightningIndexerTiling& t, int64_t group) {
  const aop_kernel::CoreShare share = aop_kernel::ShareOf(group, t.items_per_core, t.cores_with_extra, t.halves ? 2 : 1);
  GroupRows r;
  r.begin = share.begin / t.splits;
  r.end = share.end > share.begin ? (share.end - 1) / t.splits + 1 : r.begin;
  r.owned_end = Max(share.end / t.splits, r.begin);
  return r;
}

// The AIC's side: waits for kWqReady once per launch (every AIC, also one without units).
class WqReady {
 public:
  __aicore__ inline void Wait() {
    if (waited_) return;
    AscendC::CrossCoreWaitFlag(kWqReady);
    waited_ = true;
  }

 private:
  bool waited_ = false;
};

class WeightScales {
 public:
  __aicore__ inline void Run(GM_ADDR weights, GM_ADDR query_scale, GM_ADDR wq, const LiqTiling& t,
                             ScaleCheck& check) {
    const LightningIndexerTiling& li = t;
    const int64_t q_total = QueryRowsTotal(li);
    const int64_t group = AscendC::GetBlockIdx() / AscendC::GetTaskRatio(), sub = AscendC::GetSubBlockIdx();
    const GroupRows g = RowsOfGroup(li, group);
    const int64_t share0 = (g.end - g.begin + 1) / 2;  // AIV 0's rows
    const int64_t r0 = Min(sub == 0 ? g.begin : g.begin + share0, q_total);
    const int64_t r1 = Min(sub == 0 ? g.begin + share0 : g.end, q_total);
    if (r1 > r0) {
      AscendC::GlobalTensor<half> region;  // row r at (r - g.begin) * N1
      region.SetGlobalBuffer((__gm__ half*)wq + group * t.wq_group_rows * li.heads, t.wq_group_rows * li.heads);
      Compute(weights, query_scale, region[(r0 - g.begin) * li.heads], t, q_total, r0, r1,
              Min(g.owned_end, q_total), check);
    } else {
      SetReady();
    }
  }

 private:
  __aicore__ inline static void SetReady() {
    using namespace AscendC;  // pipe_t (PIPE_MTE3) is global with CANN, in AscendC in the emulator
    CrossCoreSetFlag<2, PIPE_MTE3>(kWqReady);  // after this AIV's copies out
  }

  // Rows [r0, r1) into out (row r0 first), then the checks of those below own_end.
  __aicore__ inline void Compute(GM_ADDR weights, GM_ADDR query_scale, const AscendC::GlobalTensor<half>& out,
                                 const LiqTiling& t, int64_t q_total, int64_t r0, int64_t r1, int64_t own_end,
                                 ScaleCheck& check) {
    const int64_t n1 = t.heads, n1_pad = t.n1_pad;
    AscendC::GlobalTensor<half> w, qs;
    w.SetGlobalBuffer((__gm__ half*)weights, q_total * n1);
    qs.SetGlobalBuffer((__gm__ half*)query_scale, q_total * n1);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> check_ub, w_buf, s_buf, p_buf, f1_buf, f2_buf, f3_buf, out_buf;
    // Above the check phase's UB, so that its first copies need not wait for this pass's last
    // copy out: the check runs while wq is computed (the check's SyncAll orders both before the
    // pipes built later).
    pipe.InitBuffer(check_ub, static_cast<uint32_t>(DataCheck::UbBytes(2 * static_cast<int64_t>(t.block_dim))));
    const uint32_t bytes = static_cast<uint32_t>(t.wq_chunk_rows * n1_pad * sizeof(half));
    pipe.InitBuffer(w_buf, bytes);
    pipe.InitBuffer(s_buf, bytes);
    pipe.InitBuffer(p_buf, bytes);
    pipe.InitBuffer(f1_buf, 2 * bytes);  // the checks' float32 scratch
    pipe.InitBuffer(f2_buf, 2 * bytes);
    pipe.InitBuffer(f3_buf, 2 * bytes);
    pipe.InitBuffer(out_buf, 32);
    const LocalTensor<half> wu = w_buf.Get<half>(), su = s_buf.Get<half>(), pu = p_buf.Get<half>();
    for (int64_t r = r0; r < r1; r += t.wq_chunk_rows) {
      const int64_t rows = Min(t.wq_chunk_rows, r1 - r);
      // Each row one 32-byte aligned block of n1_pad in UB, its padding zero (both factors).
      const AscendC::DataCopyExtParams in{static_cast<uint16_t>(rows), static_cast<uint32_t>(n1 * sizeof(half)), 0, 0,
                                          0};
      const AscendC::DataCopyPadExtParams<half> pad{true, 0, static_cast<uint8_t>(n1_pad - n1), static_cast<half>(0)};
      AscendC::DataCopyPad(wu, w[r * n1], in, pad);
      AscendC::DataCopyPad(su, qs[r * n1], in, pad);
      Sync<AscendC::HardEvent::MTE2_V>(pipe);
      AscendC::Mul(pu, wu, su, static_cast<int32_t>(rows * n1_pad));
      Sync<AscendC::HardEvent::V_MTE3>(pipe);
      AscendC::DataCopyPad(out[(r - r0) * n1], pu, in);
      const bool last = r + t.wq_chunk_rows >= r1;
      if (last) SetReady();
      const int64_t owned = Min(rows, own_end - r);
      if (owned > 0) {
        check.QueryRows(pipe, wu, su, f1_buf.Get<float>(), f2_buf.Get<float>(), f3_buf.Get<float>(),
                        out_buf.Get<float>(), r, owned);
      }
      if (!last) {  // the next rows' loads overwrite what the copy out, the checks and their walks read
        Sync<AscendC::HardEvent::MTE3_MTE2>(pipe);
        Sync<AscendC::HardEvent::V_MTE2>(pipe);
        Sync<AscendC::HardEvent::S_MTE2>(pipe);
        Sync<AscendC::HardEvent::S_V>(pipe);
      }
    }
    pipe.Destroy();
  }

  template <AscendC::HardEvent kEvent>
  __aicore__ inline static void Sync(AscendC::TPipe& pipe) {
    const int32_t id = static_cast<int32_t>(pipe.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }
};

}  // namespace lightning_indexer
