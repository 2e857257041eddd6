// Runs Graphviz's `dot` on DOT text (before.svg, after.svg; the tests parse with -Tjson).
// `dot` is looked up in PATH and spawned without a shell (fusion/subprocess_util.h); its
// input and output go through a private temporary directory, never the dump directory.
#pragma once
#include <chrono>
#include <string>
#include <string_view>

namespace hf::dump {

struct DotOutput {
  bool ok = false;
  bool missing = false;  // `dot` is not on PATH (not an error for a dump)
  std::string output;    // the converted document when ok
  std::string error;     // one line when !ok: what failed, with dot's first message line
};

// `dot -T<format>` of `dot_text` ("svg", "json", "canon", ...).
DotOutput run_dot(std::string_view dot_text, const std::string& format,
                  std::chrono::milliseconds timeout = std::chrono::seconds(120));

}  // namespace hf::dump
