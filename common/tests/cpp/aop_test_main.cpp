// main() of every C++ test executable.
#include <cstring>

#include "aop_test.h"

int aop_test::run_all(int argc, char** argv) {
  const char* prefix = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0;
  for (const Case& c : cases()) {
    if (std::strncmp(c.name, prefix, std::strlen(prefix)) != 0) continue;
    failures() = 0;
    try {
      c.fn();
    } catch (const std::exception& e) {
      report(__FILE__, __LINE__, std::string(c.name) + " threw: " + e.what());
    } catch (...) {
      report(__FILE__, __LINE__, std::string(c.name) + " threw a non-std exception");
    }
    const bool ok = failures() == 0;
    (ok ? passed : failed) += 1;
    std::printf("[%s] %s\n", ok ? "PASS" : "FAIL", c.name);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return (failed == 0 && passed > 0) ? 0 : 1;
}

int main(int argc, char** argv) { return aop_test::run_all(argc, argv); }
