// The dumps opened lately, newest first, for File > Open's list. Kept in a text file, one
// absolute path a line: $XDG_STATE_HOME/hotfuse/recent, else ~/.local/state/hotfuse/recent.
// Nothing here fails loudly: a file that cannot be read is an empty list, one that cannot be
// written is a list not remembered (the viewer works the same without it).
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace hf::viewer {

// Where the list lives; empty when neither XDG_STATE_HOME nor HOME is set.
std::filesystem::path recent_dumps_file();

std::vector<std::string> load_recent_dumps(const std::filesystem::path& file);
// false (and nothing else) when it cannot be written.
bool save_recent_dumps(const std::filesystem::path& file, const std::vector<std::string>& list);

// `path` made absolute and moved to the front; duplicates dropped; at most `keep`.
std::vector<std::string> add_recent_dump(std::vector<std::string> list, const std::string& path,
                                         size_t keep = 12);

}  // namespace hf::viewer
