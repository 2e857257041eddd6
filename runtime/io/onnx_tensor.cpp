// ONNX element types, ConstTensor and TensorProto decoding (raw_data, the typed fields and
// external data files next to the model), plus the shape rules shared by folding and
// lowering.
#include <algorithm>
#include <cmath>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "runtime/io/onnx_internal.h"
#include "runtime/ir/memory_cap.h"
#include "runtime/ops/half.h"

namespace hf::onnx_detail {

namespace fs = std::filesystem;
using TP = pb::TensorProto;

std::string elem_type_name(int32_t t) {
  switch (t) {
    case TP::FLOAT: return "FLOAT";
    case TP::UINT8: return "UINT8";
    case TP::INT8: return "INT8";
    case TP::UINT16: return "UINT16";
    case TP::INT16: return "INT16";
    case TP::INT32: return "INT32";
    case TP::INT64: return "INT64";
    case TP::STRING: return "STRING";
    case TP::BOOL: return "BOOL";
    case TP::FLOAT16: return "FLOAT16";
    case TP::DOUBLE: return "DOUBLE";
    case TP::UINT32: return "UINT32";
    case TP::UINT64: return "UINT64";
    case TP::COMPLEX64: return "COMPLEX64";
    case TP::COMPLEX128: return "COMPLEX128";
    case TP::BFLOAT16: return "BFLOAT16";
    case TP::UNDEFINED: return "UNDEFINED";
  }
  // Types of ONNX releases newer than the protobuf schema this build reads (opsets 19-28):
  // named, so a model that uses one is refused with the type's own name.
  static const char* const newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
                                      "FLOAT8E8M0", "UINT2", "INT2", "FLOAT6E2M3", "FLOAT6E3M2"};
  if (t >= 17 && t < 17 + static_cast<int32_t>(std::size(newer))) return newer[t - 17];
  return "type " + std::to_string(t);
}

std::optional<DType> to_dtype(int32_t t) {
  switch (t) {
    case TP::FLOAT: return DType::F32;
    case TP::FLOAT16: return DType::F16;
    case TP::BFLOAT16: return DType::BF16;
    case TP::INT32: return DType::I32;
    case TP::INT64: return DType::I64;
    case TP::BOOL: return DType::Bool;
    case TP::UINT8: return DType::U8;
    case TP::DOUBLE: return DType::F64;
    case TP::INT8: return DType::I8;
    case TP::INT16: return DType::I16;
    case TP::UINT16: return DType::U16;
    case TP::UINT32: return DType::U32;
    case TP::UINT64: return DType::U64;
  }
  return std::nullopt;
}

int32_t to_elem_type(DType t) {
  switch (t) {
    case DType::F32: return TP::FLOAT;
    case DType::F16: return TP::FLOAT16;
    case DType::BF16: return TP::BFLOAT16;
    case DType::I32: return TP::INT32;
    case DType::I64: return TP::INT64;
    case DType::Bool: return TP::BOOL;
    case DType::U8: return TP::UINT8;
    case DType::F64: return TP::DOUBLE;
    case DType::I8: return TP::INT8;
    case DType::I16: return TP::INT16;
    case DType::U16: return TP::UINT16;
    case DType::U32: return TP::UINT32;
    case DType::U64: return TP::UINT64;
  }
  return TP::UNDEFINED;
}

bool is_float_elem(int32_t t) {
  return t == TP::FLOAT || t == TP::FLOAT16 || t == TP::BFLOAT16 || t == TP::DOUBLE;
}

bool is_numeric_elem(int32_t t) {
  switch (t) {
    case TP::FLOAT: case TP::UINT8: case TP::INT8: case TP::UINT16: case TP::INT16:
    case TP::INT32: case TP::INT64: case TP::BOOL: case TP::FLOAT16: case TP::DOUBLE:
    case TP::UINT32: case TP::UINT64: case TP::BFLOAT16:
      return true;
  }
  return false;
}

int64_t checked_numel(const Shape& s, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw Error(what + " has a negative dimension in " + to_string(s));
    if (d != 0 && n > kMaxElements / d)
      throw Error(what + " has too many elements: " + to_string(s));
    n *= d;
  }
  // A zero dimension makes the count 0 whatever the others are; they are still bounded.
  for (int64_t d : s)
    if (d > kMaxElements) throw Error(what + " has too many elements: " + to_string(s));
  return n;
}

int64_t ConstTensor::as_int(int64_t k) const {
  if (!floating()) return i[k];
  double v = f[k];
  if (!(v == std::floor(v)) || std::fabs(v) > 9.2e18)
    throw Error("constant value " + std::to_string(v) + " is not an integer");
  return static_cast<int64_t>(v);
}

std::vector<int64_t> ConstTensor::ints() const {
  std::vector<int64_t> out(static_cast<size_t>(size()));
  for (int64_t k = 0; k < size(); ++k) out[k] = as_int(k);
  return out;
}

ConstTensor make_const(int32_t type, Shape shape) {
  ConstTensor c;
  c.type = type;
  int64_t n = checked_numel(shape, "constant");
  c.shape = std::move(shape);
  if (c.floating()) c.f.assign(static_cast<size_t>(n), 0.0);
  else c.i.assign(static_cast<size_t>(n), 0);
  return c;
}

ConstTensor int64_tensor(Shape shape, std::vector<int64_t> values) {
  ConstTensor c;
  c.type = TP::INT64;
  c.shape = std::move(shape);
  c.i = std::move(values);
  return c;
}

double round_to(int32_t type, double v) {
  switch (type) {
    case TP::FLOAT: return static_cast<float>(v);
    case TP::FLOAT16: return to_f32(to_f16(static_cast<float>(v)));
    case TP::BFLOAT16: return to_f32(to_bf16(static_cast<float>(v)));
    default: return v;
  }
}

int64_t wrap_to(int32_t type, int64_t v) {
  switch (type) {
    case TP::BOOL: return v != 0;
    case TP::INT8: return static_cast<int8_t>(v);
    case TP::UINT8: return static_cast<uint8_t>(v);
    case TP::INT16: return static_cast<int16_t>(v);
    case TP::UINT16: return static_cast<uint16_t>(v);
    case TP::INT32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case TP::UINT32: return static_cast<uint32_t>(v);
    default: return v;
  }
}

namespace {
// Float -> integer as TypeCvt does it: truncate toward zero, saturate, NaN -> 0.
int64_t float_to_int(int32_t type, double v) {
  if (std::isnan(v)) return 0;
  double lo, hi;
  switch (type) {
    case TP::INT8: lo = -128; hi = 127; break;
    case TP::UINT8: lo = 0; hi = 255; break;
    case TP::INT16: lo = -32768; hi = 32767; break;
    case TP::UINT16: lo = 0; hi = 65535; break;
    case TP::INT32: lo = -2147483648.0; hi = 2147483647.0; break;
    case TP::UINT32: lo = 0; hi = 4294967295.0; break;
    case TP::UINT64: lo = 0; hi = 1.8446744073709552e19; break;
    default: lo = -9.223372036854775808e18; hi = 9.223372036854775807e18; break;
  }
  v = std::trunc(v);
  if (v <= lo) return type == TP::UINT64 ? 0 : static_cast<int64_t>(lo);
  if (v >= hi) {
    if (type == TP::INT64) return std::numeric_limits<int64_t>::max();
    if (type == TP::UINT64) return -1;  // all ones
    return static_cast<int64_t>(hi);
  }
  if (type == TP::UINT64 && v >= 9.223372036854775807e18)
    return static_cast<int64_t>(static_cast<uint64_t>(v));
  return static_cast<int64_t>(v);
}
}  // namespace

void cast_element(const ConstTensor& from, int64_t k, ConstTensor& to, int64_t at) {
  if (to.floating()) {
    double v = from.floating() ? from.f[k]
               : from.type == TP::UINT64 ? static_cast<double>(static_cast<uint64_t>(from.i[k]))
                                         : static_cast<double>(from.i[k]);
    to.f[at] = round_to(to.type, v);
  } else if (to.type == TP::BOOL) {
    to.i[at] = from.floating() ? from.f[k] != 0 : from.i[k] != 0;
  } else if (from.floating()) {
    to.i[at] = float_to_int(to.type, from.f[k]);
  } else {
    to.i[at] = wrap_to(to.type, from.i[k]);
  }
}

// --- TensorProto decoding -----------------------------------------------------------------

namespace {

size_t raw_size(int32_t t) {
  switch (t) {
    case TP::BOOL: case TP::INT8: case TP::UINT8: return 1;
    case TP::INT16: case TP::UINT16: case TP::FLOAT16: case TP::BFLOAT16: return 2;
    case TP::INT32: case TP::UINT32: case TP::FLOAT: return 4;
    case TP::INT64: case TP::UINT64: case TP::DOUBLE: return 8;
  }
  return 0;
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Element k of little-endian raw bytes, into c (whose type and vectors are set up).
void decode_raw(const std::string& bytes, ConstTensor& c) {
  const char* p = bytes.data();
  int64_t n = c.size();
  for (int64_t k = 0; k < n; ++k) {
    switch (c.type) {
      case TP::FLOAT: c.f[k] = load<float>(p + 4 * k); break;
      case TP::DOUBLE: c.f[k] = load<double>(p + 8 * k); break;
      case TP::FLOAT16: c.f[k] = to_f32(f16{load<uint16_t>(p + 2 * k)}); break;
      case TP::BFLOAT16: c.f[k] = to_f32(bf16{load<uint16_t>(p + 2 * k)}); break;
      case TP::BOOL: c.i[k] = p[k] != 0; break;
      case TP::INT8: c.i[k] = load<int8_t>(p + k); break;
      case TP::UINT8: c.i[k] = load<uint8_t>(p + k); break;
      case TP::INT16: c.i[k] = load<int16_t>(p + 2 * k); break;
      case TP::UINT16: c.i[k] = load<uint16_t>(p + 2 * k); break;
      case TP::INT32: c.i[k] = load<int32_t>(p + 4 * k); break;
      case TP::UINT32: c.i[k] = load<uint32_t>(p + 4 * k); break;
      case TP::INT64: c.i[k] = load<int64_t>(p + 8 * k); break;
      case TP::UINT64: c.i[k] = static_cast<int64_t>(load<uint64_t>(p + 8 * k)); break;
    }
  }
}

int64_t parse_int(const std::string& s, const std::string& key) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || v < 0)
    throw Error("external data '" + key + "' must be a non-negative integer, got '" + s + "'");
  return v;
}

std::string read_external(const TP& t, const fs::path& model_dir, int64_t expected) {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_int(kv.value(), "offset");
    else if (kv.key() == "length") length = parse_int(kv.value(), "length");
  }
  if (location.empty()) throw Error("external data has no 'location'");
  if (model_dir.empty())
    throw Error("external data '" + location + "' needs the model's directory");
  fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory())
    throw Error("external data location '" + location +
                "' must be a path relative to the model's directory");
  for (const fs::path& part : loc.lexically_normal())
    if (part == "..")
      throw Error("external data location '" + location + "' leaves the model's directory");
  std::error_code ec;
  fs::path base = fs::canonical(model_dir, ec);
  if (ec) throw Error("cannot resolve the model's directory for external data");
  fs::path full = fs::weakly_canonical(base / loc, ec);
  if (ec) throw Error("external data '" + location + "': " + ec.message());
  // Symbolic links may not lead out of the model's directory either.
  fs::path rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..")
    throw Error("external data location '" + location + "' leaves the model's directory");
  if (!fs::is_regular_file(full, ec))
    throw Error("external data file '" + location + "' does not exist or is not a file");
  uintmax_t size = fs::file_size(full, ec);
  if (ec) throw Error("external data file '" + location + "': " + ec.message());
  if (length && *length != expected)
    throw Error("external data '" + location + "' has length " + std::to_string(*length) +
                ", the tensor needs " + std::to_string(expected) + " bytes");
  if (static_cast<uintmax_t>(offset) > size || size - offset < static_cast<uintmax_t>(expected))
    throw Error("external data file '" + location + "' is too short: " +
                std::to_string(expected) + " bytes at offset " + std::to_string(offset) +
                ", the file has " + std::to_string(size));
  std::ifstream f(full, std::ios::binary);
  if (!f) throw Error("cannot open external data file '" + location + "'");
  std::string buf(static_cast<size_t>(expected), '\0');
  f.seekg(offset);
  f.read(buf.data(), expected);
  if (!f) throw Error("cannot read external data file '" + location + "'");
  return buf;
}

template <class Field>
void check_count(const Field& field, int64_t n, const char* name) {
  if (static_cast<int64_t>(field.size()) != n)
    throw Error(std::string(name) + " has " + std::to_string(field.size()) +
                " values, the shape needs " + std::to_string(n));
}

}  // namespace

ConstTensor from_host(const HostTensor& t) {
  ConstTensor c = make_const(to_elem_type(t.dtype()), t.shape());
  decode_raw(std::string(static_cast<const char*>(t.data()), t.bytes()), c);
  return c;
}

int64_t tensor_bytes(const TP& t) {
  return checked_numel(Shape(t.dims().begin(), t.dims().end()), "tensor") *
         static_cast<int64_t>(is_numeric_elem(t.data_type()) ? raw_size(t.data_type()) : 1);
}

namespace {

// A tensor's checked raw bytes: its raw_data, or its external data read from its file into
// `external`; nullptr when its values are in the typed fields. `decoded_size`: the bytes per
// element its caller will hold beside them, checked with them against the memory cap before
// the file is read (a 100-byte model may point at a file of any size).
const std::string* raw_bytes(const TP& t, const fs::path& model_dir, size_t decoded_size,
                             std::string& external) {
  int32_t type = t.data_type();
  if (!is_numeric_elem(type))
    throw Error("element type " + elem_type_name(type) + " is not supported");
  if (t.has_segment()) throw Error("segmented tensors are not supported");
  Shape shape(t.dims().begin(), t.dims().end());
  int64_t n = checked_numel(shape, "tensor");
  // n <= 2^40, an element <= 8 bytes: no overflow
  int64_t bytes = n * static_cast<int64_t>(raw_size(type));
  const size_t decoded = static_cast<size_t>(n) * decoded_size;
  const std::string* raw = nullptr;
  if (t.data_location() == TP::EXTERNAL) {
    check_memory_cap(decoded + static_cast<size_t>(bytes), "decoding the tensor");
    external = read_external(t, model_dir, bytes);
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  if (raw && static_cast<int64_t>(raw->size()) != bytes)
    throw Error("raw_data has " + std::to_string(raw->size()) + " bytes, " +
                elem_type_name(type) + to_string(shape) + " needs " + std::to_string(bytes));
  if (raw) check_memory_cap(decoded, "decoding the tensor");
  return raw;
}

}  // namespace

std::optional<HostTensor> raw_host_tensor(const TP& t, const fs::path& model_dir) {
  static_assert(std::endian::native == std::endian::little, "raw_data is little-endian");
  std::optional<DType> dt = to_dtype(t.data_type());
  // BOOL's bytes are normalised to 0/1 by decoding, the typed fields need converting, and so
  // does an element of another size than the runtime's.
  if (!dt || t.data_type() == TP::BOOL || dtype_size(*dt) != raw_size(t.data_type()) ||
      (t.data_location() != TP::EXTERNAL && !t.has_raw_data()))
    return std::nullopt;
  std::string external;
  const std::string* raw = raw_bytes(t, model_dir, 0, external);
  HostTensor h(*dt, Shape(t.dims().begin(), t.dims().end()));
  if (!raw->empty()) std::memcpy(h.data(), raw->data(), raw->size());
  return h;
}

ConstTensor decode_tensor(const TP& t, const fs::path& model_dir) {
  // Held while decoding: the values as 8-byte numbers.
  std::string external;
  const std::string* raw = raw_bytes(t, model_dir, 8, external);
  const int32_t type = t.data_type();
  const Shape shape(t.dims().begin(), t.dims().end());
  const int64_t n = numel(shape);  // checked by raw_bytes

  ConstTensor c;
  c.type = type;
  c.shape = shape;
  // Every path below checks the data's size first, so nothing is allocated from the
  // dimensions alone.
  if (raw) {
    if (c.floating()) c.f.resize(n);
    else c.i.resize(n);
    decode_raw(*raw, c);
    return c;
  }
  switch (type) {
    case TP::FLOAT:
      check_count(t.float_data(), n, "float_data");
      c.f.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TP::DOUBLE:
      check_count(t.double_data(), n, "double_data");
      c.f.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TP::INT64:
      check_count(t.int64_data(), n, "int64_data");
      c.i.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case TP::UINT32:
    case TP::UINT64:
      check_count(t.uint64_data(), n, "uint64_data");
      for (uint64_t v : t.uint64_data()) c.i.push_back(wrap_to(type, static_cast<int64_t>(v)));
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16:
      check_count(t.int32_data(), n, "int32_data");
      for (int32_t v : t.int32_data()) {
        uint16_t bits = static_cast<uint16_t>(v);
        c.f.push_back(type == TP::FLOAT16 ? to_f32(f16{bits}) : to_f32(bf16{bits}));
      }
      break;
    default:  // INT32 INT16 INT8 UINT16 UINT8 BOOL
      check_count(t.int32_data(), n, "int32_data");
      for (int32_t v : t.int32_data()) c.i.push_back(wrap_to(type, v));
      break;
  }
  return c;
}

// --- shape rules --------------------------------------------------------------------------

int norm_axis(int64_t axis, int rank, const char* what) {
  auto a = normalize_axis(axis, rank);
  if (!a)
    throw Error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return *a;
}

Shape reshape_shape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero) {
  Shape out;
  int infer = -1;
  int64_t known = 1;
  int64_t in_n = checked_numel(in, "reshape input");
  for (size_t k = 0; k < spec.size(); ++k) {
    int64_t d = spec[k];
    if (d == 0 && !allowzero) {
      if (k >= in.size())
        throw Error("shape " + to_string(Shape(spec)) + " copies dimension " + std::to_string(k) +
                    " (0) that the input " + to_string(in) + " does not have");
      d = in[k];
    }
    if (d == -1) {
      if (infer >= 0) throw Error("shape " + to_string(Shape(spec)) + " has more than one -1");
      infer = static_cast<int>(k);
      out.push_back(1);
      continue;
    }
    if (d < 0) throw Error("shape " + to_string(Shape(spec)) + " has a negative dimension");
    if (d != 0 && known > kMaxElements / d)
      throw Error("shape " + to_string(Shape(spec)) + " has too many elements");
    known *= d;
    out.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || in_n % known != 0)
      throw Error("cannot reshape " + to_string(in) + " to " + to_string(Shape(spec)));
    out[infer] = in_n / known;
  }
  if (checked_numel(out, "reshape target") != in_n)
    throw Error("cannot reshape " + to_string(in) + " (" + std::to_string(in_n) +
                " elements) to " + to_string(Shape(spec)));
  return out;
}

Shape squeeze_shape(const Shape& in, const std::optional<std::vector<int64_t>>& axes) {
  int rank = static_cast<int>(in.size());
  std::vector<bool> drop(rank, false);
  if (!axes) {
    for (int k = 0; k < rank; ++k) drop[k] = in[k] == 1;
  } else {
    for (int64_t a : *axes) {
      int ax = norm_axis(a, rank, "squeeze axis");
      if (in[ax] != 1)
        throw Error("cannot squeeze axis " + std::to_string(a) + " of " + to_string(in) +
                    ": its size is not 1");
      drop[ax] = true;
    }
  }
  Shape out;
  for (int k = 0; k < rank; ++k)
    if (!drop[k]) out.push_back(in[k]);
  return out;
}

Shape unsqueeze_shape(const Shape& in, const std::vector<int64_t>& axes) {
  int out_rank = static_cast<int>(in.size() + axes.size());
  if (out_rank > 64) throw Error("unsqueeze makes the rank too large");
  std::vector<bool> added(out_rank, false);
  for (int64_t a : axes) {
    int ax = norm_axis(a, out_rank, "unsqueeze axis");
    if (added[ax]) throw Error("unsqueeze axes repeat");
    added[ax] = true;
  }
  Shape out;
  size_t next = 0;
  for (int k = 0; k < out_rank; ++k) out.push_back(added[k] ? 1 : in[next++]);
  return out;
}

Shape flatten_shape(const Shape& in, int64_t axis) {
  int rank = static_cast<int>(in.size());
  int ax = axis == rank ? rank : norm_axis(axis, rank, "flatten axis");
  Shape head(in.begin(), in.begin() + ax), tail(in.begin() + ax, in.end());
  return {checked_numel(head, "flatten"), checked_numel(tail, "flatten")};
}

}  // namespace hf::onnx_detail
