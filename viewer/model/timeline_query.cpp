#include "viewer/model/timeline_query.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace hf::viewer {

std::vector<NameStats> range_stats(const Trace& t, double t0, double t1) {
  if (t1 < t0) std::swap(t0, t1);
  std::map<std::string, NameStats> by_name;
  for (const Track& tr : t.tracks) {
    auto [a, b] = t.visible(tr, t0, t1);
    for (size_t i = a; i < b; ++i) {
      const TraceEvent& e = t.events[tr.events[i]];
      if (e.end() < t0 || e.ts > t1) continue;
      NameStats& s = by_name[e.name];
      s.name = e.name;
      ++s.count;
      s.total_us += e.dur;
    }
  }
  std::vector<NameStats> out;
  out.reserve(by_name.size());
  for (auto& [name, s] : by_name) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(),
                   [](const NameStats& a, const NameStats& b) { return a.total_us > b.total_us; });
  return out;
}

namespace {
bool contains_nocase(std::string_view hay, std::string_view needle) {
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), eq) != hay.end();
}
}  // namespace

std::vector<int> search_events(const Trace& t, std::string_view query) {
  std::vector<int> out;
  if (query.empty()) return out;
  for (size_t i = 0; i < t.events.size(); ++i)
    if (contains_nocase(t.events[i].name, query)) out.push_back(static_cast<int>(i));
  std::stable_sort(out.begin(), out.end(),
                   [&](int a, int b) { return t.events[a].ts < t.events[b].ts; });
  return out;
}

int step_match(const Trace& t, const std::vector<int>& matches, int current, bool forward,
               double at) {
  const int n = static_cast<int>(matches.size());
  if (n == 0) return -1;
  if (current >= 0 && current < n) return forward ? (current + 1) % n : (current + n - 1) % n;
  auto ts_less = [&](int idx, double v) { return t.events[idx].ts < v; };
  const int first_at = static_cast<int>(
      std::lower_bound(matches.begin(), matches.end(), at, ts_less) - matches.begin());
  if (forward) return first_at < n ? first_at : 0;
  return first_at > 0 ? first_at - 1 : n - 1;
}

}  // namespace hf::viewer
