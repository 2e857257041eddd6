#include "session/region_verdicts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "session/verdict_store.h"

namespace hf {

namespace {

// "4x", "1/4 of"
std::string ratio_text(double r) {
  char b[64];
  if (r >= 1)
    std::snprintf(b, sizeof b, "%.3gx", r);
  else
    std::snprintf(b, sizeof b, "1/%.3g of", 1 / r);
  return b;
}

}  // namespace

std::optional<std::string> carried_reason(const RegionVerdict& v, double io_bytes) {
  constexpr double kSamePicture = 2;
  const double r = v.io_bytes > 0 ? io_bytes / v.io_bytes : 1;
  const std::string where =
      "decided at " + v.at + "; here it moves " + ratio_text(r) + " those bytes";
  switch (v.kind) {
    case RegionVerdict::Wrong:
      return "not fused: its kernel " + v.reason + " (" + where + ")";
    case RegionVerdict::Kept:
      if (r * kSamePicture < 1) return std::nullopt;
      return "carried over: its kernel was kept there, faster than its ops (" + where + ")";
    case RegionVerdict::Slower:
      if (r > kSamePicture) return std::nullopt;
      return "carried over: its kernel was not faster than its ops (" + where + ")";
    case RegionVerdict::NotWorthIt:
      if (r > kSamePicture) return std::nullopt;
      return "carried over: " + v.reason + " (" + where + ")";
  }
  return std::nullopt;
}

RegionVerdicts::RegionVerdicts(std::shared_ptr<const VerdictStore> store)
    : store_(std::move(store)) {}

std::vector<RegionVerdict>& RegionVerdicts::of(const std::string& region_key) const {
  auto it = by_region_.find(region_key);
  if (it == by_region_.end())
    it = by_region_
             .emplace(region_key, store_ ? store_->load(region_key) : std::vector<RegionVerdict>{})
             .first;
  return it->second;
}

void RegionVerdicts::record(const std::string& region_key, RegionVerdict v) {
  std::vector<RegionVerdict>& all = of(region_key);
  auto old =
      std::find_if(all.begin(), all.end(), [&](const RegionVerdict& o) { return o.at == v.at; });
  if (old == all.end()) {
    all.push_back(std::move(v));
  } else {
    // The same verdict again (a session's numbers are read after every switch): nothing
    // to write.
    if (old->kind == v.kind && old->io_bytes == v.io_bytes && old->reason == v.reason) return;
    *old = std::move(v);
  }
  if (store_) store_->save(region_key, all);
}

const RegionVerdict* RegionVerdicts::find(const std::string& region_key, double io_bytes) const {
  const std::vector<RegionVerdict>& all = of(region_key);
  for (const RegionVerdict& v : all)
    if (v.kind == RegionVerdict::Wrong) return &v;
  const RegionVerdict* best = nullptr;
  double best_d = INFINITY;
  for (const RegionVerdict& v : all) {
    double d = std::fabs(std::log(std::max(io_bytes, 1.0) / std::max(v.io_bytes, 1.0)));
    if (d < best_d) best_d = d, best = &v;
  }
  return best;
}

}  // namespace hf
