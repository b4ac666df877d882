#include <cstring>
#include <sstream>

#include "state.h"

namespace ascendc_cpu {
namespace {

std::string Format(const std::string& check, const std::string& kernel, int32_t block,
                   int32_t block_num, const std::string& file, int line, const std::string& detail) {
  std::ostringstream os;
  os << "[" << check << "] kernel '" << kernel << "'";
  if (block >= 0) os << " block " << block << "/" << block_num;
  if (!file.empty()) os << " at " << file << ":" << line;
  os << ": " << detail;
  return os.str();
}

}  // namespace

EmulatorError::EmulatorError(std::string check, std::string kernel, int32_t block, int32_t block_num,
                             std::string file, int line, std::string detail)
    : std::runtime_error(Format(check, kernel, block, block_num, file, line, detail)),
      check_(std::move(check)),
      kernel_(std::move(kernel)),
      block_(block),
      block_num_(block_num),
      file_(std::move(file)),
      line_(line),
      detail_(std::move(detail)) {}

namespace detail {

std::string Where(SrcLoc loc) {
  if (loc.file == nullptr || loc.file[0] == '\0') return "?";
  const char* slash = std::strrchr(loc.file, '/');
  return std::string(slash ? slash + 1 : loc.file) + ":" + std::to_string(loc.line);
}

void Fail(const char* check, SrcLoc loc, const std::string& detail) {
  BlockState* b = CurrentBlockOrNull();
  std::string file = Where(loc);
  file = file == "?" ? "" : file.substr(0, file.rfind(':'));
  if (b == nullptr) throw EmulatorError(check, "?", -1, 0, file, loc.line, detail);
  std::string d = detail;
  const bool name_core = b->launch->has_aic;  // AIV-only launches: the block says it all
  if (!b->launch->run_label.empty() || name_core) {
    d += " [";
    if (name_core) d += CoreName(*b) + (b->launch->run_label.empty() ? "" : ", ");
    d += b->launch->run_label.empty() ? "]" : b->launch->run_label + " run]";
  }
  throw EmulatorError(check, b->launch->config.kernel_name, b->idx, b->num, file, loc.line, d);
}

}  // namespace detail
}  // namespace ascendc_cpu
