// TensorProto files, decoded by the importer's decode_tensor (onnx_tensor.cpp).
#include "runtime/io/tensor_file.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>

#include "runtime/io/onnx_internal.h"
#include "runtime/ir/error.h"
#include "runtime/ops/half.h"

namespace hf {

namespace fs = std::filesystem;
using namespace onnx_detail;

namespace {

// Protobuf parses at most 2 GiB; a larger file is refused before it is read.
constexpr uintmax_t kMaxFileBytes = static_cast<uintmax_t>(std::numeric_limits<int>::max());

// The decoder's values (doubles and int64s, already rounded or wrapped to the type) stored
// as hotfuse stores `t`: exact, since every value is representable in it.
HostTensor to_host(const ConstTensor& c, DType t) {
  HostTensor h(t, c.shape);
  const int64_t n = c.size();
  const size_t es = dtype_size(t);
  for (int64_t k = 0; k < n; ++k) {
    if (is_float(t))
      store_double(h.view(), k, c.f[k]);  // f16/bf16 round through f32, as the decoder did
    else  // the low bytes of the wrapped int64 (little-endian, as hotfuse stores)
      std::memcpy(static_cast<char*>(h.data()) + k * es, &c.i[k], es);
  }
  return h;
}

}  // namespace

NamedTensor parse_tensor_file(const std::string& bytes, const std::string& origin) {
  pb::TensorProto proto;
  if (bytes.size() > kMaxFileBytes || !proto.ParseFromString(bytes))
    throw Error(origin + ": not a valid TensorProto file (malformed or truncated protobuf)");
  try {
    const bool uint16 = proto.data_type() == pb::TensorProto::UINT16;
    std::optional<DType> t = to_dtype(proto.data_type());
    if (!t)
      throw Error("element type " + elem_type_name(proto.data_type()) +
                  " is not supported (hotfuse computes in " + kOnnxComputedTypes + ")");
    // No model directory: a test data file with external data is refused.
    ConstTensor c = decode_tensor(proto, {});
    return {proto.name(), to_host(c, *t), uint16};
  } catch (const Error& e) {
    throw Error(printable(origin + ": " + e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(origin + ": out of memory while reading the tensor");
  }
}

NamedTensor read_tensor_file(const fs::path& file) {
  const std::string origin = file.string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw Error(origin + ": no such file");
  uintmax_t size = fs::file_size(file, ec);
  if (ec) throw Error(origin + ": " + ec.message());
  if (size > kMaxFileBytes)
    throw Error(origin + ": " + std::to_string(size) + " bytes is too large for a TensorProto");
  std::ifstream f(file, std::ios::binary);
  if (!f) throw Error(origin + ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error(origin + ": read error");
  return parse_tensor_file(ss.str(), origin);
}

HostTensor as_uint16_bits(const NamedTensor& t, DType want, const std::string& origin) {
  if (!t.uint16_bits || want == DType::U16) return t.tensor;
  if (want != DType::F16 && want != DType::BF16)
    throw Error(origin +
                ": element type UINT16 is not supported (read as the bits of "
                "FLOAT16 or BFLOAT16 only, where the model expects those)");
  HostTensor h(want, t.tensor.shape());
  std::memcpy(h.data(), t.tensor.data(), h.bytes());
  return h;
}

std::string encode_tensor_file(const TensorView& t, const std::string& name) {
  if (!t.is_contiguous()) throw Error("encode_tensor_file: '" + name + "' is not contiguous");
  pb::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(to_elem_type(t.dtype));
  for (int64_t d : t.shape) proto.add_dims(d);
  // hotfuse stores little-endian, as raw_data is (bools as bytes 0 and 1).
  proto.set_raw_data(static_cast<const char*>(t.data),
                     static_cast<size_t>(t.numel()) * dtype_size(t.dtype));
  return proto.SerializeAsString();
}

void write_tensor_file(const fs::path& file, const TensorView& t, const std::string& name) {
  std::string bytes = encode_tensor_file(t, name);
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(file.string() + ": cannot write the file");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error(file.string() + ": write error");
}

std::vector<fs::path> numbered_tensor_files(const fs::path& dir, std::string_view prefix,
                                            size_t count, const std::string& what) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir.string() + ": no such directory");
  const std::string head = std::string(prefix) + "_";
  auto file = [&](size_t k) { return dir / (head + std::to_string(k) + ".pb"); };
  std::vector<fs::path> files;
  for (size_t k = 0; k < count; ++k) {
    if (!fs::exists(file(k), ec)) throw Error(file(k).string() + ": missing (" + what + ")");
    files.push_back(file(k));
  }
  if (fs::exists(file(count), ec))
    throw Error(file(count).string() + ": one file too many (" + what + ")");
  return files;
}

}  // namespace hf
