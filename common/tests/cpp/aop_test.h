// A tiny test harness: TEST(name) registers a function; CHECK* record a failure with
// file:line and go on; the executable prints "N passed, M failed" and exits non-zero on any
// failure. Checks are thread-safe. `<exe> <prefix>` runs only the tests whose name starts so.
#pragma once
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace aop_test {

struct Case {
  const char* name;
  void (*fn)();
};

inline std::vector<Case>& cases() {
  static std::vector<Case> all;
  return all;
}

inline std::atomic<int>& failures() {  // failed checks in the running test
  static std::atomic<int> n{0};
  return n;
}

inline std::mutex& print_mutex() {
  static std::mutex mu;
  return mu;
}

struct Registrar {
  Registrar(const char* name, void (*fn)()) { cases().push_back({name, fn}); }
};

inline void report(const char* file, int line, const std::string& what) {
  ++failures();
  std::lock_guard<std::mutex> lock(print_mutex());
  std::cerr << file << ":" << line << ": FAILED: " << what << std::endl;
}

template <class A, class B>
void check_eq(const A& a, const B& b, const char* ea, const char* eb, const char* file, int line) {
  if (a == b) return;
  std::ostringstream s;
  s << ea << " == " << eb << " (" << a << " vs " << b << ")";
  report(file, line, s.str());
}

int run_all(int argc, char** argv);

}  // namespace aop_test

#define TEST(name)                                                  \
  static void name();                                               \
  static const ::aop_test::Registrar name##_registrar(#name, &name); \
  static void name()

#define CHECK(cond) \
  ((cond) ? (void)0 : ::aop_test::report(__FILE__, __LINE__, "CHECK(" #cond ")"))

#define CHECK_EQ(a, b) ::aop_test::check_eq((a), (b), #a, #b, __FILE__, __LINE__)

// Checks that `expr` throws `type`; the callable after it, given the exception, may check it.
#define CHECK_THROWS_AS(expr, type, ...)                                                 \
  do {                                                                                   \
    bool aop_test_thrown = false;                                                        \
    try {                                                                                \
      (void)(expr);                                                                      \
    } catch (const type& aop_test_e) {                                                   \
      aop_test_thrown = true;                                                            \
      (__VA_ARGS__)(aop_test_e);                                                         \
    } catch (...) {                                                                      \
      aop_test_thrown = true;                                                            \
      ::aop_test::report(__FILE__, __LINE__, #expr " threw something other than " #type); \
    }                                                                                    \
    if (!aop_test_thrown) ::aop_test::report(__FILE__, __LINE__, #expr " did not throw"); \
  } while (0)

#define CHECK_THROWS(expr, type) CHECK_THROWS_AS(expr, type, [](const type&) {})

// True if `text` contains `part` (for error-message checks).
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
