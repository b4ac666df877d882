// lightning_indexer_quant: where should dequantisation and the head-weighted ReLU sum run? A
// study kernel (MIX 1:2, not the op's kernel): every group streams its share of keys against one
// decode query row (N1 = 64, D = 128), in Mmad tiles of 128 keys, handing blocks of up to 512
// keys to its two AIVs (256 each) through lightning_indexer's slot handshake (2 slots), the next
// key tile's load issued before the current tile is used (as the float kernel does). It leaves
// ks * sum_h wq[h] * a[h, j] per key in GM, by one of three routes:
//   kVector (0): AIC int8 Mmad q.k^T -> Fixpipe DEQF16 + reluPre -> GM slot [64 x 512] half; the
//                AIVs Cast to float, weight each head (one Mul per 64 keys, a repeat per head)
//                and add the heads pairwise (the float kernel's head sum), then * ks.
//   kCube (1):   AIC int8 Mmad k.q^T -> Fixpipe DEQF16 + reluPre into L1 (NZ: the ZN fractals of
//                the next B) -> LoadData -> fp16 Mmad wq . a^T (m = 16, fp32 accumulation) ->
//                Fixpipe row 0 -> GM slot [512] float; the AIVs only multiply by ks (Huawei's
//                arch22 route).
//   kFloat (2):  the float op's route, for comparison: fp16 q / k, fp32 Mmad, Fixpipe ReLU -> GM
//                slot [64 x 512] float, the same vector head sum in the queue buffer, no key scale.
// None sorts: the running top-k is the same work in every route and is left out.
#pragma once
#include "kernel_operator.h"
#include "kernel/lightning_indexer_handshake.h"

namespace head_sum_study {

using namespace AscendC;
constexpr uint32_t kHeads = 64, kDim = 128, kTile = 128, kBlock = 512, kAivKeys = kBlock / 2;

struct StudyTiling {
  uint32_t route;           // 0 kVector, 1 kCube, 2 kFloat
  uint32_t keys_per_group;  // a multiple of kTile
};

class Aic {
 public:
  __aicore__ inline void Run(GM_ADDR q, GM_ADDR k, GM_ADDR q16, GM_ADDR k16, GM_ADDR wq16, GM_ADDR ws,
                             const StudyTiling& t) {
    const int64_t g = GetBlockIdx();
    tiles_ = t.keys_per_group / kTile;
    handshake_.Init(2);
    if (t.route == 1) {
      GlobalTensor<int8_t> qg, kg;
      qg.SetGlobalBuffer((__gm__ int8_t*)q);
      kg.SetGlobalBuffer((__gm__ int8_t*)k + g * int64_t{t.keys_per_group} * kDim);
      wsf_.SetGlobalBuffer((__gm__ float*)ws + g * 2 * kBlock);
      wg_.SetGlobalBuffer((__gm__ half*)wq16);
      RunCube(qg, kg);
    } else if (t.route == 0) {
      GlobalTensor<int8_t> qg, kg;
      GlobalTensor<half> slots;
      qg.SetGlobalBuffer((__gm__ int8_t*)q);
      kg.SetGlobalBuffer((__gm__ int8_t*)k + g * int64_t{t.keys_per_group} * kDim);
      slots.SetGlobalBuffer((__gm__ half*)ws + g * 2 * kHeads * kBlock);
      RunVector<int8_t, int32_t, half>(qg, kg, slots);
    } else {
      GlobalTensor<half> qg, kg;
      GlobalTensor<float> slots;
      qg.SetGlobalBuffer((__gm__ half*)q16);
      kg.SetGlobalBuffer((__gm__ half*)k16 + g * int64_t{t.keys_per_group} * kDim);
      slots.SetGlobalBuffer((__gm__ float*)ws + g * 2 * kHeads * kBlock);
      RunVector<half, float, float>(qg, kg, slots);
    }
    handshake_.Drain();
  }

 private:
  template <class T>
  __aicore__ inline void Issue(TQue<TPosition::A1, 2>& kl1, const GlobalTensor<T>& kg, int64_t n) {
    LocalTensor<T> k1 = kl1.AllocTensor<T>();
    DataCopy(k1, kg[n * kTile * kDim], Nd2NzParams(1, kTile, kDim, 0, kDim, kTile, 1, 0));
    kl1.EnQue(k1);
  }

  // T int8_t: DEQF16 into a half slot; T half (the float op's route): fp32 ReLU into a float slot.
  template <class T, class C, class S>
  __aicore__ inline void RunVector(const GlobalTensor<T>& qg, const GlobalTensor<T>& kg, const GlobalTensor<S>& slots) {
    constexpr uint32_t c0 = 32 / sizeof(T);
    TQue<TPosition::B1, 1> ql1;
    TQue<TPosition::A1, 2> kl1;  // keys, NZ = the ZN fractals of k^T (an L1 queue; its position is L1 either way)
    TQue<TPosition::A2, 1> ql0;
    TQue<TPosition::B2, 2> kl0;
    TQue<TPosition::CO1, 2> cq;
    pipe_.InitBuffer(ql1, 1, kHeads * kDim * sizeof(T));
    pipe_.InitBuffer(kl1, 2, kTile * kDim * sizeof(T));
    pipe_.InitBuffer(ql0, 1, kHeads * kDim * sizeof(T));
    pipe_.InitBuffer(kl0, 2, kTile * kDim * sizeof(T));
    pipe_.InitBuffer(cq, 2, kHeads * kTile * sizeof(C));
    LocalTensor<T> q1 = ql1.AllocTensor<T>();
    DataCopy(q1, qg, Nd2NzParams(1, kHeads, kDim, 0, kDim, kHeads, 1, 0));
    ql1.EnQue(q1);
    Issue(kl1, kg, 0);
    q1 = ql1.DeQue<T>();
    LocalTensor<T> q0 = ql0.AllocTensor<T>();
    for (uint32_t i = 0; i < kHeads / 16; ++i) {  // NZ -> Zz, 16 x c0 fractals
      LoadData(q0[i * kDim * 16], q1, LoadData2DParams(i, kDim / c0, kHeads / 16, 0, 0, false, 0));
    }
    ql1.FreeTensor(q1);
    ql0.EnQue(q0);
    q0 = ql0.DeQue<T>();
    int32_t slot = 0;
    for (int64_t n = 0; n < tiles_; ++n) {
      LocalTensor<T> k1 = kl1.DeQue<T>();
      if (n + 1 < tiles_) Issue(kl1, kg, n + 1);
      LocalTensor<T> k0 = kl0.AllocTensor<T>();
      LoadData(k0, k1, LoadData2DParams(0, (kTile / 16) * (kDim / c0), 1, 0, 0, false, 0));
      kl1.FreeTensor(k1);
      kl0.EnQue(k0);
      k0 = kl0.DeQue<T>();
      LocalTensor<C> c = cq.AllocTensor<C>();
      MmadParams mp;
      mp.m = kHeads;
      mp.n = kTile;
      mp.k = kDim;
      Mmad(c, q0, k0, mp);
      kl0.FreeTensor(k0);
      cq.EnQue(c);
      c = cq.DeQue<C>();
      const int64_t in_block = n % (kBlock / kTile);
      if (in_block == 0) slot = handshake_.Acquire();
      FixpipeParamsV220 fp(kTile, kHeads, kHeads, kBlock, true);
      if constexpr (sizeof(T) == 1) {
        fp.quantPre = QuantMode_t::DEQF16;
        fp.deqScalar = 0x3a800000;  // 2^-10 keeps |dot| <= 2^21 inside float16
      }
      Fixpipe(slots[static_cast<uint64_t>(slot) * kHeads * kBlock + in_block * kTile], c, fp);
      cq.FreeTensor(c);
      if (in_block + 1 == kBlock / kTile || n + 1 == tiles_) handshake_.Publish(slot);
    }
    ql0.FreeTensor(q0);
  }

  __aicore__ inline void RunCube(const GlobalTensor<int8_t>& qg, const GlobalTensor<int8_t>& kg) {
    TQue<TPosition::B1, 1> ql1;
    TQue<TPosition::A1, 1> wl1;
    TQue<TPosition::A1, 2> kl1;
    TBuf<TPosition::C1> al1;  // the DEQF16 scores of two tiles
    TBuf<TPosition::B2> ql0;  // q^T and wq stay for the whole run: buffers, one MTE1 -> M flag
    TBuf<TPosition::A2> wl0;
    TQue<TPosition::A2, 2> kl0;
    TQue<TPosition::B2, 2> al0;
    TQue<TPosition::CO1, 2> c1q, c2q;
    pipe_.InitBuffer(ql1, 1, kHeads * kDim);
    pipe_.InitBuffer(wl1, 1, 16 * kHeads * sizeof(half));
    pipe_.InitBuffer(kl1, 2, kTile * kDim);
    pipe_.InitBuffer(al1, 2 * kTile * kHeads * sizeof(half));
    pipe_.InitBuffer(ql0, kHeads * kDim);
    pipe_.InitBuffer(wl0, 16 * kHeads * sizeof(half));
    pipe_.InitBuffer(kl0, 2, kTile * kDim);
    pipe_.InitBuffer(al0, 2, kTile * kHeads * sizeof(half));
    pipe_.InitBuffer(c1q, 2, kTile * kHeads * sizeof(int32_t));
    pipe_.InitBuffer(c2q, 2, 16 * kTile * sizeof(float));
    // q^T as B (the NZ fractals of q are the ZN fractals of q^T), wq as A (row 0; rows 1..15 zero)
    LocalTensor<int8_t> q1 = ql1.AllocTensor<int8_t>();
    DataCopy(q1, qg, Nd2NzParams(1, kHeads, kDim, 0, kDim, kHeads, 1, 0));
    LocalTensor<half> w1 = wl1.AllocTensor<half>();
    DataCopy(w1, wg_, Nd2NzParams(1, 16, kHeads, 0, kHeads, 16, 1, 0));
    ql1.EnQue(q1);
    wl1.EnQue(w1);
    IssueZz(kl1, kg, 0);
    q1 = ql1.DeQue<int8_t>();
    w1 = wl1.DeQue<half>();
    const LocalTensor<int8_t> q0 = ql0.Get<int8_t>();
    LoadData(q0, q1, LoadData2DParams(0, (kHeads / 16) * (kDim / 32), 1, 0, 0, false, 0));
    const LocalTensor<half> w0 = wl0.Get<half>();
    LoadData(w0, w1, LoadData2DParams(0, kHeads / 16, 1, 0, 0, false, 0));
    ql1.FreeTensor(q1);
    wl1.FreeTensor(w1);
    const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::MTE1_M));
    SetFlag<HardEvent::MTE1_M>(id);
    WaitFlag<HardEvent::MTE1_M>(id);
    a_all_ = al1.Get<half>();
    // Software pipelined: tile n + 1's first matmul (into the other L1 buffer) is issued before
    // tile n's head reduction, so the in-order M pipe never waits on the FIX -> MTE1 round trip.
    Stage1(kl1, kl0, c1q, kg, q0, 0);
    int32_t slot = 0;
    for (int64_t n = 0; n < tiles_; ++n) {
      if (n + 1 < tiles_) Stage1(kl1, kl0, c1q, kg, q0, n + 1);
      const int32_t b = static_cast<int32_t>(n % 2);
      WaitFlag<HardEvent::FIX_MTE1>(b);
      LocalTensor<half> a0 = al0.AllocTensor<half>();
      LoadData(a0, a_all_[static_cast<uint32_t>(b) * kTile * kHeads],
               LoadData2DParams(0, (kHeads / 16) * (kTile / 16), 1, 0, 0, false, 0));
      SetFlag<HardEvent::MTE1_FIX>(b);
      al0.EnQue(a0);
      a0 = al0.DeQue<half>();
      LocalTensor<float> c2 = c2q.AllocTensor<float>();
      MmadParams mp2;
      mp2.m = 16;
      mp2.n = kTile;
      mp2.k = kHeads;
      Mmad(c2, w0, a0, mp2);
      al0.FreeTensor(a0);
      c2q.EnQue(c2);
      c2 = c2q.DeQue<float>();
      const int64_t in_block = n % (kBlock / kTile);
      if (in_block == 0) slot = handshake_.Acquire();
      Fixpipe(wsf_[static_cast<uint64_t>(slot) * kBlock + in_block * kTile], c2, FixpipeParamsV220(kTile, 1, 16, kTile, false));
      c2q.FreeTensor(c2);
      if (in_block + 1 == kBlock / kTile || n + 1 == tiles_) handshake_.Publish(slot);
    }
    for (int64_t n = tiles_ > 2 ? tiles_ - 2 : 0; n < tiles_; ++n) WaitFlag<HardEvent::MTE1_FIX>(static_cast<int32_t>(n % 2));
  }

  // Keys of tile n straight into Zz (A) in L1: each 16-key row block an ND matrix of its own
  // (ndNum), its 32-byte column blocks 16 rows apart, the blocks kDim / 32 fractals apart.
  __aicore__ inline void IssueZz(TQue<TPosition::A1, 2>& kl1, const GlobalTensor<int8_t>& kg, int64_t n) {
    LocalTensor<int8_t> k1 = kl1.AllocTensor<int8_t>();
    DataCopy(k1, kg[n * kTile * kDim],
             Nd2NzParams(kTile / 16, 16, kDim, 16 * kDim, kDim, 16, 1, static_cast<uint16_t>(kDim * 16)));
    kl1.EnQue(k1);
  }

  // Tile n: keys (A, Zz) . q^T (B) in int8 -> L0C int32 [128 keys x 64 heads] -> Fixpipe DEQF16 +
  // reluPre into L1 buffer n % 2 (NZ: the ZN fractals of the head reduction's B).
  __aicore__ inline void Stage1(TQue<TPosition::A1, 2>& kl1, TQue<TPosition::A2, 2>& kl0, TQue<TPosition::CO1, 2>& c1q,
                                const GlobalTensor<int8_t>& kg, const LocalTensor<int8_t>& q0, int64_t n) {
    const int32_t b = static_cast<int32_t>(n % 2);
    LocalTensor<int8_t> k1 = kl1.DeQue<int8_t>();
    if (n + 1 < tiles_) IssueZz(kl1, kg, n + 1);
    LocalTensor<int8_t> k0 = kl0.AllocTensor<int8_t>();
    LoadData(k0, k1, LoadData2DParams(0, (kTile / 16) * (kDim / 32), 1, 0, 0, false, 0));
    kl1.FreeTensor(k1);
    kl0.EnQue(k0);
    k0 = kl0.DeQue<int8_t>();
    LocalTensor<int32_t> c1 = c1q.AllocTensor<int32_t>();
    MmadParams mp;
    mp.m = kTile;
    mp.n = kHeads;
    mp.k = kDim;
    Mmad(c1, k0, q0, mp);
    kl0.FreeTensor(k0);
    c1q.EnQue(c1);
    c1 = c1q.DeQue<int32_t>();
    if (n >= 2) WaitFlag<HardEvent::MTE1_FIX>(b);  // tile n - 2's LoadData is done with the buffer
    FixpipeParamsV220 fp(kHeads, kTile, kTile, kTile, true, QuantMode_t::DEQF16, 0x3a800000, 1, 0, 0, 0);
    Fixpipe<half, int32_t, CFG_NZ>(a_all_[static_cast<uint32_t>(b) * kTile * kHeads], c1, fp);
    c1q.FreeTensor(c1);
    SetFlag<HardEvent::FIX_MTE1>(b);
  }

  TPipe pipe_;
  LocalTensor<half> a_all_;
  GlobalTensor<half> wg_;
  GlobalTensor<float> wsf_;
  lightning_indexer::CubeHandshake handshake_;
  int64_t tiles_ = 0;
};

class Aiv {
 public:
  __aicore__ inline void Run(GM_ADDR ks, GM_ADDR wq8, GM_ADDR ws, GM_ADDR out, const StudyTiling& t) {
    const int64_t g = GetBlockIdx() / 2;
    v_ = GetSubBlockIdx();
    route_ = t.route;
    ksg_.SetGlobalBuffer((__gm__ half*)ks + g * int64_t{t.keys_per_group});
    outg_.SetGlobalBuffer((__gm__ float*)out + g * int64_t{t.keys_per_group});
    if (route_ == 0) wsh_.SetGlobalBuffer((__gm__ half*)ws + g * 2 * kHeads * kBlock);
    if (route_ == 2) wsf_.SetGlobalBuffer((__gm__ float*)ws + g * 2 * kHeads * kBlock);
    if (route_ == 1) wsf_.SetGlobalBuffer((__gm__ float*)ws + g * 2 * kBlock);
    const uint32_t in_bytes = route_ == 1 ? kAivKeys * 4 : route_ == 0 ? kHeads * kAivKeys * 2 : kHeads * kAivKeys * 4;
    pipe_.InitBuffer(in_, 2, in_bytes);
    pipe_.InitBuffer(ksq_, 2, kAivKeys * sizeof(half));
    pipe_.InitBuffer(outq_, 2, kAivKeys * sizeof(float));
    pipe_.InitBuffer(s_, route_ == 0 ? kHeads * kAivKeys * sizeof(float) : 32);
    pipe_.InitBuffer(ksf_, kAivKeys * sizeof(float));
    pipe_.InitBuffer(w_, kHeads * 8 * sizeof(float));
    if (route_ != 1) {  // the weights as 32-byte blocks of 8 copies (prepared by the host here)
      GlobalTensor<float> wg;
      wg.SetGlobalBuffer((__gm__ float*)wq8);
      DataCopy(w_.Get<float>(), wg, kHeads * 8);
      const int32_t id = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
      SetFlag<HardEvent::MTE2_V>(id);
      WaitFlag<HardEvent::MTE2_V>(id);
    }
    handshake_.Init(2);
    for (int64_t j0 = 0; j0 < t.keys_per_group; j0 += kBlock) {
      const int64_t n = t.keys_per_group - j0 < kBlock ? t.keys_per_group - j0 : kBlock;
      Block(j0, n);
    }
  }

 private:
  // Keys [j0, j0 + n) of the group (n a multiple of 128): this AIV takes [j0 + v * n / 2, + n / 2).
  __aicore__ inline void Block(int64_t j0, int64_t n) {
    const uint32_t mine = static_cast<uint32_t>(n / 2);
    const uint64_t col = static_cast<uint64_t>(v_) * mine;  // within the slot
    const int64_t first = j0 + static_cast<int64_t>(col);
    const int32_t slot = handshake_.Await();
    LocalTensor<half> k16;
    if (route_ != 2) {  // the float op has no key scales
      k16 = ksq_.AllocTensor<half>();
      DataCopy(k16, ksg_[first], mine);
      ksq_.EnQue(k16);
    }
    LocalTensor<float> res;
    if (route_ == 2) {
      LocalTensor<float> a = in_.AllocTensor<float>();
      DataCopyParams p(kHeads, static_cast<uint16_t>(mine * 4 / 32), static_cast<uint16_t>((kBlock - mine) * 4 / 32), 0);
      DataCopy(a, wsf_[static_cast<uint64_t>(slot) * kHeads * kBlock + col], p);
      handshake_.Release(slot);
      in_.EnQue(a);
      a = in_.DeQue<float>();
      WeightAndSum(a, mine);
      res = a;
    } else if (route_ == 0) {
      LocalTensor<half> a = in_.AllocTensor<half>();
      DataCopyParams p(kHeads, static_cast<uint16_t>(mine * 2 / 32), static_cast<uint16_t>((kBlock - mine) * 2 / 32), 0);
      DataCopy(a, wsh_[static_cast<uint64_t>(slot) * kHeads * kBlock + col], p);
      handshake_.Release(slot);
      in_.EnQue(a);
      a = in_.DeQue<half>();
      res = s_.Get<float>();
      Cast(res, a, RoundMode::CAST_NONE, kHeads * mine);
      in_.FreeTensor(a);
      PipeBarrier<PIPE_V>();
      WeightAndSum(res, mine);
    } else {
      LocalTensor<float> a = in_.AllocTensor<float>();
      DataCopy(a, wsf_[static_cast<uint64_t>(slot) * kBlock + col], mine);
      handshake_.Release(slot);
      in_.EnQue(a);
      res = in_.DeQue<float>();
    }
    LocalTensor<float> o = outq_.AllocTensor<float>();
    if (route_ != 2) {
      k16 = ksq_.DeQue<half>();
      LocalTensor<float> kf = ksf_.Get<float>();
      Cast(kf, k16, RoundMode::CAST_NONE, mine);
      ksq_.FreeTensor(k16);
      PipeBarrier<PIPE_V>();
      Mul(o, res, kf, mine);
    } else {
      DataCopy(o, res, mine);
    }
    PipeBarrier<PIPE_V>();
    if (route_ != 0) in_.FreeTensor(res);
    outq_.EnQue(o);
    o = outq_.DeQue<float>();
    DataCopy(outg_[first], o, mine);
    outq_.FreeTensor(o);
  }

  // s[0, cols) = sum_h w[h] * s[h * cols + (0 .. cols)]: one Mul per 64 columns (a repeat per
  // head, the head's weight a block of 8 copies read with block stride 0), then the rows added
  // pairwise (the float kernel's head sum).
  __aicore__ inline void WeightAndSum(const LocalTensor<float>& s, uint32_t cols) {
    const BinaryRepeatParams per_head(1, 1, 0, static_cast<uint8_t>(cols / 8), static_cast<uint8_t>(cols / 8), 1);
    for (uint32_t c = 0; c < cols; c += 64) {
      Mul(s[c], s[c], w_.Get<float>(), static_cast<uint64_t>(64), static_cast<uint8_t>(kHeads), per_head);
    }
    PipeBarrier<PIPE_V>();
    for (uint32_t rows = kHeads; rows > 1; rows /= 2) {
      Add(s, s, s[rows / 2 * cols], rows / 2 * cols);
      PipeBarrier<PIPE_V>();
    }
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 2> in_, ksq_;
  TQue<TPosition::VECOUT, 2> outq_;
  TBuf<TPosition::VECCALC> s_, ksf_, w_;
  GlobalTensor<half> ksg_, wsh_;
  GlobalTensor<float> wsf_, outg_;
  lightning_indexer::VectorHandshake handshake_;
  uint32_t route_ = 0;
  int64_t v_ = 0;
};

}  // namespace head_sum_study

// q [64, 128] int8, k [groups * keys_per_group, 128] int8, q16 / k16 their fp16 copies (route 2),
// ks [keys] half, wq16 [16, 64] half (row 0 the weights), wq8 [64, 8] float (each weight 8
// times), ws (workspace), out [keys] float.
extern "C" __global__ __aicore__ void head_sum_study_kernel(GM_ADDR q, GM_ADDR k, GM_ADDR q16, GM_ADDR k16,
                                                            GM_ADDR ks, GM_ADDR wq16, GM_ADDR wq8, GM_ADDR ws,
                                                            GM_ADDR out, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  const __gm__ uint32_t* tw = (const __gm__ uint32_t*)tiling;
  head_sum_study::StudyTiling t;
  t.route = tw[0];
  t.keys_per_group = tw[1];
  if ASCEND_IS_AIC {
    head_sum_study::Aic aic;
    aic.Run(q, k, q16, k16, wq16, ws, t);
  }
  if ASCEND_IS_AIV {
    head_sum_study::Aiv aiv;
    aiv.Run(ks, wq8, ws, out, t);
  }
}
