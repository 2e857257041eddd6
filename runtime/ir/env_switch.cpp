#include "runtime/ir/env_switch.h"

#include <cstdlib>
#include <string>

#include "runtime/ir/error.h"

namespace hf {

bool env_switch(const char* name, const char* first, const char* second) {
  const char* v = std::getenv(name);
  const std::string value = v ? v : "";
  if (value.empty() || value == first) return true;
  if (value == second) return false;
  throw Error(std::string(name) + "='" + value + "': expected " + first + " or " + second);
}

}  // namespace hf
