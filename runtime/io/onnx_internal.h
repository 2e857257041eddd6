// Internals of the ONNX importer (runtime/io/onnx_*.cpp); nothing outside runtime/io/onnx_*
// includes this. The public API is onnx_import.h.
//
//   onnx_import.cpp  the driver: model, opsets, inputs, initializers, node loop, outputs,
//                    naming and the final rebuild (dead code dropped, ONNX names kept)
//   onnx_tensor.cpp  element types, ConstTensor, TensorProto decoding (raw, typed, external)
//   onnx_fold.cpp    constant folding (shape subgraphs and small constant math)
//   onnx_legacy.cpp  nodes of opsets 1-6 rewritten into their opset-7 form
//   onnx_lower.cpp   ONNX ops lowered to hotfuse graph nodes
//   onnx_lower_nn.cpp  Conv, pooling, Concat/Slice/Gather/Split on run-time data
//   onnx_lower_norm.cpp  LayerNormalization, BatchNormalization, GroupNormalization,
//   RMSNormalization
//   onnx_lower_attention.cpp  Attention and RotaryEmbedding (opsets 23-25)
//   onnx_lower_resize.cpp  Resize and Upsample
//   onnx_lower_sampling.cpp  GridSample, RoiAlign, AffineGrid, CenterCropPad
//   onnx_lower_rnn.cpp  RNN, GRU and LSTM unrolled over the sequence
//   onnx_lower_order.cpp  CumSum, CumProd, TopK, ReverseSequence
//   onnx_lower_einsum.cpp  Einsum
//   onnx_lower_scatter.cpp  GatherND, ScatterND, ScatterElements/Scatter
//   onnx_lower_quant.cpp  QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
//   onnx_lower_qlinear.cpp  MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
#pragma once
#include <onnx/onnx_pb.h>
#include <functional>

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/io/onnx_import.h"
#include "runtime/ir/error.h"
#include "runtime/ir/graph.h"

namespace hf::onnx_detail {

namespace pb = ::ONNX_NAMESPACE;

// --- element types (ONNX TensorProto::DataType values) ---------------------------------

std::string elem_type_name(int32_t t);  // "FLOAT", "INT64", ... ("type 42" if unknown)
std::optional<DType> to_dtype(int32_t t);
// The element types to_dtype maps, for the messages that refuse the others (STRING, the
// complex and 8-, 4- and 2-bit float and integer types).
inline constexpr const char* kOnnxComputedTypes =
    "FLOAT DOUBLE FLOAT16 BFLOAT16 INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64 BOOL";
int32_t to_elem_type(DType t);
bool is_float_elem(int32_t t);    // FLOAT FLOAT16 BFLOAT16 DOUBLE
bool is_numeric_elem(int32_t t);  // the float types, the integer types and BOOL

// Overflow-checked element count (at most kMaxElements, shape.h); throws
// hf::Error("<what> has too many elements ...").
int64_t checked_numel(const Shape& s, const std::string& what);

// A tensor known while importing: an initializer, a Constant node or a folded value. Float
// types keep their values in `f` (rounded to the type), the others in `i` (wrapped to the
// type's width; BOOL is 0 or 1).
struct ConstTensor {
  int32_t type = 0;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool floating() const { return is_float_elem(type); }
  int64_t size() const {
    return floating() ? static_cast<int64_t>(f.size()) : static_cast<int64_t>(i.size());
  }
  double as_double(int64_t k) const {
    return floating()                        ? f[k]
           : type == pb::TensorProto::UINT64 ? static_cast<double>(static_cast<uint64_t>(i[k]))
                                             : static_cast<double>(i[k]);
  }
  // Integer value of element k; throws if a float element is not an integer.
  int64_t as_int(int64_t k) const;
  std::vector<int64_t> ints() const;  // every element through as_int
};

ConstTensor make_const(int32_t type, Shape shape);  // zero-filled
ConstTensor int64_tensor(Shape shape, std::vector<int64_t> values);
ConstTensor from_host(const HostTensor& t);  // its elements, in its own type
double round_to(int32_t type, double v);     // float types: rounded as the runtime stores it
int64_t wrap_to(int32_t type, int64_t v);    // integer types: modulo the width; BOOL: != 0
// Element k of `from` converted as ONNX Cast (and hotfuse TypeCvt) converts it, stored in `to`.
void cast_element(const ConstTensor& from, int64_t k, ConstTensor& to, int64_t at);

// Decodes an initializer or a Constant's value. External data is read from `model_dir`
// (empty: external data is an error). Messages name nothing; callers prefix them.
ConstTensor decode_tensor(const pb::TensorProto& t, const std::filesystem::path& model_dir);
// The same tensor's values straight into the runtime's type, its raw bytes copied: where
// they are raw (inline or external) and the runtime's element has their layout; nullopt
// otherwise (decode_tensor then). Weights take this path, without 8 bytes per element between.
std::optional<HostTensor> raw_host_tensor(const pb::TensorProto& t,
                                          const std::filesystem::path& model_dir);
// The bytes its elements take in their own type, as the dimensions declare (overflow-checked).
int64_t tensor_bytes(const pb::TensorProto& t);

// --- shape rules shared by folding and lowering (throw hf::Error on bad arguments) -------

Shape reshape_shape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero);
Shape squeeze_shape(const Shape& in, const std::optional<std::vector<int64_t>>& axes);
Shape unsqueeze_shape(const Shape& in, const std::vector<int64_t>& axes);
Shape flatten_shape(const Shape& in, int64_t axis);
int norm_axis(int64_t axis, int rank, const char* what);

// --- the node being imported ------------------------------------------------------------

struct OnnxNode {
  const pb::NodeProto* p = nullptr;
  int index = 0;
  int opset = 0;
  std::string label;  // "node 12 'conv1' (Conv)"

  const std::string& op() const { return p->op_type(); }
  const pb::AttributeProto* attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, std::optional<int64_t> fallback = {}) const;
  double attr_float(const std::string& name, std::optional<double> fallback = {}) const;
  std::string attr_str(const std::string& name, std::optional<std::string> fallback = {}) const;
  std::optional<std::vector<int64_t>> attr_ints(const std::string& name) const;
  std::vector<double> attr_floats(const std::string& name) const;
  const pb::TensorProto* attr_tensor(const std::string& name) const;

  int num_inputs() const { return p->input_size(); }
  bool has_input(int k) const { return k < p->input_size() && !p->input(k).empty(); }
  const std::string& input(int k) const { return p->input(k); }
  int num_outputs() const { return p->output_size(); }
  bool wants_output(int k) const { return k < p->output_size() && !p->output(k).empty(); }
};

// --- the importer -----------------------------------------------------------------------

// Where the importer needs a constant that is computed, through foldable ops, from graph
// inputs whose values are given (OnnxImportOptions::input_values; e.g. Range's limit as
// Cast(size)): the import starts again with those inputs as constants throughout, so the
// ops between them and the operand fold. A refusal like any other when it names nothing new.
struct NeedsGivenInputs : Error {
  NeedsGivenInputs(const std::string& message, std::vector<std::string> names)
      : Error(message), inputs(std::move(names)) {}
  std::vector<std::string> inputs;
};
// A conv / pool window over the spatial axes of [N, C, spatial...] (onnx_lower_nn.cpp):
// one entry per axis, pads begin then end.
struct WindowSpec {
  std::vector<int64_t> kernel, strides, dilations, pads;
  // The window over some of the axes, in that order; -1 an axis with a window of 1.
  WindowSpec pick(std::initializer_list<int> axes) const;
  Attrs attrs(bool with_dilations) const;  // strides, pads (and dilations) for the op table
};
// Node n's integer-list attribute `name`, else `fallback`.
std::vector<int64_t> ints_or(const OnnxNode& n, const char* name, std::vector<int64_t> fallback);
// Node n's kernel_shape (given), strides, dilations and pads over x (rank 3 to 5), auto_pad
// resolved (SAME_UPPER puts the odd padding at the end, SAME_LOWER at the beginning);
// dilations other than 1 are an error unless `dilations`.
WindowSpec resolve_window(const OnnxNode& n, const Shape& x, std::vector<int64_t> kernel,
                          bool dilations);
// The same as the op table's 2-D strides, pads (and dilations) for x of rank 3 or 4 (3:
// kernel comes back with an H entry of 1 prepended); rank 5 is refused (Importer::conv_3d
// takes 3-D convolutions).
Attrs window_attrs(const OnnxNode& n, const Shape& x, std::vector<int64_t>& kernel, bool dilations);

class Importer {
 public:
  // `constant_inputs`: graph inputs whose given values (options.input_values) are constants
  // for the whole import (NeedsGivenInputs).
  Importer(const pb::ModelProto& model, std::string origin, std::filesystem::path model_dir,
           const OnnxImportOptions& options, std::unordered_set<std::string> constant_inputs = {});
  Graph run();

  // Elements a fold may produce: beyond this the value is computed at run time instead
  // (arithmetic on larger tensors, or an error for ops that are only folded).
  static constexpr int64_t kFoldArithmetic = int64_t(1) << 16;
  static constexpr int64_t kFoldStructural = int64_t(1) << 22;
  // Initializers with more elements drop their decoded values until needed (ConstEntry).
  static constexpr int64_t kKeepDecoded = 4096;
  // All folded values together (a hostile model must not fold its way out of memory).
  static constexpr int64_t kFoldBudget = int64_t(1) << 25;

 private:
  struct ConstEntry {
    // Its type and shape, and its values unless they were dropped (below).
    ConstTensor t;
    // A large initializer's values are decoded (and checked) once when read, then dropped
    // and decoded again from here when an op needs them: held as doubles, every weight of
    // a model at once would be twice the model, on top of the parsed file.
    const pb::TensorProto* proto = nullptr;
    std::optional<ValueId> materialized;  // its Constant node, once a runtime op needs it
  };
  // c.t with its values (decoded again if they were dropped).
  const ConstTensor& values(ConstEntry& c) const;
  struct Slot {
    std::optional<ValueId> rt;      // a graph value
    std::shared_ptr<ConstEntry> c;  // or a tensor known at import time
  };

  // driver (onnx_import.cpp)
  void read_opsets();
  void read_initializers();
  void read_inputs();
  void import_node(const pb::NodeProto& p, int index);
  void read_outputs();
  Graph rebuild();
  void check_declared(const pb::ValueInfoProto& vi, ValueId v);
  std::string fresh_name(const std::string& base);

  // access to the current node's inputs and outputs
  const Slot& slot(const std::string& name) const;
  bool is_const(int k) const;
  const ConstTensor& cst(int k) const;
  ValueId rt(int k);  // the graph value of input k (a constant is materialised)
  int32_t elem(int k) const;
  DType dtype(int k) const;
  Shape shape(int k) const;
  void set_rt(int k, ValueId v);
  void set_const(int k, ConstTensor t);
  void alias(int k, int in);  // output k is input `in`
  ValueId materialize(ConstEntry& c, const std::string& name);

  // emitting graph nodes for the current node
  ValueId emit(Node n, const std::string& tag);
  ValueId ew(Mode m, std::vector<ValueId> in, const std::string& tag = "");
  ValueId op1(OpType t, Attrs attrs, ValueId in, const std::string& tag = "");
  // 1 / sqrt(x): PowC(x, -0.5), or 1 / SQRT(x) for f64 (PowC computes in f32).
  ValueId inv_sqrt(ValueId x, const std::string& tag);
  ValueId scalar(DType t, double v);
  ValueId constant(const ConstTensor& t, const std::string& tag);
  // A Constant node of `shape` filled with element 0 of `value` (never held here in full).
  ValueId splat(const ConstTensor& value, const Shape& shape, const std::string& tag);
  ValueId reshape(ValueId v, const Shape& s);
  ValueId cvt(ValueId v, DType t);
  ValueId reduce(ValueId v, const char* mode, const std::vector<int64_t>& axes, bool keepdims);
  ValueId where(ValueId cond, ValueId a, ValueId b);
  const Shape& shape_of(ValueId v) const { return g_.value(v).shape; }
  DType dtype_of(ValueId v) const { return g_.value(v).dtype; }

  // opsets 1-6 (onnx_legacy.cpp): the node (cur_'s, a copy) rewritten into its opset-7 form
  void upgrade_legacy(pb::NodeProto& n);
  std::string legacy_const(ConstTensor t, const std::string& what);
  // folding (onnx_fold.cpp): true if the node was computed at import time
  bool try_fold();
  // Whether a folded result of n elements stays within the limits.
  bool fold_fits(int64_t n) const { return n <= kFoldStructural && folded_ + n <= kFoldBudget; }
  // lowering (onnx_lower.cpp)
  void lower();
  void lower_unary(Mode m);
  void lower_binary(Mode m, bool swap = false);
  void lower_variadic(Mode m);
  void lower_reduce(const char* mode);
  void lower_softmax(bool log);
  ValueId softmax(ValueId x, const std::vector<int64_t>& axes, bool log);
  // normalisations (onnx_lower_norm.cpp)
  struct Standardized {
    ValueId y, mean, inv_std;
  };
  Standardized standardize(ValueId x, const std::vector<int64_t>& axes, double eps);
  void expect_vectors(std::initializer_list<const char*> names, int64_t n);
  void lower_layernorm();
  void lower_batchnorm();
  void lower_groupnorm();
  void lower_instancenorm();
  void lower_rmsnorm();
  void lower_mvn();
  void lower_lp_normalization();
  // transformer blocks (onnx_lower_attention.cpp)
  void lower_attention();
  void lower_rotary_embedding();
  // recurrent layers (onnx_lower_rnn.cpp)
  void lower_rnn();  // RNN, GRU, LSTM
  // ops over the order of an axis (onnx_lower_order.cpp)
  void lower_cumulative(bool product);  // CumSum, CumProd
  void lower_topk();
  void lower_reverse_sequence();
  void lower_einsum();  // onnx_lower_einsum.cpp
  void lower_matmul();
  ValueId matmul(ValueId a, ValueId b);  // NumPy matmul (1-D operands included)
  void lower_gemm();
  void lower_clip();
  void lower_div();
  void lower_mod();
  void lower_gelu();
  void lower_pow();
  ValueId int_pow(ValueId x);
  void lower_round();
  ValueId round_even(ValueId x);  // ONNX Round: half to even
  void lower_cast(int32_t to);
  void lower_dropout();
  // ops on an index along an axis (onnx_lower_index.cpp)
  ValueId iota(int64_t n, int axis, int rank, int32_t type);
  ValueId arg_extreme(ValueId x, int axis, bool max, bool last);
  ValueId nll_loss(ValueId input, ValueId target, std::optional<ValueId> weight);
  void lower_argmax(bool max);
  ValueId element_positions(Shape data_shape);  // onnx_lower_index.cpp
  void lower_gather_elements();
  void lower_hardmax();
  void lower_trilu();
  void fold_window(const ConstTensor& size);  // Hann/Hamming/BlackmanWindow (onnx_fold.cpp)
  void lower_nll();
  void lower_softmax_cross_entropy();
  // GatherND, ScatterND, ScatterElements and Scatter (onnx_lower_scatter.cpp)
  std::string scatter_reduction();
  ValueId nd_rows(int k_in, const Shape& ds, int b);
  ValueId scatter_rows(ValueId data, ValueId rows, ValueId updates, int64_t lead_axes,
                       const std::string& reduction);
  void lower_gather_nd();
  void lower_scatter_nd();
  void lower_scatter_elements();
  void lower_tensor_scatter();
  // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (onnx_lower_quant.cpp)
  ValueId quant_param(ValueId p, const Shape& xs, const char* what);
  void lower_quantize();
  void lower_dequantize();
  void lower_dynamic_quantize();
  // MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv (onnx_lower_qlinear.cpp)
  ValueId shifted(int k, int k_zp, int axis, int rank);
  ValueId requantize(ValueId acc, ValueId factor, int k_zp, int32_t fallback);
  void lower_int_matmul(bool qlinear);
  void lower_int_conv(bool qlinear);
  // layout ops from Slice/Concat/Broadcast/Reshape/Dimshuffle (onnx_lower_layout.cpp)
  ValueId slice_axis(ValueId v, int axis, int64_t start, int64_t end, int64_t step = 1);
  ValueId concat_axis(std::vector<ValueId> parts, int axis);
  ValueId broadcast_to(ValueId v, const Shape& s);
  void lower_pad();
  void lower_depth_space(bool to_space);
  void lower_tile();
  // resampling (onnx_lower_resize.cpp, onnx_lower_sampling.cpp)
  void lower_resize();
  void lower_grid_sample();
  void lower_roi_align();
  void lower_affine_grid();
  void lower_center_crop_pad();
  void lower_onehot();
  void lower_eyelike();
  // convolution, pooling and data movement (onnx_lower_nn.cpp); false: not one of those
  bool lower_nn();
  void lower_conv();
  ValueId conv(ValueId x, ValueId w, std::optional<ValueId> bias);
  // A 3-D Conv over x [N, C, D, H, W] with window `win` as 2-D Convs (onnx_lower_nn.cpp).
  ValueId conv_3d(ValueId x, ValueId w, std::optional<ValueId> bias, const WindowSpec& win,
                  int64_t group);
  void lower_pool(bool max);
  void lower_global_pool(bool max);
  ValueId as_2d(ValueId x);                 // [N, C, W] as [N, C, 1, W]
  ValueId from_2d(ValueId y, int spatial);  // and back when spatial is 1
  // A separable 3-D window op on x [N, C, D, H, W] as two 2-D ones: `op` over (H, W) of x
  // seen as [N, C·D, H, W], then over D of that seen as [N, C, D, OH·OW].
  using WindowOp = std::function<ValueId(ValueId, const WindowSpec&)>;
  ValueId separable_3d(ValueId x, const WindowSpec& w, const WindowOp& op);
  // ConvTranspose, LpPool and LRN as Conv (onnx_lower_window.cpp)
  ValueId filled(DType t, double v, const Shape& shape, const std::string& tag);
  void lower_conv_transpose();
  void lower_lppool();
  ValueId window_sum(ValueId x, const WindowSpec& w);
  ValueId avg_pool_dilated(ValueId x, WindowSpec w, bool include_pad, bool ceil);
  // MaxPool's Indices output for x [N, C, H, W] and its pooled y (w: y's 2-D window).
  ValueId max_pool_indices(ValueId x, ValueId y, const WindowSpec& w, bool w_major);
  void lower_lrn();
  void lower_max_unpool();
  void lower_slice();
  void lower_split();
  void lower_concat();
  void lower_gather();
  std::optional<std::vector<int64_t>> axes_arg(int input, const char* attr_name);
  std::vector<int64_t> const_ints(int k, const char* what);
  // OnnxImportOptions::input_values for input k when it is a graph input given there (then
  // recorded in Graph::specialised_inputs).
  std::optional<ConstTensor> given_input(int k);
  // Input k's value at import time: a constant, or a graph input's given value. Else an
  // error naming `what` and saying how to give it (need_constant).
  ConstTensor known(int k, const char* what);
  // The current node needs inputs `ks` as constants and they are not: NeedsGivenInputs when
  // they are computed from graph inputs whose values are given and not yet constants,
  // else hf::Error(message).
  [[noreturn]] void need_constant(const std::vector<int>& ks, const std::string& message);
  [[noreturn]] void unsupported(const std::string& why = "");

  const pb::ModelProto& model_;
  std::string origin_;
  std::filesystem::path dir_;
  OnnxImportOptions options_;
  int opset_ = 0;
  Graph g_;
  std::unordered_map<std::string, Slot> slots_;
  std::vector<std::string> bound_;            // ONNX names in the order they were bound
  std::unordered_set<std::string> reserved_;  // every ONNX value name
  std::unordered_set<std::string> initializer_names_;
  std::vector<std::string> specialised_;  // graph inputs whose given values were used
  std::unordered_set<std::string> constant_inputs_;
  std::unordered_map<std::string, int> producer_;  // ONNX value name -> index of its node
  std::vector<ValueId> graph_inputs_;
  std::vector<ValueId> graph_outputs_;
  std::vector<std::string> output_names_;
  std::map<std::pair<int, uint64_t>, ValueId> scalars_;
  const OnnxNode* cur_ = nullptr;
  std::string cur_base_;  // name prefix for the current node's graph nodes and values
  int helper_ = 0;
  int64_t folded_ = 0;  // elements produced by folding so far
};

}  // namespace hf::onnx_detail
