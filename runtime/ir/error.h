// The one exception type that crosses module edges. Its message is what the user sees:
// it names the file, node or option at fault. Tools turn it into one line and exit code 2.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace hf {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Text from a model or the command line (node, value and graph names), made safe for a
// terminal and for a one-line message: C0 and C1 control characters (ESC, newline, CR,
// DEL, U+0080-U+009F), bidirectional overrides, U+2028/U+2029 and bytes that are not
// valid UTF-8 become visible escapes (\n, \t, \r, \x1b, \u009b, \u202e); everything else,
// backslashes and valid UTF-8 included, passes unchanged, so already-printable text is
// returned as it is. Every message naming something from the model goes through it
// (describe(), the IR's value errors), and hotfuse-run passes every line it prints from a
// name or an error through it once more.
std::string printable(std::string_view text);

}  // namespace hf
