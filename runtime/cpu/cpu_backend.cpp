#include "runtime/cpu/cpu_backend.h"

#include <cstring>
#include <functional>
#include <stdexcept>

#include "runtime/cpu/conv_onednn.h"
#include "runtime/cpu/epilogue_program.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/matmul_onednn.h"
#include "runtime/cpu/nn_kernels.h"
#include "runtime/cpu/resample_kernels.h"
#include "runtime/ir/constant.h"
#include "runtime/ir/conv_post_ops.h"
#include "runtime/ir/epilogue.h"
#include "runtime/ir/error.h"
#include "runtime/ir/op_table.h"

namespace hf::cpu {

namespace {

// The constant behind an input when the graph shares its values (ConstantData): it names
// the weights for packed_weights.h and keeps them alive while a kernel holds it.
std::shared_ptr<const void> constant_owner(const Graph& g, ValueId v) {
  const NodeId p = g.value(v).producer;
  if (p == kNoNode || g.node(p).op != OpType::Constant ||
      !dynamic_cast<const ConstantData*>(g.node(p).payload.get()))
    return nullptr;
  return g.node(p).payload;
}

using RunFn = std::function<void(std::span<const TensorView>, std::span<const TensorView>)>;

class FnKernel final : public Kernel {
 public:
  explicit FnKernel(RunFn fn) : fn_(std::move(fn)) {}
  void run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    fn_(in, out);
  }

 private:
  RunFn fn_;
};

}  // namespace

std::unique_ptr<Kernel> CpuBackend::make_nn_kernel(const Graph& g, const Node& n) {
  ThreadPool& pool = *pool_;
  const Shape& x = g.value(n.inputs[0]).shape;
  switch (n.op) {
    case OpType::Conv: {
      ConvGeometry geo = conv_geometry(n, x, g.value(n.inputs[1]).shape);
      auto conv =
          std::make_shared<Conv2d>(geo, pool, g.value(n.inputs[0]).dtype,
                                   is_constant(g, n.inputs[1]), constant_owner(g, n.inputs[1]));
      return std::make_unique<FnKernel>([conv](auto in, auto out) {
        conv->run(in[0], in[1], in.size() > 2 ? &in[2] : nullptr, out[0]);
      });
    }
    case OpType::MaxPool:
    case OpType::AveragePool: {
      PoolGeometry geo = pool_geometry(n, x);
      bool max = n.op == OpType::MaxPool;
      return std::make_unique<FnKernel>(
          [geo, max, &pool](auto in, auto out) { pool2d(max, geo, in[0], out[0], pool); });
    }
    case OpType::Concat: {
      int axis = axis_attr(n, static_cast<int>(x.size()));
      return std::make_unique<FnKernel>(
          [axis, &pool](auto in, auto out) { concat(axis, in, out[0], pool); });
    }
    case OpType::Slice: {
      SliceGeometry geo = slice_geometry(n, x);
      return std::make_unique<FnKernel>(
          [geo, &pool](auto in, auto out) { slice(geo, in[0], out[0], pool); });
    }
    case OpType::Gather: {
      int axis = axis_attr(n, static_cast<int>(x.size()));
      // An index out of range is bad input data: an hf::Error naming the node.
      return std::make_unique<FnKernel>([axis, &pool, what = describe(n)](auto in, auto out) {
        try {
          gather(axis, in[0], in[1], out[0], pool);
        } catch (const std::out_of_range& e) {
          throw Error(what + ": " + e.what());
        }
      });
    }
    case OpType::Resize: {
      auto k = std::make_shared<ResizeKernel>(resize_geometry(n, x));
      return std::make_unique<FnKernel>(
          [k, &pool](auto in, auto out) { k->run(in[0], out[0], pool); });
    }
    case OpType::GridSample: {
      GridSampleGeometry geo = grid_sample_geometry(n, x, g.value(n.inputs[1]).shape);
      return std::make_unique<FnKernel>(
          [geo, &pool](auto in, auto out) { grid_sample(geo, in[0], in[1], out[0], pool); });
    }
    case OpType::RoiAlign: {
      RoiAlignGeometry geo =
          roi_align_geometry(n, x, g.value(n.inputs[1]).shape, g.value(n.inputs[2]).shape);
      // A batch index out of range is bad input data: an hf::Error naming the node.
      return std::make_unique<FnKernel>([geo, &pool, what = describe(n)](auto in, auto out) {
        try {
          roi_align(geo, in[0], in[1], in[2], out[0], pool);
        } catch (const std::out_of_range& e) {
          throw Error(what + ": " + e.what());
        }
      });
    }
    case OpType::ScatterRows: {
      auto r = parse_scatter_reduction(n.attr_str("reduction"));
      if (!r) throw Error(describe(n) + ": unknown reduction '" + n.attr_str("reduction") + "'");
      return std::make_unique<FnKernel>([r = *r, &pool, what = describe(n)](auto in, auto out) {
        try {
          scatter_rows(r, in[0], in[1], in[2], out[0], pool);
        } catch (const std::out_of_range& e) {
          throw Error(what + ": " + e.what());
        }
      });
    }
    default:
      throw Error(describe(n) + ": not a convolution, pooling or data-movement op");
  }
}

std::unique_ptr<Kernel> CpuBackend::make_matmul_kernel(const Graph& g, const Node& n) {
  ThreadPool& pool = *pool_;
  const Value& a = g.value(n.inputs[0]);
  const Value& b = g.value(n.inputs[1]);
  std::shared_ptr<OnednnMatmul> fast;
  if (a.dtype == DType::F32 && b.dtype == DType::F32)
    fast = OnednnMatmul::create(a.shape, b.shape, g.value(n.outputs[0]).shape, pool.size(),
                                is_constant(g, n.inputs[1]), constant_owner(g, n.inputs[1]));
  return std::make_unique<FnKernel>([fast, &pool](auto in, auto out) {
    if (fast && in[0].is_contiguous() && in[1].is_contiguous() && out[0].is_contiguous())
      fast->run(in[0].template as<const float>(), in[1].template as<const float>(),
                out[0].template as<float>(), pool);
    else
      matmul(in[0], in[1], out[0], pool);
  });
}

// The heavy op's kernel reports each block of its output as written, and the epilogue runs
// on that block there and then (epilogue_program.h).
std::unique_ptr<Kernel> CpuBackend::make_epilogue_kernel(const Graph& g, const Node& n) {
  const auto& e = dynamic_cast<const HeavyEpilogue&>(*n.payload);
  ThreadPool& pool = *pool_;
  std::vector<Shape> shapes;
  for (ValueId v : n.inputs) shapes.push_back(g.value(v).shape);
  const Shape& out = g.value(n.outputs[0]).shape;
  auto program = std::make_shared<EpilogueProgram>(e, out, shapes);
  const std::vector<int> hi = e.heavy_inputs;
  auto heavy_in = [hi](std::span<const TensorView> in, size_t k) -> const TensorView& {
    return in[hi[k]];
  };
  auto value = [&](size_t k) -> const Value& { return g.value(n.inputs[hi[k]]); };
  switch (e.heavy.op) {
    case OpType::MatMul: {
      std::shared_ptr<OnednnMatmul> fast =
          OnednnMatmul::create(value(0).shape, value(1).shape, out, pool.size(),
                               is_constant(g, n.inputs[hi[1]]), constant_owner(g, n.inputs[hi[1]]));
      return std::make_unique<FnKernel>([fast, program, heavy_in, &pool](auto in, auto o) {
        const TensorView &a = heavy_in(in, 0), &b = heavy_in(in, 1);
        float* y = o[0].template as<float>();
        OnBlock on_block = [&](const OutBlock& blk) { program->apply(y, in, blk); };
        if (fast && a.is_contiguous() && b.is_contiguous() && o[0].is_contiguous()) {
          fast->run(a.template as<const float>(), b.template as<const float>(), y, pool, on_block);
        } else {
          matmul(a, b, o[0], pool);
          for_each_block(o[0].numel(), pool, on_block);
        }
      });
    }
    case OpType::Conv: {
      ConvGeometry geo = conv_geometry(e.heavy, value(0).shape, value(1).shape);
      // In registers where oneDNN's post-ops say it exactly: no pass over the output.
      if (std::optional<ConvEpilogue> ce = conv_epilogue(e, shapes, out, geo.nhwc)) {
        std::shared_ptr<OnednnConv> fused =
            OnednnConv::create(geo, pool.size(), is_constant(g, n.inputs[hi[1]]), ce->post,
                               constant_owner(g, n.inputs[hi[1]]));
        if (fused) {
          const std::vector<int> ops = ce->operands;
          const bool bias = hi.size() > 2;
          return std::make_unique<FnKernel>([fused, heavy_in, ops, bias, &pool](auto in, auto o) {
            std::vector<const float*> data;
            for (int i : ops) data.push_back(in[i].template as<const float>());
            fused->run(heavy_in(in, 0).template as<const float>(),
                       heavy_in(in, 1).template as<const float>(),
                       bias ? heavy_in(in, 2).template as<const float>() : nullptr,
                       o[0].template as<float>(), pool, data);
          });
        }
      }
      auto conv =
          std::make_shared<Conv2d>(geo, pool, value(0).dtype, is_constant(g, n.inputs[hi[1]]),
                                   constant_owner(g, n.inputs[hi[1]]));
      const bool bias = hi.size() > 2;
      return std::make_unique<FnKernel>([conv, program, heavy_in, bias](auto in, auto o) {
        float* y = o[0].template as<float>();
        // The Conv writes each block before the program reads the operands there: an
        // operand the output is written over (writes_over) is read from a copy.
        thread_local std::vector<float> alias_copy;
        std::vector<TensorView> views;  // empty (no allocation) unless an input is the output
        std::span<const TensorView> ins = in;
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i].data == o[0].data) {
            if (views.empty()) views.assign(in.begin(), in.end());
            alias_copy.assign(y, y + o[0].numel());
            views[i].data = alias_copy.data();
            ins = views;
          }
        conv->run(heavy_in(ins, 0), heavy_in(ins, 1), bias ? &heavy_in(ins, 2) : nullptr, o[0],
                  [&](const OutBlock& blk) { program->apply(y, ins, blk); });
      });
    }
    default:
      throw Error(describe(n) + ": no CPU kernel runs an epilogue on " +
                  std::string(op_type_name(e.heavy.op)));
  }
}

CpuBackend::CpuBackend(ThreadPool* pool) : pool_(pool ? pool : &ThreadPool::global()) {}

bool CpuBackend::writes_over(const Graph& g, const Node& n, ValueId input) const {
  const auto* e =
      n.op == OpType::Fused ? dynamic_cast<const HeavyEpilogue*>(n.payload.get()) : nullptr;
  if (!e || e->heavy.op != OpType::Conv || n.outputs.size() != 1 || e->heavy_inputs.size() < 2)
    return false;
  for (ValueId v : n.inputs)
    if (g.value(v).dtype != DType::F32) return false;
  // The Conv reads its own inputs whole, before and while it writes.
  for (int k : e->heavy_inputs)
    if (n.inputs[k] == input) return false;
  std::vector<Shape> shapes;
  for (ValueId v : n.inputs) shapes.push_back(g.value(v).shape);
  const Shape& out = g.value(n.outputs[0]).shape;
  const ConvGeometry geo =
      conv_geometry(e->heavy, shapes[e->heavy_inputs[0]], shapes[e->heavy_inputs[1]]);
  const std::optional<ConvEpilogue> ce = conv_epilogue(*e, shapes, out, geo.nhwc);
  return ce && leads_with_residual(ce->post) &&
         n.inputs[ce->operands[ce->post[0].operand]] == input;
}

std::unique_ptr<Kernel> CpuBackend::make_kernel(const Graph& g, const Node& n) {
  ThreadPool& pool = *pool_;
  switch (n.op) {
    case OpType::Elemwise: {
      Mode mode = n.mode;
      // Shapes are fixed per plan: the broadcast views are built on the first run, later
      // runs only swap data pointers, so iterations allocate nothing.
      auto bcast = std::make_shared<std::vector<TensorView>>();
      return std::make_unique<FnKernel>([mode, &pool, bcast](auto in, auto out) {
        if (bcast->empty())
          for (const TensorView& v : in)
            bcast->push_back(v.shape == out[0].shape ? v : v.broadcast_to(out[0].shape));
        for (size_t i = 0; i < in.size(); ++i) (*bcast)[i].data = in[i].data;
        elemwise(mode, *bcast, out[0], pool);
      });
    }
    case OpType::PowC: {
      float e = static_cast<float>(n.attr_float("exponent"));
      return std::make_unique<FnKernel>(
          [e, &pool](auto in, auto out) { pow_const(in[0], e, out[0], pool); });
    }
    case OpType::TypeCvt:
      return std::make_unique<FnKernel>(
          [&pool](auto in, auto out) { type_convert(in[0], out[0], pool); });
    case OpType::Reduce: {
      ReduceMode mode = *parse_reduce_mode(n.attr_str("mode"));
      const Shape& in_shape = g.value(n.inputs[0]).shape;
      std::vector<int> axes = reduce_axes(n, static_cast<int>(in_shape.size()));
      Shape kept = in_shape;
      for (int a : axes) kept[a] = 1;
      return std::make_unique<FnKernel>([mode, axes, kept, &pool](auto in, auto out) {
        TensorView o = contiguous_view(out[0].data, out[0].dtype, kept);
        reduce(mode, in[0], axes, o, pool);
      });
    }
    case OpType::Dimshuffle: {
      std::vector<int> perm = dimshuffle_perm(n, g.value(n.inputs[0]).shape.size());
      return std::make_unique<FnKernel>([perm, &pool](auto in, auto out) {
        TensorView src{in[0].data, in[0].dtype, out[0].shape, Strides(perm.size(), 0)};
        for (size_t i = 0; i < perm.size(); ++i)
          if (perm[i] >= 0) src.strides[i] = in[0].strides[perm[i]];
        copy(src, out[0], pool);
      });
    }
    case OpType::BitCast:  // the same bytes under another type
      return std::make_unique<FnKernel>([&pool](auto in, auto out) {
        if (in[0].data != out[0].data)  // else the plan gave it its input's buffer
          copy(contiguous_view(in[0].data, out[0].dtype, out[0].shape), out[0], pool);
      });
    case OpType::Det:
      return std::make_unique<FnKernel>(
          [&pool](auto in, auto out) { determinant(in[0], out[0], pool); });
    case OpType::Reshape:
      return std::make_unique<FnKernel>([&pool](auto in, auto out) {
        if (in[0].data != out[0].data)  // else the plan gave it its input's buffer
          copy(contiguous_view(in[0].data, in[0].dtype, out[0].shape), out[0], pool);
      });
    case OpType::Broadcast:
      return std::make_unique<FnKernel>(
          [&pool](auto in, auto out) { copy(in[0].broadcast_to(out[0].shape), out[0], pool); });
    case OpType::Constant:  // the plan folds constants (runtime/ir/constant.h)
      break;
    case OpType::MatMul:
      return make_matmul_kernel(g, n);
    case OpType::Conv:
    case OpType::MaxPool:
    case OpType::AveragePool:
    case OpType::Concat:
    case OpType::Slice:
    case OpType::Gather:
    case OpType::Resize:
    case OpType::GridSample:
    case OpType::RoiAlign:
    case OpType::ScatterRows:
      return make_nn_kernel(g, n);
    case OpType::Fused:
      if (dynamic_cast<const HeavyEpilogue*>(n.payload.get())) return make_epilogue_kernel(g, n);
      throw Error(describe(n) +
                  ": fused nodes run through the fusion engine's kernels, "
                  "not the unfused CPU backend");
  }
  throw Error(describe(n) + ": not supported by the CPU backend");
}

}  // namespace hf::cpu
