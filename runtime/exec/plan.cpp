#include "runtime/exec/plan.h"

#include <algorithm>
#include <map>

#include "runtime/ir/constant.h"
#include "runtime/ir/error.h"
#include "runtime/ir/memory_cap.h"

namespace hf {

namespace {

// Whether `out` may be written into the buffer of `in` (which dies at this step).
bool in_place_ok(const Graph& g, const Node& n, ValueId in, ValueId out, const Backend& backend) {
  const Value& a = g.value(in);
  const Value& b = g.value(out);
  if (a.shape == b.shape && a.dtype == b.dtype && n.outputs.size() == 1 &&
      backend.writes_over(g, n, in))
    return true;
  // The same bytes under another shape or type: the kernel then has nothing to copy.
  if (n.op == OpType::Reshape || n.op == OpType::BitCast)
    return numel(a.shape) * dtype_size(a.dtype) == numel(b.shape) * dtype_size(b.dtype);
  bool per_element = n.op == OpType::Elemwise || n.op == OpType::PowC || n.op == OpType::TypeCvt;
  return per_element && a.shape == b.shape && dtype_size(a.dtype) == dtype_size(b.dtype);
}

size_t value_bytes(const Value& v) {
  // At least one byte so every value has a distinct, valid pointer.
  return std::max<size_t>(1, static_cast<size_t>(numel(v.shape)) * dtype_size(v.dtype));
}

}  // namespace

Plan::Plan(const Graph& g, Backend& backend, std::span<const ValueId> observe, const Plan* lender)
    : backend_(backend) {
  std::vector<NodeId> order = g.topo_order();
  const size_t nv = g.values().size();

  // Where each value dies: the index of the last step reading it (or never, for outputs).
  constexpr size_t kForever = SIZE_MAX;
  std::vector<size_t> last_use(nv, 0);
  for (size_t s = 0; s < order.size(); ++s)
    for (ValueId v : g.node(order[s]).inputs) last_use[v] = s;
  for (ValueId v : g.outputs()) last_use[v] = kForever;
  for (ValueId v : observe) {
    if (v < 0 || static_cast<size_t>(v) >= nv || g.value(v).producer == kNoNode ||
        g.node(g.value(v).producer).dead)
      throw Error("graph '" + printable(g.name) + "': cannot observe value " + std::to_string(v) +
                  ": not computed by a live node");
    last_use[v] = kForever;
  }

  std::vector<int> input_index(nv, -1);
  for (size_t i = 0; i < g.inputs().size(); ++i) input_index[g.inputs()[i]] = static_cast<int>(i);

  struct Buf {
    size_t bytes;
    void* ptr = nullptr;
    bool pinned = false;  // lives past the iteration (graph output, observed, constant)
  };
  std::vector<Buf> bufs;
  std::vector<int> buf_of(nv, -1);
  if (backend_.reads_host_memory())
    for (NodeId id : order) {
      const Node& n = g.node(id);
      if (n.op == OpType::Constant && dynamic_cast<const ConstantData*>(n.payload.get()))
        shared_constants_.emplace(n.outputs[0], constant_value(g, n));
    }
  std::multimap<size_t, int> free_bufs;  // bytes -> buffer

  auto take_buffer = [&](size_t bytes) {
    auto it = free_bufs.lower_bound(bytes);
    if (it != free_bufs.end() && it->first <= 2 * bytes) {
      int b = it->second;
      free_bufs.erase(it);
      return b;
    }
    bufs.push_back({bytes});
    return static_cast<int>(bufs.size()) - 1;
  };

  for (size_t s = 0; s < order.size(); ++s) {
    const Node& n = g.node(order[s]);
    std::vector<int> dying;  // buffers of inputs whose last use is this step
    // A Constant's buffer is written once, when the plan is built: it must outlive every
    // iteration, so it never dies (nor is it overwritten in place).
    for (ValueId v : n.inputs)
      if (last_use[v] == s && buf_of[v] >= 0 && !is_constant(g, v) &&
          std::find(dying.begin(), dying.end(), buf_of[v]) == dying.end())
        dying.push_back(buf_of[v]);
    for (ValueId out : n.outputs) {
      if (shared_constants_.count(out)) continue;  // read in place: no buffer
      const Value& v = g.value(out);
      bool pinned = last_use[out] == kForever || n.op == OpType::Constant;
      int chosen = -1;
      if (!pinned)
        for (ValueId in : n.inputs)
          if (last_use[in] == s && buf_of[in] >= 0 && in_place_ok(g, n, in, out, backend_)) {
            auto it = std::find(dying.begin(), dying.end(), buf_of[in]);
            if (it == dying.end()) continue;
            chosen = *it;
            dying.erase(it);
            break;
          }
      if (chosen < 0) {
        if (pinned) {
          bufs.push_back({value_bytes(v), nullptr, true});
          chosen = static_cast<int>(bufs.size()) - 1;
        } else {
          chosen = take_buffer(value_bytes(v));
        }
      }
      bufs[chosen].bytes = std::max(bufs[chosen].bytes, value_bytes(v));
      buf_of[out] = chosen;
    }
    for (int b : dying) free_bufs.emplace(bufs[b].bytes, b);
    // Outputs nobody reads die at once (but are still written).
    for (ValueId out : n.outputs)
      if (last_use[out] == 0 && g.consumers(out).empty() && n.op != OpType::Constant &&
          std::find(g.outputs().begin(), g.outputs().end(), out) == g.outputs().end())
        free_bufs.emplace(bufs[buf_of[out]].bytes, buf_of[out]);
  }

  // The lender's scratch buffers, smallest first, each taken by at most one of ours: the
  // largest of ours first, each the smallest that holds it.
  std::multimap<size_t, const Buffer*> lendable;
  if (lender && &lender->backend_ == &backend_)
    for (const Buffer& b : lender->buffers_)
      if (b.scratch) lendable.emplace(b.bytes, &b);
  std::vector<const Buffer*> lent_to(bufs.size(), nullptr);
  std::vector<size_t> by_size(bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) by_size[i] = i;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return bufs[a].bytes > bufs[b].bytes; });
  for (size_t i : by_size) {
    if (bufs[i].pinned) continue;
    auto it = lendable.lower_bound(bufs[i].bytes);
    if (it == lendable.end()) continue;
    lent_to[i] = it->second;
    lendable.erase(it);
  }
  size_t total = 0;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (!lent_to[i]) total += bufs[i].bytes;
  check_memory_cap(total, "graph '" + printable(g.name) + "': the planned buffers");
  auto view_of = [&](ValueId v) {
    const Value& val = g.value(v);
    void* p = buf_of[v] >= 0 ? bufs[buf_of[v]].ptr : nullptr;
    if (auto c = shared_constants_.find(v); c != shared_constants_.end()) p = c->second.data();
    return contiguous_view(p, val.dtype, val.shape);
  };

  // An allocation or kernel that fails (out of device memory, an unsupported node) throws:
  // the buffers taken so far are members, released as the constructor unwinds.
  for (size_t i = 0; i < bufs.size(); ++i) {
    Buffer b;
    if (lent_to[i]) {
      b = *lent_to[i];
      b.lent = true;
      lent_bytes_ += bufs[i].bytes;
    } else {
      Backend* owner = &backend_;
      b.memory = std::shared_ptr<void>(backend_.alloc(bufs[i].bytes),
                                       [owner](void* p) { owner->free(p); });
      b.bytes = bufs[i].bytes;
      b.scratch = !bufs[i].pinned;
    }
    bufs[i].ptr = b.memory.get();
    buffer_bytes_ += bufs[i].bytes;
    buffers_.push_back(std::move(b));
  }

  for (NodeId id : order) {
    const Node& n = g.node(id);
    // Constants are folded once, here, for every backend, and never become steps.
    if (n.op == OpType::Constant) {
      if (shared_constants_.count(n.outputs[0])) continue;
      HostTensor value = constant_value(g, n);
      backend_.upload(view_of(n.outputs[0]).data, value.data(), value.bytes());
      continue;
    }
    Step st;
    st.node = id;
    st.kernel = backend_.make_kernel(g, n);
    for (ValueId v : n.inputs) st.inputs.push_back(view_of(v));
    for (ValueId v : n.outputs) st.outputs.push_back(view_of(v));
    steps_.push_back(std::move(st));
  }

  input_uses_.resize(g.inputs().size());
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Node& n = g.node(steps_[s].node);
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (input_index[n.inputs[k]] >= 0) input_uses_[input_index[n.inputs[k]]].push_back({s, k});
  }

  for (ValueId v : observe) observed_.emplace(v, view_of(v));
  for (ValueId v : g.outputs()) {
    output_is_input_.push_back(input_index[v]);
    outputs_.push_back(view_of(v));
  }
}

Plan::~Plan() = default;

bool Plan::touch_pages(size_t max_bytes) {
  if (!backend_.reads_host_memory()) return true;
  constexpr size_t kPage = 4096;
  size_t done = 0;
  while (touched_buffer_ < buffers_.size()) {
    const Buffer& b = buffers_[touched_buffer_];
    auto* p = static_cast<volatile unsigned char*>(b.memory.get());
    const size_t size = b.lent ? 0 : b.bytes;  // the lender's pages are in
    for (; touched_bytes_ < size; touched_bytes_ += kPage, done += kPage) {
      if (done >= max_bytes) return false;
      p[touched_bytes_] = p[touched_bytes_];  // a write, so the page is really mapped
    }
    ++touched_buffer_;
    touched_bytes_ = 0;
  }
  return true;
}

const TensorView& Plan::observed(ValueId v) const {
  auto it = observed_.find(v);
  if (it == observed_.end()) throw Error("value " + std::to_string(v) + " is not observed");
  return it->second;
}

void Plan::bind_input(size_t i, void* data) {
  for (const InputUse& u : input_uses_[i]) steps_[u.step].inputs[u.slot].data = data;
  for (size_t o = 0; o < outputs_.size(); ++o)
    if (output_is_input_[o] == static_cast<int>(i)) outputs_[o].data = data;
}

}  // namespace hf
