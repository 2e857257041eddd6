// ONNX Einsum (opset 12). Two f32 operands with a label summed between them are one batched
// MatMul (Dimshuffle and Reshape to [batch..., M, K] and [batch..., K, N], the product put back
// in the output's order). Otherwise every operand is laid over one axis order (the output's labels,
// then the summed ones) by a Dimshuffle that inserts size-1 axes for its missing labels, the
// operands multiplied (MUL broadcasts), and the summed labels reduced (Reduce SUM). Mul and
// Reduce fuse into one kernel under fusion. A label summed that only one operand has is
// reduced in that operand first; a label repeated within one operand (a diagonal, "ii->i")
// keeps the elements where its axes agree (where with an identity mask, SUM over one of them).
// Ellipsis axes broadcast NumPy-style, aligned to the right. The full product is O(product of
// all label sizes); beyond kProductLimit elements it is refused with a line that says so.
#include <algorithm>
#include <map>

#include "runtime/io/onnx_internal.h"

namespace hf::onnx_detail {

namespace {

constexpr int64_t kProductLimit = int64_t(1) << 24;

std::string str(int64_t v) {
  return std::to_string(v);
}

// Labels: letters as their char code, ellipsis axis k (of E, counted from the left) as -1 - k.
using Labels = std::vector<int>;

// A term ("ab...c") into labels; `ell` receives how many axes the ellipsis covers given the
// operand's rank (-1 when the term has no ellipsis).
Labels parse_term(const std::string& term, int rank, int ell_total, int* ell_rank,
                  const std::string& what) {
  Labels out;
  int letters = 0;
  size_t dots = term.find("...");
  for (size_t k = 0; k < term.size(); ++k) {
    if (k == dots) {
      k += 2;
      continue;
    }
    char c = term[k];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      throw Error("equation: " + what + " '" + term + "' holds '" + std::string(1, c) +
                  "', not a letter or '...'");
    ++letters;
  }
  if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
    throw Error("equation: " + what + " '" + term + "' has more than one ellipsis");
  int er = -1;
  if (dots != std::string::npos) {
    er = rank >= 0 ? rank - letters : ell_total;
    if (er < 0)
      throw Error("equation: " + what + " '" + term + "' names more axes than its rank " +
                  str(rank));
  } else if (rank >= 0 && letters != rank) {
    throw Error("equation: " + what + " '" + term + "' names " + str(letters) +
                " axes, its rank is " + str(rank));
  }
  for (size_t k = 0; k < term.size(); ++k) {
    if (k == dots) {
      for (int e = ell_total - er; e < ell_total; ++e) out.push_back(-1 - e);
      k += 2;
      continue;
    }
    out.push_back(term[k]);
  }
  if (ell_rank) *ell_rank = er;
  return out;
}

}  // namespace

void Importer::lower_einsum() {
  const OnnxNode& n = *cur_;
  std::string eq;
  for (char c : n.attr_str("equation"))
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const int count = n.num_inputs();
  if (static_cast<int>(terms.size()) != count)
    throw Error("equation '" + eq + "' has " + str(static_cast<int64_t>(terms.size())) +
                " operands, the node " + str(count) + " inputs");
  std::vector<ValueId> xs;
  for (int k = 0; k < count; ++k) xs.push_back(rt(k));
  const DType t = dtype_of(xs[0]);
  if (t == DType::Bool) throw Error("Einsum of BOOL is not supported");
  for (ValueId x : xs)
    if (dtype_of(x) != t) throw Error("the inputs differ in type");

  // Each operand's labels; ellipsis axes numbered over the widest ellipsis (E).
  int E = 0;
  for (int k = 0; k < count; ++k) {
    int er = -1;
    parse_term(terms[k], static_cast<int>(shape_of(xs[k]).size()), 0, &er, "operand");
    E = std::max(E, er);
  }
  std::vector<Labels> ops;
  std::map<int, int64_t> size;  // label -> size (ellipsis axes: broadcast)
  std::map<int, int> uses;      // letter -> occurrences over all operands
  bool any_ellipsis = false;
  for (int k = 0; k < count; ++k) {
    int er = -1;
    ops.push_back(parse_term(terms[k], static_cast<int>(shape_of(xs[k]).size()), E, &er,
                             "operand " + str(k)));
    any_ellipsis |= er >= 0;
    const Shape& s = shape_of(xs[k]);
    for (size_t a = 0; a < s.size(); ++a) {
      int l = ops[k][a];
      if (l >= 0) ++uses[l];
      auto [it, fresh] = size.emplace(l, s[a]);
      if (fresh || it->second == s[a]) continue;
      if (l < 0 && (it->second == 1 || s[a] == 1)) {  // ellipsis axes broadcast
        it->second = std::max(it->second, s[a]);
        continue;
      }
      throw Error("equation '" + eq + "': label '" +
                  (l >= 0 ? std::string(1, char(l)) : std::string("...")) + "' has sizes " +
                  str(it->second) + " and " + str(s[a]));
    }
  }
  Labels out;
  if (arrow != std::string::npos) {
    out = parse_term(eq.substr(arrow + 2), -1, E, nullptr, "output");
    Labels seen;
    for (int l : out) {
      if (std::find(seen.begin(), seen.end(), l) != seen.end())
        throw Error("equation '" + eq + "': the output repeats a label");
      if (!size.count(l) && l >= 0)
        throw Error("equation '" + eq + "': output label '" + std::string(1, char(l)) +
                    "' is in no operand");
      seen.push_back(l);
    }
    if (E > 0 && eq.find("...", arrow) == std::string::npos)
      throw Error("equation '" + eq +
                  "': the operands have '...' axes, the output does not (as numpy, an error)");
  } else {  // implicit: the ellipsis, then the letters used once, in alphabetical order
    if (any_ellipsis)
      for (int e = 0; e < E; ++e) out.push_back(-1 - e);
    for (auto [l, c] : uses)
      if (c == 1) out.push_back(l);
  }
  auto in_out = [&](int l) { return std::find(out.begin(), out.end(), l) != out.end(); };

  // Per operand: diagonals of repeated labels, then the summed labels no other operand has.
  for (int k = 0; k < count; ++k) {
    Labels& ls = ops[k];
    ValueId& x = xs[k];
    for (size_t p = 0; p < ls.size(); ++p)
      for (size_t q = p + 1; q < ls.size(); ++q) {
        if (ls[p] != ls[q]) continue;
        const Shape s = shape_of(x);
        ConstTensor eye = make_const(pb::TensorProto::BOOL, [&] {
          Shape es(s.size(), 1);
          es[p] = s[p];
          es[q] = s[q];
          return es;
        }());
        for (int64_t i = 0; i < s[p]; ++i) eye.i[i * s[q] + i] = 1;
        x = reduce(where(constant(eye, "diagonal"), x, scalar(t, 0)), "SUM",
                   {static_cast<int64_t>(q)}, false);
        ls.erase(ls.begin() + q);
        --q;
      }
    std::vector<int64_t> alone;
    Labels kept;
    for (size_t a = 0; a < ls.size(); ++a) {
      bool elsewhere = false;
      for (int o = 0; o < count; ++o)
        if (o != k && std::find(ops[o].begin(), ops[o].end(), ls[a]) != ops[o].end())
          elsewhere = true;
      if (!in_out(ls[a]) && !elsewhere)
        alone.push_back(static_cast<int64_t>(a));
      else
        kept.push_back(ls[a]);
    }
    if (!alone.empty()) {
      x = reduce(x, "SUM", alone, false);
      ls = kept;
    }
  }

  // Two f32 operands with a label summed between them: a batched MatMul, A as
  // [batch..., M (its own labels), K (the summed ones)] and B as [batch..., K, N].
  if (count == 2 && t == DType::F32) {
    auto has = [](const Labels& ls, int l) {
      return std::find(ls.begin(), ls.end(), l) != ls.end();
    };
    Labels batch, afree, bfree, summed;
    for (int l : ops[0]) (has(ops[1], l) ? (in_out(l) ? batch : summed) : afree).push_back(l);
    for (int l : ops[1])
      if (!has(ops[0], l)) bfree.push_back(l);
    if (!summed.empty()) {
      auto arrange = [&](int k, const Labels& mid, const Labels& last) {
        std::vector<int64_t> perm;
        Shape s;
        const Shape& xs_k = shape_of(xs[k]);
        auto pos = [&](int l) {
          return static_cast<int64_t>(std::find(ops[k].begin(), ops[k].end(), l) - ops[k].begin());
        };
        for (int l : batch) {
          perm.push_back(pos(l));
          s.push_back(xs_k[pos(l)]);
        }
        for (const Labels* part : {&mid, &last}) {
          int64_t n = 1;
          for (int l : *part) {
            perm.push_back(pos(l));
            n *= xs_k[pos(l)];
          }
          s.push_back(n);
        }
        bool identity = true;
        for (size_t a = 0; a < perm.size(); ++a) identity &= perm[a] == int64_t(a);
        ValueId x = identity ? xs[k] : op1(OpType::Dimshuffle, {{"perm", perm}}, xs[k], "align");
        return reshape(x, s);
      };
      Node mm;
      mm.op = OpType::MatMul;
      mm.inputs = {arrange(0, afree, summed), arrange(1, summed, bfree)};
      ValueId y = emit(std::move(mm), "matmul");
      Labels got = batch;
      got.insert(got.end(), afree.begin(), afree.end());
      got.insert(got.end(), bfree.begin(), bfree.end());
      Shape gs;
      for (int l : got) gs.push_back(size[l]);
      y = reshape(y, gs);
      std::vector<int64_t> perm;
      for (int l : out)
        perm.push_back(static_cast<int64_t>(std::find(got.begin(), got.end(), l) - got.begin()));
      bool identity = true;
      for (size_t a = 0; a < perm.size(); ++a) identity &= perm[a] == int64_t(a);
      return set_rt(0, identity ? y : op1(OpType::Dimshuffle, {{"perm", perm}}, y, "output"));
    }
  }

  // The common order: the output's labels, then the summed ones.
  Labels order = out;
  for (const Labels& ls : ops)
    for (int l : ls)
      if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  double product = 1;
  for (int l : order) product *= double(size.count(l) ? size[l] : 1);
  if (count > 1 && product > double(kProductLimit))
    throw Error("equation '" + eq + "': the product over all labels holds " +
                std::to_string(static_cast<long long>(product)) +
                " elements, more than hotfuse's lowering allows (" + str(kProductLimit) +
                "): not supported");
  std::optional<ValueId> acc;
  for (int k = 0; k < count; ++k) {
    std::vector<int64_t> perm;
    for (int l : order) {
      auto it = std::find(ops[k].begin(), ops[k].end(), l);
      perm.push_back(it == ops[k].end() ? -1 : static_cast<int64_t>(it - ops[k].begin()));
    }
    bool identity = perm.size() == ops[k].size();
    for (size_t a = 0; identity && a < perm.size(); ++a) identity = perm[a] == int64_t(a);
    ValueId x = identity ? xs[k] : op1(OpType::Dimshuffle, {{"perm", perm}}, xs[k], "align");
    acc = acc ? ew(Mode::MUL, {*acc, x}, "product") : x;
  }
  ValueId y = *acc;
  std::vector<int64_t> summed;
  for (size_t a = out.size(); a < order.size(); ++a) summed.push_back(static_cast<int64_t>(a));
  if (!summed.empty()) y = reduce(y, "SUM", summed, false);
  Shape ys;
  for (int l : out) ys.push_back(size.count(l) ? size[l] : 1);
  set_rt(0, broadcast_to(y, ys));
}

}  // namespace hf::onnx_detail
