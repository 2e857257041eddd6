// The one exception type that crosses module edges. Its message is what the user sees:
// it names the file, node or option at fault. Tools turn it into one line and exit code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace hf {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace hf
