// Errors across the C boundary, dtype traits and the version / ABI check.
#include <cstring>
#include <string>

#include "aop_test.h"
#include "ascend_ops/common.hpp"

TEST(status_names) {
  CHECK_EQ(std::string(aop_status_name(AOP_OK)), "OK");
  CHECK_EQ(std::string(aop_status_name(AOP_VALUE_ERROR)), "ValueError");
  CHECK_EQ(std::string(aop_status_name(AOP_TYPE_ERROR)), "TypeError");
  CHECK_EQ(std::string(aop_status_name(AOP_INDEX_ERROR)), "IndexError");
  CHECK_EQ(std::string(aop_status_name(AOP_RUNTIME_ERROR)), "RuntimeError");
  CHECK_EQ(std::string(aop_status_name(AOP_MEMORY_ERROR)), "MemoryError");
  CHECK_EQ(std::string(aop_status_name(static_cast<aop_status>(42))), "UnknownError");
}

TEST(error_carries_status_and_message) {
  const aop::Error e(AOP_INDEX_ERROR, "slot 9 is beyond 8 slots");
  CHECK_EQ(e.status(), AOP_INDEX_ERROR);
  CHECK_EQ(std::string(e.what()), "slot 9 is beyond 8 slots");
  CHECK_EQ(std::string(e.status_name()), "IndexError");
  const std::runtime_error& base = e;  // adapters may catch the base
  CHECK(contains(base.what(), "slot 9"));
}

TEST(throw_if_ok_does_nothing_and_error_throws) {
  aop_error err = aop::make_error();
  aop::throw_if(AOP_OK, err);  // must not throw
  std::strcpy(err.message, "x should be 2-D");
  err.status = AOP_VALUE_ERROR;
  CHECK_THROWS_AS(aop::throw_if(AOP_VALUE_ERROR, err), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(e.status(), AOP_VALUE_ERROR);
    CHECK_EQ(std::string(e.what()), "x should be 2-D");
  });
  err.message[0] = '\0';  // no message: the status name stands in
  CHECK_THROWS_AS(aop::throw_if(AOP_TYPE_ERROR, err), aop::Error,
                  [](const aop::Error& e) { CHECK_EQ(std::string(e.what()), "TypeError"); });
}

TEST(message_helpers) {
  CHECK_EQ(aop::str("x should be [", 4, ", ", 8, "], got ", 2.5), "x should be [4, 8], got 2.5");
  CHECK_THROWS_AS(aop::check(1 + 1 == 3, AOP_TYPE_ERROR, "k should be ", "int8"), aop::Error,
                  [](const aop::Error& e) {
                    CHECK_EQ(e.status(), AOP_TYPE_ERROR);
                    CHECK_EQ(std::string(e.what()), "k should be int8");
                  });
  aop::check(true, AOP_TYPE_ERROR, "never built");
}

TEST(set_error_truncates_to_buffer) {
  aop_error err = aop::make_error();
  aop::set_error(&err, AOP_RUNTIME_ERROR, std::string(5000, 'z'));
  CHECK_EQ(err.status, AOP_RUNTIME_ERROR);
  CHECK_EQ(std::strlen(err.message), static_cast<size_t>(AOP_ERROR_MESSAGE_BYTES - 1));
}

TEST(library_messages_truncate_with_marker) {
  // A 3000-character name makes the library's message longer than the buffer.
  const std::string name = "Ascend" + std::string(3000, 'Q');
  aop_platform p;
  aop_error err = aop::make_error();
  CHECK_EQ(aop_platform_preset(name.c_str(), &p, &err), AOP_VALUE_ERROR);
  CHECK_EQ(err.status, AOP_VALUE_ERROR);
  const std::string msg = err.message;
  CHECK_EQ(msg.size(), static_cast<size_t>(AOP_ERROR_MESSAGE_BYTES - 1));
  CHECK(contains(msg, "unknown Ascend platform 'AscendQQQ"));
  CHECK_EQ(msg.substr(msg.size() - 3), "...");
}

TEST(success_clears_a_stale_error) {
  aop_error err = aop::make_error();
  aop_platform p;
  CHECK_EQ(aop_platform_preset("nope", &p, &err), AOP_VALUE_ERROR);
  CHECK_EQ(aop_platform_preset("Ascend910B1", &p, &err), AOP_OK);
  CHECK_EQ(err.status, AOP_OK);
  CHECK_EQ(std::string(err.message), "");
}

TEST(dtype_sizes_and_names) {
  struct Row {
    aop_dtype d;
    size_t size;
    const char* name;
  };
  const Row rows[] = {
      {AOP_DTYPE_FLOAT16, 2, "float16"}, {AOP_DTYPE_BFLOAT16, 2, "bfloat16"},
      {AOP_DTYPE_FLOAT32, 4, "float32"}, {AOP_DTYPE_INT8, 1, "int8"},
      {AOP_DTYPE_INT32, 4, "int32"},     {AOP_DTYPE_INT64, 8, "int64"},
      {AOP_DTYPE_UINT8, 1, "uint8"},     {AOP_DTYPE_BOOL, 1, "bool"},
      {AOP_DTYPE_INT16, 2, "int16"},     {AOP_DTYPE_FLOAT64, 8, "float64"},
  };
  CHECK_EQ(sizeof(rows) / sizeof(rows[0]), static_cast<size_t>(AOP_DTYPE_COUNT));
  for (const Row& r : rows) {
    CHECK_EQ(aop_dtype_size(r.d), r.size);
    CHECK_EQ(std::string(aop_dtype_name(r.d)), r.name);
    CHECK_EQ(aop::dtype_size(r.d), r.size);
  }
  CHECK_EQ(aop_dtype_size(AOP_DTYPE_COUNT), 0u);
  CHECK_EQ(aop_dtype_size(static_cast<aop_dtype>(-1)), 0u);
  CHECK_EQ(std::string(aop_dtype_name(static_cast<aop_dtype>(77))), "unknown");
  CHECK_THROWS_AS(aop::dtype_size(static_cast<aop_dtype>(77)), aop::Error,
                  [](const aop::Error& e) { CHECK_EQ(e.status(), AOP_TYPE_ERROR); });
}

TEST(dtype_traits) {
  static_assert(aop::dtype_of<float>() == AOP_DTYPE_FLOAT32, "float");
  static_assert(aop::dtype_of<aop::Float16>() == AOP_DTYPE_FLOAT16, "half");
  static_assert(aop::dtype_of<aop::BFloat16>() == AOP_DTYPE_BFLOAT16, "bf16");
  static_assert(aop::dtype_of<int64_t>() == AOP_DTYPE_INT64, "int64");
  static_assert(aop::dtype_of<uint8_t>() == AOP_DTYPE_UINT8, "uint8");
  static_assert(aop::dtype_of<bool>() == AOP_DTYPE_BOOL, "bool");
  CHECK_EQ(aop::dtype_size(aop::dtype_of<double>()), sizeof(double));
  CHECK_EQ(aop::dtype_size(aop::dtype_of<aop::BFloat16>()), sizeof(aop::BFloat16));
  CHECK_EQ(aop::dtype_size(aop::dtype_of<int16_t>()), sizeof(int16_t));
  aop::check_dtype(AOP_DTYPE_INT32, AOP_DTYPE_INT32, "slot_mapping");
  CHECK_THROWS_AS(aop::check_dtype(AOP_DTYPE_INT64, AOP_DTYPE_INT32, "slot_mapping"), aop::Error,
                  [](const aop::Error& e) {
                    CHECK_EQ(e.status(), AOP_TYPE_ERROR);
                    CHECK_EQ(std::string(e.what()), "slot_mapping should have dtype int32, got int64");
                  });
}

TEST(version_and_abi) {
  CHECK_EQ(std::string(aop_common_version()), AOP_COMMON_VERSION_STRING);
  CHECK_EQ(aop_common_abi(), AOP_COMMON_ABI);
  CHECK_EQ(AOP_COMMON_ABI, 1);
  aop::check_common_abi("test_errors");  // same build: must not throw
}

namespace {
int g_polls = 0;
int g_sync_polls = 0;
void test_poller(int synchronize, void* ctx) {
  ++g_polls;
  if (synchronize != 0) ++g_sync_polls;
  // A device path posts what its streams recorded: here, what ctx says.
  const char* message = static_cast<const char*>(ctx);
  if (message != nullptr && synchronize != 0) aop_async_error_post(AOP_INDEX_ERROR, message);
}
}  // namespace

TEST(async_error_first_one_wins_and_take_clears) {
  aop_error err = aop::make_error();
  CHECK_EQ(aop_async_error_take(&err), AOP_OK);  // nothing pending at start
  CHECK_EQ(aop_async_error_pending(), 0);
  CHECK(aop::post_async_error(aop::Error(AOP_INDEX_ERROR, "op: slot_mapping[3] = 99 is out of range")));
  CHECK(!aop::post_async_error(aop::Error(AOP_VALUE_ERROR, "a later error")));
  CHECK_EQ(aop_async_error_pending(), 1);
  CHECK_THROWS_AS(aop::raise_pending_async_error(), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(e.status(), AOP_INDEX_ERROR);
    CHECK_EQ(std::string(e.what()), "op: slot_mapping[3] = 99 is out of range");
  });
  CHECK_EQ(aop_async_error_pending(), 0);
  aop::raise_pending_async_error();  // cleared: must not throw
  aop::raise_async_error(true);
}

TEST(async_error_check_runs_pollers) {
  static char message[] = "op: block_table[1][2] = -4 is out of range";
  aop_async_error_add_poller(test_poller, message);
  aop_async_error_add_poller(test_poller, message);  // idempotent
  aop::raise_async_error(false);  // the poller looks without synchronising: nothing found
  CHECK_EQ(g_polls, 1);
  CHECK_THROWS_AS(aop::raise_async_error(true), aop::Error, [](const aop::Error& e) {
    CHECK_EQ(e.status(), AOP_INDEX_ERROR);
    CHECK(contains(e.what(), "block_table[1][2] = -4"));
  });
  CHECK_EQ(g_polls, 2);
  CHECK_EQ(g_sync_polls, 1);
}
