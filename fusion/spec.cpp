#include "fusion/spec.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace hf::fusion {

bool KernelSpec::flat() const {
  if (reduce || row_stages()) return false;
  for (const SpecInput& in : inputs)
    if (!in.scalar && !in.dense) return false;
  return true;
}

namespace {
// Appends each field's bytes: the spec's canonical encoding.
struct Encoder {
  std::string out;
  template <class T>
  void operator()(T v) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
};
}  // namespace

std::string KernelSpec::canonical() const {
  // Field by field (never struct bytes: padding is not stable), with counts as separators.
  Encoder f;
  f(uint32_t{2});  // encoding version: bump when the meaning of a field changes
  f(rank);
  f(inputs.size());
  for (const SpecInput& in : inputs) {
    f(in.dtype);
    f(in.broadcast_mask);
    f(in.dense);
    f(in.scalar);
  }
  f(exprs.size());
  for (const SpecExpr& e : exprs) {
    f(e.kind);
    f(e.dtype);
    f(e.mode);
    for (int a : e.args) f(a);
    f(e.input);
    f(e.value);
    if (e.kind == ExprKind::RowReduce) f(e.reduce_mode);  // absent before: old hashes stay
  }
  f(outputs.size());
  for (const SpecOutput& o : outputs) {
    f(o.expr);
    f(o.dtype);
    f(o.reduced);
  }
  f(reduce.has_value());
  if (reduce) {
    f(reduce->mode);
    f(reduce->expr);
    f(reduce->first_axis);
  }
  if (row_stages()) f(row_axis);
  return std::move(f.out);
}

uint64_t KernelSpec::hash() const {
  // FNV-1a: the same values as before the encoding was split out, so kernel names and the
  // disk entries keyed by their sources stay the same.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : canonical()) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string KernelSpec::hash_hex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash()));
  return buf;
}

}  // namespace hf::fusion
