#include "session/shape_sessions.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime/exec/device_inputs.h"
#include "runtime/io/test_data.h"
#include "runtime/ir/error.h"
#include "session/verdict_store.h"

namespace hf {

std::string input_signature_text(const Graph& g) {
  std::string s;
  for (ValueId v : g.inputs())
    s += (s.empty() ? "" : ", ") + g.value(v).name + " " + to_string(g.value(v).shape);
  return s;
}

struct ShapeSessions::Entry {
  std::vector<Shape> shapes;
  // The inputs the graph is specialised to, by input index, with the values it was made for.
  std::vector<std::pair<size_t, HostTensor>> values;
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Session> session;  // refers to *graph
  size_t record = 0;                 // in shapes_
  ShapeRecord earlier;               // the numbers of this signature's earlier sessions
};

ShapeSessions::ShapeSessions(GraphForInputs make_graph, SessionTarget target,
                             const MachinePeak& machine, SessionOptions options, size_t capacity)
    : make_graph_(std::move(make_graph)),
      target_(std::move(target)),
      machine_(machine),
      options_(std::move(options)),
      capacity_(std::max<size_t>(1, capacity)),
      verdicts_(VerdictStore::from_env(
          target_.kernels ? target_.kernels->disk() : nullptr,
          VerdictStore::context(machine_,
                                target_.kernels ? target_.kernels->toolchain().key_parts()
                                                : std::vector<std::string>{},
                                options_.select))) {}

// What the sessions decided, for the next process (a store's writes cannot fail loudly:
// a write that fails leaves the next process to decide again).
ShapeSessions::~ShapeSessions() {
  for (auto& e : entries_) update(*e);
}

namespace {

// "; given shape = [4,8]": the values a graph is specialised to, as its signature's tail.
std::string values_text(const Graph& g, const std::vector<std::pair<size_t, HostTensor>>& values) {
  constexpr int64_t kShown = 8;
  std::string s;
  for (const auto& [k, t] : values) {
    s += (s.empty() ? "; given " : ", ") + g.value(g.inputs()[k]).name + " = [";
    for (int64_t i = 0; i < std::min(t.numel(), kShown); ++i) {
      char b[32];
      std::snprintf(b, sizeof b, "%s%g", i ? "," : "", load_double(t.view(), i));
      s += b;
    }
    s += t.numel() > kShown ? ",...]" : "]";
  }
  return s;
}

}  // namespace

bool takes_shapes(const Graph& g, const std::vector<Shape>& shapes) {
  if (g.inputs().size() != shapes.size()) return false;
  for (size_t k = 0; k < shapes.size(); ++k)
    if (g.value(g.inputs()[k]).shape != shapes[k]) return false;
  return true;
}

bool ShapeSessions::matches(const Entry& e, std::span<const TensorView> inputs) const {
  if (inputs.size() != e.shapes.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].shape != e.shapes[k]) return false;
  // Runs every iteration: host memory is compared where it is, only device memory copied.
  for (const auto& [k, value] : e.values) {
    if (inputs[k].dtype != value.dtype()) return false;
    const void* now = inputs[k].data;
    HostTensor copy;
    if (!target_.host_memory) {
      copy = download(*target_.backend, inputs.subspan(k, 1))[0];
      now = copy.data();
    }
    if (value.bytes() > 0 && std::memcmp(now, value.data(), value.bytes()) != 0) return false;
  }
  return true;
}

void ShapeSessions::update(Entry& e) {
  const Session& s = *e.session;
  ShapeRecord& r = shapes_[e.record];
  r.iterations = e.earlier.iterations + static_cast<int>(s.iterations().size());
  r.compiled = e.earlier.compiled;
  r.from_cache = e.earlier.from_cache;
  r.carried = 0;
  for (const RegionRecord& rr : s.regions()) {
    if (rr.compile_end_s >= 0) (rr.cache_hit ? r.from_cache : r.compiled) += 1;
    r.carried += !rr.carried.empty();
  }
  r.kernels_before = s.kernels_before();
  r.kernels_now = s.kernels_now();

  // The verdicts this session reached itself, once final: a speed verdict only once the
  // session settled (re-profiling may still revert a kept kernel), and only adaptive's
  // (the other policies keep what they were asked to, faster or not).
  if (s.options().policy == FusionPolicy::Off) return;
  const bool adaptive = s.options().policy == FusionPolicy::Adaptive;
  for (const RegionRecord& rr : s.regions()) {
    RegionVerdict v;
    v.io_bytes = rr.candidate.io_bytes;
    v.at = r.signature;
    v.reason = rr.reason;
    const bool mismatch = rr.validation.rfind("failed: value '", 0) == 0;
    switch (rr.state) {
      case RegionState::Reverted:
        if (mismatch) {
          v.kind = RegionVerdict::Wrong;
          v.reason = "differed from its ops at " + r.signature;
        } else if (adaptive && s.settled() && rr.measured_fused_s >= 0) {
          // Re-profiled, then reverted: slower. (A region reverted before it ran, its plan
          // not built for want of memory say, says nothing about its speed.)
          v.kind = RegionVerdict::Slower;
        } else {
          continue;
        }
        break;
      case RegionState::Swapped:
        // One taken over from this very signature says nothing new.
        if (!adaptive || !s.settled() || rr.kept_before) continue;
        v.kind = RegionVerdict::Kept;
        break;
      case RegionState::Rejected:
        // Not one taken over, not dead code or unprofiled: the selection's own verdict.
        if (!rr.carried.empty() || rr.selection.reason.empty() || !adaptive) continue;
        v.kind = RegionVerdict::NotWorthIt;
        v.reason = rr.selection.reason;
        break;
      default:  // Queued: undecided; Failed: a compile error may be the machine's (a timeout)
        continue;
    }
    verdicts_.record(region_key(s.graph(), rr), std::move(v));
  }
}

const ShapeRecord& ShapeSessions::shape_now() {
  if (entries_.empty()) throw Error("ShapeSessions: nothing has run yet");
  update(*entries_.front());
  return shapes_[entries_.front()->record];
}

const std::vector<ShapeRecord>& ShapeSessions::shapes() {
  for (auto& e : entries_) update(*e);
  return shapes_;
}

Session& ShapeSessions::session_for(std::span<const TensorView> inputs) {
  if (!entries_.empty() && matches(*entries_.front(), inputs)) return *entries_.front()->session;
  // A switch: what the sessions decided so far is what the next one may take over.
  for (auto& e : entries_) update(*e);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const std::unique_ptr<Entry>& e) { return matches(*e, inputs); });
  if (it != entries_.end()) {
    entries_.splice(entries_.begin(), entries_, it);
    return *entries_.front()->session;
  }

  auto e = std::make_unique<Entry>();
  SmallInputs small(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    e->shapes.push_back(inputs[k].shape);
    if (numel(inputs[k].shape) <= kMaxGivenValue)
      small[k] = download(*target_.backend, inputs.subspan(k, 1))[0];
  }
  e->graph = std::make_unique<Graph>(make_graph_(e->shapes, small));
  const Graph& g = *e->graph;
  if (g.inputs().size() != inputs.size())
    throw Error("graph '" + g.name + "' has " + std::to_string(g.inputs().size()) +
                " inputs, given " + std::to_string(inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& v = g.value(g.inputs()[k]);
    if (v.shape != inputs[k].shape)
      throw Error("graph '" + g.name + "': input '" + v.name + "' is " + to_string(v.shape) +
                  ", given " + to_string(inputs[k].shape));
    if (std::find(g.specialised_inputs.begin(), g.specialised_inputs.end(), v.name) !=
        g.specialised_inputs.end()) {
      if (!small[k])  // an import only takes values this small as constants
        throw Error("graph '" + g.name + "' is specialised to the value of input '" + v.name +
                    "', which has more than " + std::to_string(kMaxGivenValue) + " elements");
      e->values.emplace_back(k, std::move(*small[k]));
    }
  }

  const std::string signature = input_signature_text(g) + values_text(g, e->values);
  auto rec = std::find_if(shapes_.begin(), shapes_.end(),
                          [&](const ShapeRecord& r) { return r.signature == signature; });
  if (rec == shapes_.end()) {
    ShapeRecord r;
    r.signature = signature;
    for (ValueId v : g.inputs()) r.shapes[g.value(v).name] = g.value(v).shape;
    rec = shapes_.insert(shapes_.end(), std::move(r));
  }
  e->record = static_cast<size_t>(rec - shapes_.begin());
  e->earlier = *rec;

  SessionOptions o = options_;
  if (warm_) o.warmup_min_s = 0;  // the thread pool has run: nothing to wait for
  o.verdicts = &verdicts_;
  o.signature = signature;
  e->session = std::make_unique<Session>(g, target_, machine_, o);
  warm_ = true;
  ++rec->sessions;
  rec->live = true;

  if (entries_.size() >= capacity_) {
    shapes_[entries_.back()->record].live = false;
    entries_.pop_back();
  }
  entries_.push_front(std::move(e));
  return *entries_.front()->session;
}

}  // namespace hf
