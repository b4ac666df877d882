// Minimal test harness (no gtest): TEST(name) { ... } with CHECK / CHECK_EQ / CHECK_NEAR and
// EXPECT_EMU_ERROR(expr, check, kernel, block). main() runs every test and prints
// "N passed, M failed"; the exit code is non-zero if any test failed.
#pragma once
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ascendc_cpu/errors.h"

namespace emu_test {

struct Failure {
  std::string message;
};

struct Registry {
  std::vector<std::pair<std::string, std::function<void()>>> tests;
  static Registry& Get() {
    static Registry r;
    return r;
  }
};

struct Registrar {
  Registrar(const char* name, std::function<void()> fn) { Registry::Get().tests.emplace_back(name, std::move(fn)); }
};

[[noreturn]] inline void Fail(const char* file, int line, const std::string& what) {
  std::ostringstream os;
  os << file << ":" << line << ": " << what;
  throw Failure{os.str()};
}

inline int RunAll() {
  int passed = 0, failed = 0;
  for (auto& [name, fn] : Registry::Get().tests) {
    try {
      fn();
      ++passed;
      std::printf("[ PASS ] %s\n", name.c_str());
    } catch (const Failure& f) {
      ++failed;
      std::printf("[ FAIL ] %s\n    %s\n", name.c_str(), f.message.c_str());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("[ FAIL ] %s\n    unexpected exception: %s\n", name.c_str(), e.what());
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace emu_test

#define TEST(name)                                                      \
  static void name();                                                   \
  static const emu_test::Registrar name##_registrar(#name, name);       \
  static void name()

#define CHECK(cond) \
  do {              \
    if (!(cond)) emu_test::Fail(__FILE__, __LINE__, "CHECK(" #cond ") failed"); \
  } while (0)

#define CHECK_EQ(a, b)                                                                  \
  do {                                                                                  \
    const auto va_ = (a);                                                               \
    const auto vb_ = (b);                                                               \
    if (!(va_ == vb_)) {                                                                \
      std::ostringstream os_;                                                           \
      os_ << "CHECK_EQ(" #a ", " #b ") failed: " << va_ << " != " << vb_;               \
      emu_test::Fail(__FILE__, __LINE__, os_.str());                                    \
    }                                                                                   \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                           \
  do {                                                                                  \
    const double va_ = static_cast<double>(a), vb_ = static_cast<double>(b);            \
    if (!(std::fabs(va_ - vb_) <= (tol))) {                                             \
      std::ostringstream os_;                                                           \
      os_ << "CHECK_NEAR(" #a ", " #b ") failed: " << va_ << " vs " << vb_;             \
      emu_test::Fail(__FILE__, __LINE__, os_.str());                                    \
    }                                                                                   \
  } while (0)

// The expression must throw EmulatorError with exactly this check, kernel and block
// (block -1: the error names no single block).
#define EXPECT_EMU_ERROR(expr, check_name, kernel_name, block_idx)                                   \
  do {                                                                                               \
    bool thrown_ = false;                                                                            \
    try {                                                                                            \
      expr;                                                                                          \
    } catch (const ascendc_cpu::EmulatorError& e_) {                                                 \
      thrown_ = true;                                                                                \
      std::printf("    (expected) %s\n", e_.what());                                                 \
      if (e_.check() != std::string(check_name) || e_.kernel() != std::string(kernel_name) ||        \
          e_.block() != (block_idx)) {                                                               \
        emu_test::Fail(__FILE__, __LINE__, std::string("wrong error: ") + e_.what());                \
      }                                                                                              \
    }                                                                                                \
    if (!thrown_) emu_test::Fail(__FILE__, __LINE__, "expected EmulatorError [" check_name "]");      \
  } while (0)

int main() { return emu_test::RunAll(); }
