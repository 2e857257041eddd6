#include "runtime/ir/shared_library.h"

#include <dlfcn.h>

namespace hf {

void* open_shared_library(const std::vector<std::string>& candidates, std::string* why) {
  std::string reasons;
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    reasons += (reasons.empty() ? "" : "; ") + (e ? std::string(e) : c + ": cannot be opened");
  }
  if (why) *why = candidates.empty() ? "no library named" : reasons;
  return nullptr;
}

void* library_symbol(void* lib, const char* symbol) {
  return lib ? dlsym(lib, symbol) : nullptr;
}

}  // namespace hf
