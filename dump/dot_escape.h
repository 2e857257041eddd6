// Text from the model (node and value names, reasons) inside Graphviz DOT files.
//
// DOT quoted strings are read twice by Graphviz: the lexer turns \" into " (every other
// backslash stays), then labels and tooltips are "escString"s, where \\ is a backslash,
// \n \l \r end a line and \N \G \E \T \H \L expand to object names; finally HTML entities
// (&amp; &lt; ...) in plain labels become characters. dot_quote() undoes all three, so
// the rendered text is the original: " -> \", \ -> \\, & -> &amp;, a newline -> \n.
// Invalid UTF-8 and control characters (other than newline) become U+FFFD; a tab becomes
// a space; valid UTF-8 passes through.
#pragma once
#include <string>
#include <string_view>

namespace hf::dump {

// `text` as a quoted DOT string ("..."), for label, tooltip and other escString attributes.
std::string dot_quote(std::string_view text);

// The inverse, for tests and tools: a label attribute's value as Graphviz reads it (after
// its lexer removed the quotes and \") back to the text it renders, lines joined by '\n'.
std::string dot_unescape_label(std::string_view attr);

// Valid UTF-8 with invalid sequences replaced by U+FFFD (what the JSON files hold too).
std::string valid_utf8(std::string_view text);

// `text` cut to at most max_chars code points, with "..." appended when cut.
std::string ellipsize(std::string_view text, size_t max_chars);

}  // namespace hf::dump
