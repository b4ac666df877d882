// TPipe, TQue / TQueBind and TBuf (documented memory-management classes). The emulator keeps
// their state in the block (see src/tpipe.cpp); these objects hold only an id.
//   TPipe::InitBuffer(que, num, len)   num buffers of len bytes, rounded up to 32 bytes
//   TQue::AllocTensor / EnQue / DeQue / FreeTensor; depth = tensors the queue can hold
//   TBuf::Get<T>() / Get<T>(count) / GetWithOffset<T>(count, byte_offset)
#pragma once
#include "ascendc_cpu/local_tensor.h"

namespace AscendC {

template <TPosition src, TPosition dst, int32_t depth>
class TQueBind {
 public:
  TQueBind() = default;
  TQueBind(const TQueBind&) = delete;
  TQueBind& operator=(const TQueBind&) = delete;

  template <class T>
  LocalTensor<T> AllocTensor(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return LocalTensor<T>(ascendc_cpu::detail::QueueAlloc(id_, loc));
  }
  template <class T>
  bool EnQue(const LocalTensor<T>& t, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    ascendc_cpu::detail::QueueEnQue(id_, t.Desc(), loc);
    return true;
  }
  template <class T>
  LocalTensor<T> DeQue(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return LocalTensor<T>(ascendc_cpu::detail::QueueDeQue(id_, loc));
  }
  template <class T>
  void FreeTensor(LocalTensor<T>& t, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    ascendc_cpu::detail::QueueFree(id_, t.Desc(), loc);
  }
  bool VacantInQue(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return ascendc_cpu::detail::QueueVacant(id_, loc);
  }
  bool HasTensorInQue(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return ascendc_cpu::detail::QueueCount(id_, loc) > 0;
  }
  int32_t GetTensorCountInQue(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return ascendc_cpu::detail::QueueCount(id_, loc);
  }

 private:
  friend class TPipe;
  int32_t id_ = -1;
};

template <TPosition pos, int32_t depth>  // no default depth, as in the real template
class TQue : public TQueBind<pos, pos, depth> {};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
 public:
  TBuf() = default;
  TBuf(const TBuf&) = delete;
  TBuf& operator=(const TBuf&) = delete;

  template <class T>
  LocalTensor<T> Get(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return LocalTensor<T>(ascendc_cpu::detail::TBufGet(id_, 0, 0, loc));
  }
  template <class T>
  LocalTensor<T> Get(uint32_t count, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return LocalTensor<T>(ascendc_cpu::detail::TBufGet(id_, count * uint32_t{sizeof(T)}, 0, loc));
  }
  template <class T>
  LocalTensor<T> GetWithOffset(uint32_t count, uint32_t byte_offset,
                               ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return LocalTensor<T>(ascendc_cpu::detail::TBufGet(id_, count * uint32_t{sizeof(T)}, byte_offset, loc));
  }

 private:
  friend class TPipe;
  int32_t id_ = -1;
};

class TPipe {
 public:
  explicit TPipe(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here())
      : id_(ascendc_cpu::detail::PipeCreate(loc)), outer_(Current()) {
    Current() = this;
  }
  ~TPipe() {
    ascendc_cpu::detail::PipeRelease(id_);
    if (Current() == this) Current() = outer_;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <TPosition src, TPosition dst, int32_t depth>
  bool InitBuffer(TQueBind<src, dst, depth>& que, uint8_t num, uint32_t len,
                  ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    constexpr TPosition pos = src == TPosition::GM ? dst : src;  // where the buffers live
    que.id_ = ascendc_cpu::detail::QueueInit(id_, que.id_, false, pos, depth, num, len, loc);
    ascendc_cpu::detail::QueueSetPositions(que.id_, src, dst);
    return true;
  }
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    buf.id_ = ascendc_cpu::detail::QueueInit(id_, buf.id_, true, pos, 0, 1, len, loc);
    return true;
  }
  void Destroy(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) { ascendc_cpu::detail::PipeDestroy(id_, loc); }

  // Event ids for SetFlag/WaitFlag from the core's pool (QUE_MAX_EVENT = 8 per HardEvent on
  // Atlas A2, shared with the queues' own EnQue / FreeTensor events): Fetch peeks at the lowest
  // free id, Alloc takes it until Release; an empty pool is an event-id-exhausted error.
  template <HardEvent event>
  event_t FetchEventID(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return ascendc_cpu::detail::EventIdFetch(static_cast<int>(event), loc);
  }
  event_t FetchEventID(HardEvent event, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return ascendc_cpu::detail::EventIdFetch(static_cast<int>(event), loc);
  }
  template <HardEvent event>
  event_t AllocEventID(ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    return ascendc_cpu::detail::EventIdAlloc(static_cast<int>(event), loc);
  }
  template <HardEvent event>
  void ReleaseEventID(event_t id, ascendc_cpu::SrcLoc loc = ascendc_cpu::SrcLoc::Here()) {
    ascendc_cpu::detail::EventIdRelease(static_cast<int>(event), id, loc);
  }

 private:
  friend TPipe* GetTPipePtr();
  static TPipe*& Current() {  // each block runs on its own thread
    static thread_local TPipe* current = nullptr;
    return current;
  }
  int32_t id_;
  TPipe* outer_;
};

inline TPipe* GetTPipePtr() { return TPipe::Current(); }

}  // namespace AscendC
