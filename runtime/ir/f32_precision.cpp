#include "runtime/ir/f32_precision.h"

#include <cstdlib>
#include <string>

#include "runtime/ir/error.h"

namespace hf {

F32Precision f32_precision() {
  const char* v = std::getenv("HOTFUSE_F32_PRECISION");
  const std::string value = v ? v : "";
  if (value.empty() || value == "high") return F32Precision::High;
  if (value == "highest") return F32Precision::Highest;
  throw Error("HOTFUSE_F32_PRECISION='" + value + "': expected high or highest");
}

}  // namespace hf
