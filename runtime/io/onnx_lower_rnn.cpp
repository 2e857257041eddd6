// ONNX RNN, GRU and LSTM (opsets 7, 14, 22) unrolled over the sequence, which hotfuse's
// static shapes make known at import time. Each direction is:
//   - the input projection of every time step in one MatMul, X [S*B, I] x W^T [I, G*H], plus
//     the biases, laid out gate-major [G, S, B, H] so a step's gate is one Slice;
//   - per step and gate, H_{t-1} x R_g^T (a MatMul whose element-wise epilogue, the gate math,
//     fusion can take), the activations and the state update as Elemwise nodes;
//   - sequence_lens, when given and not all equal to the sequence length, as a mask: a step
//     past a sample's length keeps its state and writes 0 to Y. In the reverse direction the
//     masked steps come first, so the state stays at initial_h until the sample's last step:
//     exactly the per-sample reversal the spec describes.
// The gate formulas are the spec's (onnx.ai/onnx/operators/onnx__LSTM.html and its GRU and RNN
// pages), in the input's type.
#include <algorithm>
#include <cctype>
#include <map>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An activation with its alpha and beta (spec defaults where activation_alpha/beta run out).
struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

// How many of activation_alpha / activation_beta each activation consumes, and its defaults
// (the values of the ONNX op of the same name; Affine and ScaledTanh: the identity's).
struct ActivationArgs {
  int alphas, betas;
  double alpha, beta;
};
const std::map<std::string, ActivationArgs>& activation_table() {
  static const std::map<std::string, ActivationArgs> t = {
      {"relu", {0, 0, 0, 0}},           {"tanh", {0, 0, 0, 0}},
      {"sigmoid", {0, 0, 0, 0}},        {"softsign", {0, 0, 0, 0}},
      {"softplus", {0, 0, 0, 0}},       {"affine", {1, 1, 1.0, 0.0}},
      {"leakyrelu", {1, 0, 0.01, 0}},   {"thresholdedrelu", {1, 0, 1.0, 0}},
      {"scaledtanh", {1, 1, 1.0, 1.0}}, {"hardsigmoid", {1, 1, 0.2, 0.5}},
      {"elu", {1, 0, 1.0, 0}},
  };
  return t;
}

}  // namespace

void Importer::lower_rnn() {
  const OnnxNode& n = *cur_;
  const std::string& op = n.op();
  const bool gru = op == "GRU", lstm = op == "LSTM";
  const int64_t G = lstm ? 4 : gru ? 3 : 1;  // gates

  // --- attributes ---
  const std::string direction = n.attr_str("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    throw Error("direction must be forward, reverse or bidirectional, not '" + direction + "'");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = n.opset >= 14 ? n.attr_int("layout", 0) : 0;
  if (layout != 0 && layout != 1) throw Error("layout must be 0 or 1, not " + str(layout));
  const bool linear_before_reset = gru && n.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = lstm && n.attr_int("input_forget", 0) != 0;
  std::optional<double> clip;
  if (n.has_attr("clip")) {
    clip = n.attr_float("clip");
    if (!(*clip > 0)) throw Error("clip must be positive");
  }
  if (n.has_attr("output_sequence"))  // opset 1 only; gone from opset 7
    unsupported("the opset-1 attribute output_sequence");

  // Activations: per direction RNN f (Tanh), GRU f, g (Sigmoid, Tanh), LSTM f, g, h
  // (Sigmoid, Tanh, Tanh); bidirectional lists the forward ones, then the reverse ones.
  const std::vector<std::string> defaults =
      lstm  ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
      : gru ? std::vector<std::string>{"sigmoid", "tanh"}
            : std::vector<std::string>{"tanh"};
  std::vector<Activation> acts;
  {
    std::vector<std::string> names;
    if (const pb::AttributeProto* a = n.attr("activations"))
      for (const std::string& s : a->strings()) names.push_back(lower_case(s));
    if (names.empty()) names = defaults;
    if (dirs == 2 && names.size() == defaults.size()) {  // one list for both directions
      const std::vector<std::string> once = names;
      names.insert(names.end(), once.begin(), once.end());
    }
    if (names.size() != defaults.size() * static_cast<size_t>(dirs))
      throw Error("activations has " + str(static_cast<int64_t>(names.size())) +
                  " entries, expected " + str(static_cast<int64_t>(defaults.size()) * dirs));
    // activation_alpha / activation_beta are consumed in order by the activations that take
    // them (as onnxruntime does), defaults where they run out.
    auto floats = [&](const char* name) {
      return n.has_attr(name) ? n.attr_floats(name) : std::vector<double>{};
    };
    const std::vector<double> alphas = floats("activation_alpha");
    const std::vector<double> betas = floats("activation_beta");
    size_t ai = 0, bi = 0;
    for (const std::string& name : names) {
      auto it = activation_table().find(name);
      if (it == activation_table().end())
        throw Error("activation '" + name +
                    "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                    "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
      Activation a{name, it->second.alpha, it->second.beta};
      if (it->second.alphas && ai < alphas.size()) a.alpha = alphas[ai++];
      if (it->second.betas && bi < betas.size()) a.beta = betas[bi++];
      acts.push_back(a);
    }
  }

  // --- inputs ---
  ValueId x = rt(0);
  const DType t = dtype_of(x);
  if (!is_float(t)) throw Error("X must be a float tensor");
  if (shape_of(x).size() != 3)
    throw Error("X has shape " + to_string(shape_of(x)) + ", expected rank 3");
  const Attrs swap01{{"perm", std::vector<int64_t>{1, 0, 2}}};  // its own inverse
  if (layout == 1) x = op1(OpType::Dimshuffle, swap01, x, "x_time_major");
  const int64_t S = shape_of(x)[0], B = shape_of(x)[1], I = shape_of(x)[2];
  auto typed = [&](int k, const char* what) {
    ValueId v = rt(k);
    if (dtype_of(v) != t)
      throw Error(std::string(what) + " is " + std::string(dtype_name(dtype_of(v))) + ", X is " +
                  std::string(dtype_name(t)));
    return v;
  };
  ValueId w = typed(1, "W"), r = typed(2, "R");
  const Shape ws = shape_of(w), rs = shape_of(r);
  if (rs.size() != 3 || rs[0] != dirs || rs[1] != G * rs[2])
    throw Error("R has shape " + to_string(rs) + ", expected [" + str(dirs) + ", " + str(G) +
                "*hidden_size, hidden_size]");
  const int64_t H = rs[2];
  if (n.has_attr("hidden_size") && n.attr_int("hidden_size") != H)
    throw Error("hidden_size " + str(n.attr_int("hidden_size")) + " does not match R " +
                to_string(rs));
  if (ws != Shape{dirs, G * H, I})
    throw Error("W has shape " + to_string(ws) + ", expected " + to_string(Shape{dirs, G * H, I}));
  if (S == 0 || B == 0 || H == 0 || I == 0)
    unsupported("an empty sequence, batch, input or hidden size");
  std::optional<ValueId> bias;
  if (n.has_input(3)) {
    bias = typed(3, "B");
    if (shape_of(*bias) != Shape{dirs, 2 * G * H})
      throw Error("B has shape " + to_string(shape_of(*bias)) + ", expected " +
                  to_string(Shape{dirs, 2 * G * H}));
  }
  // sequence_lens: no mask when it is absent or a constant equal to S everywhere.
  std::optional<ValueId> lens;  // [B, 1] INT64
  if (n.has_input(4)) {
    if (shape(4) != Shape{B})
      throw Error("sequence_lens has shape " + to_string(shape(4)) + ", expected [" + str(B) + "]");
    bool full = false;
    if (is_const(4)) {
      std::vector<int64_t> v = cst(4).ints();
      for (int64_t l : v)
        if (l < 0 || l > S)
          throw Error("sequence_lens holds " + str(l) + ", outside [0, " + str(S) + "]");
      full = std::all_of(v.begin(), v.end(), [&](int64_t l) { return l == S; });
    } else if (is_float(dtype(4))) {
      throw Error("sequence_lens must be an integer tensor");
    }
    if (!full) lens = reshape(cvt(rt(4), DType::I64), {B, 1});
  }
  // initial_h / initial_c: [dirs, B, H] ([B, dirs, H] in layout 1).
  auto initial = [&](int k, const char* what) -> std::optional<ValueId> {
    if (!n.has_input(k)) return std::nullopt;
    ValueId v = typed(k, what);
    if (layout == 1) v = op1(OpType::Dimshuffle, swap01, v, std::string(what) + "_dir_major");
    if (shape_of(v) != Shape{dirs, B, H})
      throw Error(std::string(what) + " has shape " + to_string(shape(k)) +
                  ", which does not fit num_directions " + str(dirs) + ", batch " + str(B) +
                  " and hidden_size " + str(H) + " in layout " + str(layout));
    return v;
  };
  std::optional<ValueId> h0 = initial(5, "initial_h");
  std::optional<ValueId> c0 = lstm ? initial(6, "initial_c") : std::nullopt;
  std::optional<ValueId> peep;
  if (lstm && n.has_input(7)) {
    peep = typed(7, "P");
    if (shape_of(*peep) != Shape{dirs, 3 * H})
      throw Error("P has shape " + to_string(shape_of(*peep)) + ", expected " +
                  to_string(Shape{dirs, 3 * H}));
  }

  // --- building blocks ---
  auto s = [&](double v) { return scalar(t, v); };
  auto matmul = [&](ValueId a, ValueId b, const std::string& tag) {
    Node m;
    m.op = OpType::MatMul;
    m.inputs = {a, b};
    return emit(std::move(m), tag);
  };
  auto transpose2 = [&](ValueId v, const std::string& tag) {
    return op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{1, 0}}}, v, tag);
  };
  // Row d of a [dirs, ...] tensor, as [...].
  auto of_dir = [&](ValueId v, int64_t d) {
    Shape sh = shape_of(v);
    sh.erase(sh.begin());
    return reshape(slice_axis(v, 0, d, d + 1), sh);
  };
  // clip bounds the gates' inputs; LSTM's h(C) takes C unclipped (as onnxruntime does).
  // Rows [r0, r1) of direction d of input k (W, R: [dirs, rows, cols], B, P: [dirs, rows]),
  // transposed if asked: made here when the input is a constant (an initializer: the weights
  // then stay Constant nodes, which the plan folds once and oneDNN packs once), else Slice and
  // Dimshuffle nodes on the run-time value v.
  auto piece = [&](int k, ValueId v, int64_t d, int64_t r0, int64_t r1, bool transpose,
                   const std::string& tag) -> ValueId {
    if (!is_const(k)) {
      ValueId p = slice_axis(of_dir(v, d), 0, r0, r1);
      return transpose ? transpose2(p, tag) : p;
    }
    const ConstTensor& c = cst(k);
    const int64_t rows = c.shape[1], cols = c.shape.size() == 3 ? c.shape[2] : 1, n = r1 - r0;
    ConstTensor out = make_const(c.type, c.shape.size() == 2 ? Shape{n}
                                         : transpose         ? Shape{cols, n}
                                                             : Shape{n, cols});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < cols; ++j)
        out.f[transpose ? j * n + i : i * cols + j] = c.f[(d * rows + r0 + i) * cols + j];
    return constant(out, tag);
  };
  auto activate = [&](const Activation& a, ValueId v, bool clipped = true) -> ValueId {
    if (clip && clipped) v = ew(Mode::CLIP, {v, s(-*clip), s(*clip)}, "clip");
    const std::string& f = a.name;
    if (f == "sigmoid") return ew(Mode::SIGMOID, {v});
    if (f == "tanh") return ew(Mode::TANH, {v});
    if (f == "relu") return ew(Mode::RELU, {v});
    if (f == "affine") return ew(Mode::FUSE_MUL_ADD3, {v, s(a.alpha), s(a.beta)}, "affine");
    if (f == "leakyrelu") return ew(Mode::PRELU, {v, s(a.alpha)}, "leakyrelu");
    if (f == "thresholdedrelu")  // v > alpha ? v : 0
      return ew(Mode::SWITCH_GT0, {ew(Mode::SUB, {v, s(a.alpha)}), v}, "thresholdedrelu");
    if (f == "scaledtanh")
      return ew(Mode::MUL, {ew(Mode::TANH, {ew(Mode::MUL, {v, s(a.beta)})}), s(a.alpha)},
                "scaledtanh");
    if (f == "hardsigmoid")
      return ew(Mode::CLIP, {ew(Mode::FUSE_MUL_ADD3, {v, s(a.alpha), s(a.beta)}), s(0), s(1)},
                "hardsigmoid");
    if (f == "elu")  // RELU(v) + alpha * EXPM1(MIN(v, 0)), as the Elu op
      return ew(Mode::FUSE_MUL_ADD3,
                {ew(Mode::EXPM1, {ew(Mode::MIN, {v, s(0)})}), s(a.alpha), ew(Mode::RELU, {v})},
                "elu");
    if (f == "softsign")
      return ew(Mode::TRUE_DIV, {v, ew(Mode::ADD, {ew(Mode::ABS, {v}), s(1)})}, "softsign");
    return ew(Mode::SOFTPLUS, {v});  // softplus (the table admits nothing else)
  };
  ValueId x2 = reshape(x, {S * B, I});
  ValueId zero_bh = broadcast_to(reshape(s(0), {1, 1}), {B, H});

  std::vector<ValueId> ys, yhs, ycs;  // per direction: [S, 1, B, H], [1, B, H], [1, B, H]
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const std::vector<Activation> act(acts.begin() + d * defaults.size(),
                                      acts.begin() + (d + 1) * defaults.size());
    const std::string dn = "dir" + str(d);
    // Input projection of every step at once, biases included: [G, S, B, H].
    ValueId xp = matmul(x2, piece(1, w, d, 0, G * H, true, dn + "/w_t"), dn + "/x_proj");
    std::optional<ValueId> rbh;  // GRU linear_before_reset: R's h-gate bias, inside r (.)
    if (bias) {
      // B is [Wb, Rb]; without linear_before_reset both go into the input projection.
      const int64_t in_gates = linear_before_reset ? 2 : G;
      ValueId b_in = ew(Mode::ADD,
                        {piece(3, *bias, d, 0, in_gates * H, false, dn + "/wb"),
                         piece(3, *bias, d, G * H, (G + in_gates) * H, false, dn + "/rb")},
                        dn + "/bias");
      if (linear_before_reset) {
        b_in = concat_axis({b_in, piece(3, *bias, d, 2 * H, 3 * H, false, dn + "/wbh")}, 0);
        rbh = piece(3, *bias, d, 5 * H, 6 * H, false, dn + "/rbh");
      }
      xp = ew(Mode::ADD, {xp, b_in}, dn + "/x_proj_bias");
    }
    xp = op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{2, 0, 1, 3}}},
             reshape(xp, {S, B, G, H}), dn + "/x_proj_gates");
    std::vector<ValueId> r_t;  // per gate R_g^T [H, H]
    for (int64_t g = 0; g < G; ++g)
      r_t.push_back(piece(2, r, d, g * H, (g + 1) * H, true, dn + "/r_t"));
    std::optional<ValueId> p_i, p_o, p_f;  // P is [Pi, Po, Pf]
    if (peep) {
      p_i = piece(7, *peep, d, 0, H, false, dn + "/p_i");
      p_o = piece(7, *peep, d, H, 2 * H, false, dn + "/p_o");
      p_f = piece(7, *peep, d, 2 * H, 3 * H, false, dn + "/p_f");
    }

    ValueId h = h0 ? of_dir(*h0, d) : zero_bh;
    ValueId c = c0 ? of_dir(*c0, d) : zero_bh;
    std::vector<ValueId> y_at(S);
    for (int64_t step = 0; step < S; ++step) {
      const int64_t ts = reverse ? S - 1 - step : step;
      const std::string tag = dn + "/t" + str(ts);
      auto x_gate = [&](int64_t g) {
        Attrs a{{"starts", std::vector<int64_t>{g, ts}},
                {"ends", std::vector<int64_t>{g + 1, ts + 1}},
                {"axes", std::vector<int64_t>{0, 1}},
                {"steps", std::vector<int64_t>{1, 1}}};
        return reshape(op1(OpType::Slice, a, xp, tag + "/x_gate"), {B, H});
      };
      // x_g + H_{t-1} R_g^T
      auto pre = [&](int64_t g, ValueId hh) {
        return ew(Mode::ADD, {matmul(hh, r_t[g], tag + "/h_proj"), x_gate(g)}, tag + "/gate");
      };
      ValueId h_new = h, c_new = c;
      if (lstm) {  // gates i, o, f, c
        ValueId ip = pre(0, h);
        if (p_i) ip = ew(Mode::FUSE_MUL_ADD3, {*p_i, c, ip}, tag + "/peep_i");
        ValueId ig = activate(act[0], ip);
        ValueId fg;
        if (input_forget) {
          fg = ew(Mode::SUB, {s(1), ig}, tag + "/forget");
        } else {
          ValueId fp = pre(2, h);
          if (p_f) fp = ew(Mode::FUSE_MUL_ADD3, {*p_f, c, fp}, tag + "/peep_f");
          fg = activate(act[0], fp);
        }
        ValueId cg = activate(act[1], pre(3, h));
        c_new = ew(Mode::ADD, {ew(Mode::MUL, {fg, c}), ew(Mode::MUL, {ig, cg})}, tag + "/c");
        ValueId op_ = pre(1, h);
        if (p_o) op_ = ew(Mode::FUSE_MUL_ADD3, {*p_o, c_new, op_}, tag + "/peep_o");
        ValueId og = activate(act[0], op_);
        h_new = ew(Mode::MUL, {og, activate(act[2], c_new, false)}, tag + "/h");
      } else if (gru) {  // gates z, r, h
        ValueId z = activate(act[0], pre(0, h));
        ValueId rg = activate(act[0], pre(1, h));
        ValueId hp;
        if (linear_before_reset) {
          ValueId hr = matmul(h, r_t[2], tag + "/h_proj");
          if (rbh) hr = ew(Mode::ADD, {hr, *rbh}, tag + "/rbh");
          hp = ew(Mode::FUSE_MUL_ADD3, {rg, hr, x_gate(2)}, tag + "/gate");
        } else {
          hp = pre(2, ew(Mode::MUL, {rg, h}, tag + "/reset"));
        }
        ValueId hh = activate(act[1], hp);
        // (1 - z) (.) h~ + z (.) H_{t-1}
        h_new =
            ew(Mode::ADD, {ew(Mode::MUL, {ew(Mode::SUB, {s(1), z}), hh}), ew(Mode::MUL, {z, h})},
               tag + "/h");
      } else {
        h_new = activate(act[0], pre(0, h));
      }
      if (lens) {  // steps past a sample's length keep the state and write 0
        ValueId live =
            ew(Mode::LT, {scalar(DType::I64, static_cast<double>(ts)), *lens}, tag + "/live");
        y_at[ts] = where(live, h_new, zero_bh);
        h_new = where(live, h_new, h);
        if (lstm) c_new = where(live, c_new, c);
      } else {
        y_at[ts] = h_new;
      }
      h = h_new;
      c = c_new;
    }
    if (n.wants_output(0)) {
      for (ValueId& y : y_at) y = reshape(y, {1, 1, B, H});
      ys.push_back(concat_axis(y_at, 0));
    }
    yhs.push_back(reshape(h, {1, B, H}));
    if (lstm) ycs.push_back(reshape(c, {1, B, H}));
  }

  auto both = [&](std::vector<ValueId> parts, int axis) {
    return parts.size() == 1 ? parts[0] : concat_axis(std::move(parts), axis);
  };
  if (n.wants_output(0)) {
    ValueId y = both(ys, 1);  // [S, dirs, B, H]
    if (layout == 1)
      y = op1(OpType::Dimshuffle, {{"perm", std::vector<int64_t>{2, 0, 1, 3}}}, y, "y_batch_major");
    set_rt(0, y);
  }
  auto state_out = [&](int k, std::vector<ValueId> parts) {
    if (!n.wants_output(k)) return;
    ValueId v = both(std::move(parts), 0);  // [dirs, B, H]
    if (layout == 1) v = op1(OpType::Dimshuffle, swap01, v, "state_batch_major");
    set_rt(k, v);
  };
  state_out(1, yhs);
  if (lstm) state_out(2, ycs);
}

}  // namespace hf::onnx_detail
