// aop::Pool and aop::Block: RAII over the workspace pool.
//
//   aop::Block ws = aop::default_pool().acquire(tiling.workspace_bytes);  // MemoryError if bound
//   kernel(ws.as<float>(), ...);                                           // released at scope end
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ascend_ops/config.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/workspace.h"

AOP_NAMESPACE_BEGIN

using PoolStats = aop_pool_stats;

// A held block; move-only, released on destruction.
class Block {
 public:
  Block() noexcept = default;
  explicit Block(aop_block* held) noexcept : block_(held) {}
  Block(Block&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  Block& operator=(Block&& other) noexcept {
    if (this != &other) {
      reset();
      block_ = std::exchange(other.block_, nullptr);
    }
    return *this;
  }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block() { reset(); }

  void* data() const noexcept { return aop_block_data(block_); }
  template <class T>
  T* as() const noexcept { return static_cast<T*>(data()); }
  size_t size() const noexcept { return aop_block_size(block_); }
  aop_block* get() const noexcept { return block_; }
  explicit operator bool() const noexcept { return block_ != nullptr; }

  // Another holder of the same block (both must be released).
  Block share() const noexcept {
    aop_block_retain(block_);
    return Block(block_);
  }
  void reset() noexcept {
    if (block_ != nullptr) aop_block_release(std::exchange(block_, nullptr));
  }
  aop_block* release() noexcept { return std::exchange(block_, nullptr); }  // caller releases

 private:
  aop_block* block_ = nullptr;
};

// A pool: owned (created here, destroyed with this object; blocks still out keep it alive)
// or borrowed (the default pool).
class Pool {
 public:
  static Pool create(const char* name, uint64_t limit_bytes, const aop_allocator* allocator = nullptr) {
    aop_error err = make_error();
    aop_pool* pool = aop_pool_create(name, allocator, limit_bytes, &err);
    if (pool == nullptr) throw_if(err.status != AOP_OK ? err.status : AOP_RUNTIME_ERROR, err);
    return Pool(pool, true);
  }
  static Pool borrow(aop_pool* pool) {
    check(pool != nullptr, AOP_RUNTIME_ERROR, "the workspace pool could not be created");
    return Pool(pool, false);
  }

  Pool(Pool&& other) noexcept
      : pool_(std::exchange(other.pool_, nullptr)), owned_(other.owned_) {}
  Pool& operator=(Pool&& other) noexcept {
    if (this != &other) {
      reset();
      pool_ = std::exchange(other.pool_, nullptr);
      owned_ = other.owned_;
    }
    return *this;
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() { reset(); }

  // A block of at least `bytes`; Error(AOP_MEMORY_ERROR) naming the pool and sizes if the
  // bound does not allow it.
  Block acquire(size_t bytes) {
    aop_error err = make_error();
    aop_block* block = aop_pool_acquire(pool_, bytes, &err);
    if (block == nullptr) throw_if(err.status != AOP_OK ? err.status : AOP_MEMORY_ERROR, err);
    return Block(block);
  }
  PoolStats stats() const noexcept {
    PoolStats s;
    aop_pool_get_stats(pool_, &s);
    return s;
  }
  void trim() noexcept { aop_pool_trim(pool_); }
  void reset_peak() noexcept { aop_pool_reset_peak(pool_); }
  aop_pool* get() const noexcept { return pool_; }

 private:
  Pool(aop_pool* pool, bool owned) noexcept : pool_(pool), owned_(owned) {}
  void reset() noexcept {
    if (owned_ && pool_ != nullptr) aop_pool_destroy(pool_);
    pool_ = nullptr;
  }

  aop_pool* pool_ = nullptr;
  bool owned_ = false;
};

// The process-wide CPU pool (bound from ASCEND_OPS_WORKSPACE_LIMIT, else 1 GiB).
inline Pool default_pool() { return Pool::borrow(aop_default_pool()); }

AOP_NAMESPACE_END
