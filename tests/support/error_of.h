// The message of the hf::Error a call throws: for tests that check what a bad input says.
#pragma once
#include <string>

#include "runtime/ir/error.h"

namespace hf {

// The message of the hf::Error f() throws, or "" when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace hf
