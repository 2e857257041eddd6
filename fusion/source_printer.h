// A streaming printer for generated source: one call per line, indentation tracked for you.
//
// Code generators build text through this instead of concatenating strings, so the
// structure of the generator mirrors the structure of the code it prints:
//
//   SourcePrinter p;
//   {
//     auto loop = p.block("for (long long i = 0; i < n; ++i)");
//     p.line("out[i] = ", expr, ";");
//   }  // prints the closing brace
#pragma once
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace hf::fusion {

class SourcePrinter {
 public:
  explicit SourcePrinter(int indent_width = 2) : width_(indent_width) {}

  // One line at the current indentation; the parts are streamed with operator<<.
  template <class... Parts>
  SourcePrinter& line(const Parts&... parts) {
    if constexpr (sizeof...(Parts) > 0) {
      out_ << std::string(static_cast<size_t>(depth_ * width_), ' ');
      (out_ << ... << parts);
    }
    out_ << '\n';
    return *this;
  }
  SourcePrinter& blank() { return line(); }

  void indent() { ++depth_; }
  void dedent() {
    if (depth_ > 0) --depth_;
  }

  // `head {` now, the matching `}tail` when the returned object goes out of scope.
  class [[nodiscard]] Block {
   public:
    Block(SourcePrinter& p, std::string tail, bool indented = true)
        : p_(&p), tail_(std::move(tail)), indented_(indented) {}
    Block(Block&& o) noexcept : p_(o.p_), tail_(std::move(o.tail_)), indented_(o.indented_) {
      o.p_ = nullptr;
    }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    Block& operator=(Block&&) = delete;
    ~Block() {
      if (!p_) return;
      if (indented_) p_->dedent();
      p_->line("}", tail_);
    }

   private:
    SourcePrinter* p_;
    std::string tail_;
    bool indented_;
  };
  template <class... Parts>
  Block block(const Parts&... head) {
    if constexpr (sizeof...(Parts) > 0)
      line(head..., " {");
    else
      line("{");
    indent();
    return Block(*this, "");
  }
  // As block(), with text after the closing brace (`;` for a struct).
  template <class... Parts>
  Block block_with_tail(std::string tail, const Parts&... head) {
    line(head..., " {");
    indent();
    return Block(*this, std::move(tail));
  }

  // Inside an open block: closes it and opens the next branch, `} else {`.
  template <class... Parts>
  void next_branch(const Parts&... head) {
    dedent();
    line("} ", head..., " {");
    indent();
  }

  // `namespace name {` now, `}  // namespace name` at scope exit; the contents are not
  // indented (as in hand-written code).
  Block namespace_block(const std::string& name) {
    line("namespace ", name, " {");
    return Block(*this, "  // namespace " + name, /*indented=*/false);
  }

  // Appends text verbatim (it must end with a newline to keep lines whole).
  SourcePrinter& raw(std::string_view text) {
    out_ << text;
    return *this;
  }

  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  int depth_ = 0;
  int width_;
};

}  // namespace hf::fusion
