// The sessions of one model, one per input signature: a model whose input dimensions are
// symbolic (a batch, a sequence length) imports to a different static graph at each size,
// and each graph gets its own Session, plan and profile. The last few are kept, the least
// recently used dropped, so that a program alternating between a few shapes switches
// between settled plans without planning again.
//
// What makes a new signature cheap: kernels are keyed by rank and broadcast pattern, not
// sizes, so the kernel cache (the target's, shared by every session here) already holds
// every kernel a size seen before needed and nothing is compiled again; and each new
// session takes over the verdicts the others reached on the same regions where they still
// hold (region_verdicts.h), so only what a new size changes is decided again.
//
// A signature is the inputs' shapes and, for a graph specialised to the values of some
// inputs (Graph::specialised_inputs: a Reshape's shape given as an input), those values:
// other values import to another graph.
#pragma once
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/ir/tensor.h"
#include "session/region_verdicts.h"
#include "session/session.h"

namespace hf {

// Input values by position; nullopt where not copied (SmallInputs: above kMaxGivenValue).
using SmallInputs = std::vector<std::optional<HostTensor>>;

// The graph for inputs of these shapes, in the order of the model's inputs. `small` holds,
// at the same positions, the values of the inputs with at most kMaxGivenValue elements
// (runtime/io/test_data.h; empty ones included), for a model whose import needs some as
// constants. Throws hf::Error when the model cannot take them (a JSON graph's static shapes,
// a dimension the model fixes).
using GraphForInputs =
    std::function<Graph(const std::vector<Shape>& shapes, const SmallInputs& small)>;

// "x [4,64], mask [4,128]": a graph's inputs and their shapes.
std::string input_signature_text(const Graph& g);

// Whether g's inputs have these shapes, in order.
bool takes_shapes(const Graph& g, const std::vector<Shape>& shapes);

// One input signature seen, over the sessions that ran it (a dropped one may come back).
struct ShapeRecord {
  std::string signature;  // input_signature_text, then the values the graph is specialised to
  std::map<std::string, Shape> shapes;
  int sessions = 0;  // times a session was made for it (1 + times it came back after being dropped)
  int iterations = 0;                // over all its sessions
  int compiled = 0, from_cache = 0;  // region kernels: compiled, found in the kernel cache
  int carried = 0;                   // regions that took a verdict from another signature
  int kernels_before = 0, kernels_now = 0;
  bool live = false;  // its session is in the cache now
};

class ShapeSessions {
 public:
  static constexpr size_t kDefaultCapacity = 4;

  // `target` and `machine` as for Session, shared by every session; `options` for each
  // (after the first, without the warm-up's minimum time: the process is warm).
  // The verdicts its sessions reach are kept in the target's disk cache for the next
  // process (verdict_store.h), unless HOTFUSE_VERDICTS=off (hf::Error for a bad value).
  ShapeSessions(GraphForInputs make_graph, SessionTarget target, const MachinePeak& machine,
                SessionOptions options, size_t capacity = kDefaultCapacity);
  ~ShapeSessions();  // records the verdicts reached since the last switch

  // The session for these inputs' signature (in the target's memory): the cached one, or
  // a new one for a graph made by make_graph (the least recently used one is then dropped
  // when `capacity` are kept). Outputs of an earlier run() are invalid after a switch.
  Session& session_for(std::span<const TensorView> inputs);
  std::span<const TensorView> run(std::span<const TensorView> inputs) {
    return session_for(inputs).run(inputs);
  }

  // Every signature seen, in the order first seen; numbers as of the last switch or call.
  const std::vector<ShapeRecord>& shapes();
  const ShapeRecord& shape_now();  // of the last session_for's signature
  const RegionVerdicts& verdicts() const { return verdicts_; }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry;
  bool matches(const Entry& e, std::span<const TensorView> inputs) const;
  void update(Entry& e);  // its ShapeRecord and verdicts from its session

  GraphForInputs make_graph_;
  SessionTarget target_;
  MachinePeak machine_;
  SessionOptions options_;
  size_t capacity_;
  std::list<std::unique_ptr<Entry>> entries_;  // most recently used first
  std::vector<ShapeRecord> shapes_;
  RegionVerdicts verdicts_;
  bool warm_ = false;  // a session has been made
};

}  // namespace hf
