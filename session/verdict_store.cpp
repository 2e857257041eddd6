#include "session/verdict_store.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "profiler/machine_probe.h"
#include "runtime/ir/env_switch.h"
#include "runtime/ir/error.h"
#include "session/selection.h"

namespace hf {

namespace {

using json = nlohmann::json;

constexpr const char* kKinds[] = {"kept", "slower", "not worth it", "wrong"};

}  // namespace

VerdictStore::VerdictStore(std::shared_ptr<fusion::DiskCache> disk, std::string context)
    : disk_(std::move(disk)), context_(std::move(context)) {}

namespace {

bool verdicts_on() {
  return env_switch("HOTFUSE_VERDICTS", "on", "off");
}

}  // namespace

void VerdictStore::check_environment() {
  verdicts_on();
}

std::shared_ptr<VerdictStore> VerdictStore::from_env(std::shared_ptr<fusion::DiskCache> disk,
                                                     std::string context) {
  if (!verdicts_on() || !disk) return nullptr;
  return std::make_shared<VerdictStore>(std::move(disk), std::move(context));
}

std::string VerdictStore::context(const MachinePeak& machine,
                                  const std::vector<std::string>& toolchain,
                                  const SelectionOptions& select) {
  // "judge": how re-profiling decided "slower" (2: selection.h's judge_in_turn); "select":
  // how selection decided "not worth it" (2: shares of the larger of the iteration and its
  // ops, regions of one kernel together: select_kernel_group); verdicts an earlier rule
  // reached are not taken over.
  json c = {{"judge", 2},
            {"select", 2},
            {"cpu", machine.cpu},
            {"threads", machine.threads},
            {"toolchain", toolchain},
            {"min_share", select.min_share},
            {"expected_iters", select.expected_iters},
            {"compile_ms", select.compile_ms}};
  return c.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string VerdictStore::key(const std::string& region_key) const {
  return fusion::DiskCache::make_key({"verdicts", context_, region_key});
}

std::vector<RegionVerdict> VerdictStore::load(const std::string& region_key) const {
  std::optional<std::string> text = disk_->get(key(region_key));
  if (!text) return {};
  std::vector<RegionVerdict> out;
  try {
    const json e = json::parse(*text);
    // The key is a digest: the entry names what it is for, and only that is taken.
    if (e.at("context") != context_ || e.at("region") != region_key) return {};
    for (const json& j : e.at("verdicts")) {
      RegionVerdict v;
      const std::string kind = j.at("kind");
      const auto k = std::find(std::begin(kKinds), std::end(kKinds), kind);
      if (k == std::end(kKinds)) return {};
      v.kind = static_cast<RegionVerdict::Kind>(k - std::begin(kKinds));
      v.io_bytes = j.at("io_bytes");
      v.at = j.at("at");
      v.reason = j.at("reason");
      out.push_back(std::move(v));
    }
  } catch (const json::exception&) {
    return {};
  }
  return out;
}

void VerdictStore::save(const std::string& region_key,
                        const std::vector<RegionVerdict>& verdicts) const {
  json all = json::array();
  for (const RegionVerdict& v : verdicts)
    all.push_back(
        {{"kind", kKinds[v.kind]}, {"io_bytes", v.io_bytes}, {"at", v.at}, {"reason", v.reason}});
  json e = {{"context", context_}, {"region", region_key}, {"verdicts", all}};
  // Names that are not UTF-8 are written replaced: such an entry is never taken (its
  // region no longer matches), and the session decides again.
  disk_->put(key(region_key), e.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace hf
