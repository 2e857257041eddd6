#include "viewer/ui/file_dialog.h"

#include <imgui.h>

#include <cstdio>

namespace hf::viewer::ui {

namespace fs = std::filesystem;

void FileDialog::go_to(const fs::path& dir) {
  listing_ = list_dir(dir);
  std::snprintf(path_, sizeof path_, "%s", listing_.dir.string().c_str());
  selected_ = -1;
}

void FileDialog::open(const std::string& start, std::vector<std::string> recent) {
  std::error_code ec;
  fs::path p = start.empty() ? fs::current_path(ec) : fs::path(start);
  if (!fs::is_directory(p, ec)) p = p.parent_path();
  if (p.empty()) p = fs::current_path(ec);
  go_to(p);
  recent_ = std::move(recent);
  request_open_ = focus_path_ = true;
}

bool FileDialog::draw(std::string* chosen) {
  if (request_open_) {
    ImGui::OpenPopup("Open dump");
    request_open_ = false;
  }
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowSize({std::min(760.0f, vp->Size.x - 40), std::min(480.0f, vp->Size.y - 60)},
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x / 2, vp->Pos.y + vp->Size.y / 2},
                          ImGuiCond_Appearing, {0.5f, 0.5f});
  if (!ImGui::BeginPopupModal("Open dump", nullptr)) return false;
  bool picked = false;
  auto pick = [&](const std::string& p) {
    *chosen = p;
    picked = true;
    ImGui::CloseCurrentPopup();
  };

  ImGui::TextUnformatted(
      "A dump folder (hotfuse-run GRAPH --dump DIR), or a report.json / trace.json / .dot file:");
  if (ImGui::Button("Up")) go_to(listing_.dir.parent_path());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  if (focus_path_) {
    ImGui::SetKeyboardFocusHere();
    focus_path_ = false;
  }
  if (ImGui::InputText("##path", path_, sizeof path_, ImGuiInputTextFlags_EnterReturnsTrue)) {
    std::error_code ec;
    if (fs::is_directory(path_, ec) && !is_dump_dir(path_))
      go_to(path_);
    else
      pick(path_);
  }

  const float foot = ImGui::GetFrameHeightWithSpacing() + 4;
  const float h = ImGui::GetContentRegionAvail().y - foot;
  // Recent dumps.
  ImGui::BeginChild("recent", {ImGui::GetContentRegionAvail().x * 0.32f, h}, true);
  ImGui::TextDisabled("Recent");
  if (recent_.empty()) ImGui::TextDisabled("(none yet)");
  for (size_t i = 0; i < recent_.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    const std::string name = fs::path(recent_[i]).filename().string();
    if (ImGui::Selectable((name.empty() ? recent_[i] : name).c_str(), false,
                          ImGuiSelectableFlags_AllowDoubleClick)) {
      if (ImGui::IsMouseDoubleClicked(0))
        pick(recent_[i]);
      else
        std::snprintf(path_, sizeof path_, "%s", recent_[i].c_str());
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", recent_[i].c_str());
    ImGui::PopID();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  // The folder.
  ImGui::BeginChild("folder", {0, h}, true);
  if (!listing_.error.empty())
    ImGui::TextColored(ImVec4(0.78f, 0.16f, 0.16f, 1), "%s: %s", listing_.dir.string().c_str(),
                       listing_.error.c_str());
  fs::path enter;
  for (size_t i = 0; i < listing_.entries.size(); ++i) {
    const DirEntry& e = listing_.entries[i];
    const std::string label =
        (e.is_dir ? "[" + e.name + "]" : e.name) + (e.is_dump ? "   (dump)" : "");
    if (ImGui::Selectable(label.c_str(), selected_ == static_cast<int>(i),
                          ImGuiSelectableFlags_AllowDoubleClick)) {
      selected_ = static_cast<int>(i);
      const fs::path p = listing_.dir / e.name;
      std::snprintf(path_, sizeof path_, "%s", p.string().c_str());
      if (ImGui::IsMouseDoubleClicked(0)) {
        if (e.is_dir && !e.is_dump)
          enter = p;
        else
          pick(p.string());
      }
    }
  }
  ImGui::EndChild();
  if (!enter.empty()) go_to(enter);

  const bool here_is_dump = is_dump_dir(listing_.dir);
  if (ImGui::Button("Open")) pick(path_);
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    ImGui::CloseCurrentPopup();
  ImGui::SameLine();
  ImGui::TextDisabled(here_is_dump ? "this folder is a dump"
                                   : "double-click a folder to enter it, a dump to open it");
  ImGui::EndPopup();
  return picked;
}

}  // namespace hf::viewer::ui
