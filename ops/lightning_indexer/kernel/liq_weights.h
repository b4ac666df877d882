// lightning_indexer_quant, AIV side, before the check phase: wq[r, h] = fp16(weights[r, h] *
// query_dequant_scale[r, h]) for every query row (the contract's NPU numerics: the product rounded
// to float16), into the workspace as [q rows, N1] float16, which the AICs load as the A matrix of
// the head reduction. The rows are shared evenly over the launch's 2 * block_dim AIVs; the check
// phase's SyncAll<true> (kernel/lightning_indexer_check.h) orders every AIV's writes before any
// AIV sets the verdict flag, which each AIC awaits before its first load of wq.
#pragma once
#include "kernel_operator.h"
#include "kernel/liq_tiling.h"
#include "kernel/lightning_indexer_work.h"

namespace lightning_indexer {

class WeightScales {
 public:
  __aicore__ inline void Run(GM_ADDR weights, GM_ADDR query_scale, GM_ADDR wq, const LiqTiling& t) {
    const LightningIndexerTiling& li = t;
    const int64_t q_total = li.layout_query == 1 ? li.q_rows : li.batch * li.q_rows;
    const int64_t aivs = 2 * static_cast<int64_t>(li.block_dim), me = AscendC::GetBlockIdx();
    const int64_t per = q_total / aivs, extra = q_total % aivs;
    const int64_t r0 = me * per + Min(me, extra), r1 = r0 + per + (me < extra ? 1 : 0);
    if (r1 <= r0) return;
    const int64_t n1 = li.heads, n1_pad = t.n1_pad;
    AscendC::GlobalTensor<half> w, qs, out;
    w.SetGlobalBuffer((__gm__ half*)weights, q_total * n1);
    qs.SetGlobalBuffer((__gm__ half*)query_scale, q_total * n1);
    out.SetGlobalBuffer((__gm__ half*)wq, q_total * n1);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> w_buf, s_buf;
    const uint32_t bytes = static_cast<uint32_t>(t.wq_chunk_rows * n1_pad * sizeof(half));
    pipe.InitBuffer(w_buf, bytes);
    pipe.InitBuffer(s_buf, bytes);
    const LocalTensor<half> wu = w_buf.Get<half>(), su = s_buf.Get<half>();
    for (int64_t r = r0; r < r1; r += t.wq_chunk_rows) {
      const int64_t rows = Min(t.wq_chunk_rows, r1 - r);
      // Each row one 32-byte aligned block of n1_pad in UB, its padding zero (both factors).
      const AscendC::DataCopyExtParams in{static_cast<uint16_t>(rows), static_cast<uint32_t>(n1 * sizeof(half)), 0, 0,
                                          0};
      const AscendC::DataCopyPadExtParams<half> pad{true, 0, static_cast<uint8_t>(n1_pad - n1), static_cast<half>(0)};
      AscendC::DataCopyPad(wu, w[r * n1], in, pad);
      AscendC::DataCopyPad(su, qs[r * n1], in, pad);
      Sync<AscendC::HardEvent::MTE2_V>(pipe);
      AscendC::Mul(wu, wu, su, static_cast<int32_t>(rows * n1_pad));
      Sync<AscendC::HardEvent::V_MTE3>(pipe);
      AscendC::DataCopyPad(out[r * n1], wu, in);
      Sync<AscendC::HardEvent::MTE3_MTE2>(pipe);  // the next rows' loads overwrite wu
    }
    pipe.Destroy();
  }

 private:
  template <AscendC::HardEvent kEvent>
  __aicore__ inline static void Sync(AscendC::TPipe& pipe) {
    const int32_t id = static_cast<int32_t>(pipe.FetchEventID(kEvent));
    AscendC::SetFlag<kEvent>(id);
    AscendC::WaitFlag<kEvent>(id);
  }
};

}  // namespace lightning_indexer
