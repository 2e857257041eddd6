// Libraries opened on first use instead of linked (cuBLAS, NVRTC, CUPTI): linking one costs
// every process its relocations and static constructors, tens to hundreds of MB resident,
// on machines that never call it (a CPU-only run, a machine without a GPU).
#pragma once
#include <string>
#include <vector>

namespace hf {

// dlopen (RTLD_NOW | RTLD_LOCAL) of the first candidate that loads: a bare soname goes
// through the library search path, a path is taken as it is. Returns nullptr when none
// loads and then, with `why`, says for each candidate what dlerror() said. Handles are
// never closed: their functions stay in use until exit.
void* open_shared_library(const std::vector<std::string>& candidates, std::string* why);

// The address of `symbol` in `lib` as `fn`'s type; false, fn null, when it lacks it.
void* library_symbol(void* lib, const char* symbol);
template <class F>
bool bind_symbol(void* lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(library_symbol(lib, symbol));
  return fn != nullptr;
}

}  // namespace hf
