#include "runtime/cuda/conv_algo.h"

#include <cstdio>
#include <sstream>
#include <utility>

namespace hf::cuda {

std::string conv_algo_key(const std::string& device, int arch, size_t cudnn_version,
                          const CudnnConvShape& s, DType dt, const CudaMath& m) {
  std::ostringstream k;
  k << "cudnn-fwd-algo v1|" << device << "|sm_" << arch << "|cudnn " << cudnn_version << "|"
    << dtype_name(dt) << "|math " << m.conv << (m.tf32 ? " tf32" : "") << "|x " << s.n << "," << s.c
    << "," << s.h << "," << s.w << "|w " << s.m << "," << s.cg << "," << s.kh << "," << s.kw
    << "|y " << s.oh << "," << s.ow << "|pad " << s.pad[0] << "," << s.pad[1] << "|stride "
    << s.stride[0] << "," << s.stride[1] << "|dilation " << s.dilation[0] << "," << s.dilation[1]
    << "|group " << s.group << (s.nhwc ? "|nhwc" : "");
  return k.str();
}

std::string encode(const ConvAlgoChoice& c) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%d %d %zu %.9g", static_cast<int>(c.algo),
                static_cast<int>(c.math), c.workspace, static_cast<double>(c.ms));
  return buf;
}

std::optional<ConvAlgoChoice> decode(std::string_view text) {
  const std::string s(text);
  int algo = -1, math = -1, used = 0;
  unsigned long long ws = 0;
  double ms = 0;
  if (std::sscanf(s.c_str(), "%d %d %llu %lf%n", &algo, &math, &ws, &ms, &used) != 4 ||
      used != static_cast<int>(s.size()))
    return std::nullopt;
  if (algo < 0 || algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT) return std::nullopt;
  if (math != CUDNN_DEFAULT_MATH && math != CUDNN_TENSOR_OP_MATH &&
      math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && math != CUDNN_FMA_MATH)
    return std::nullopt;
  ConvAlgoChoice c;
  c.algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
  c.math = static_cast<cudnnMathType_t>(math);
  c.workspace = static_cast<size_t>(ws);
  c.ms = static_cast<float>(ms);
  return c;
}

std::optional<ConvAlgoChoice> pick_algorithm(std::span<const cudnnConvolutionFwdAlgoPerf_t> perf,
                                             const CudaMath& m, DType dt,
                                             const TakeCandidate& take) {
  for (const cudnnConvolutionFwdAlgoPerf_t& r : perf) {
    if (r.status != CUDNN_STATUS_SUCCESS || !conv_math_allowed(m, dt, r.mathType)) continue;
    const std::optional<size_t> bytes = take(r);
    if (!bytes) continue;
    return ConvAlgoChoice{r.algo, r.mathType, *bytes, r.time};
  }
  return std::nullopt;
}

ConvAlgoMemo::ConvAlgoMemo(std::string device, int arch)
    : device_(std::move(device)), arch_(arch) {}

void ConvAlgoMemo::set_store(std::shared_ptr<ResultStore> store) {
  std::lock_guard lock(mu_);
  store_ = std::move(store);
}

std::string ConvAlgoMemo::key(const CudnnConvShape& s, DType dt, const CudaMath& m) const {
  return conv_algo_key(device_, arch_, cudnnGetVersion(), s, dt, m);
}

std::optional<ConvAlgoChoice> ConvAlgoMemo::find(const std::string& key) {
  std::lock_guard lock(mu_);
  if (auto it = memory_.find(key); it != memory_.end()) return it->second;
  if (!store_) return std::nullopt;
  std::optional<std::string> text = store_->get(key);
  std::optional<ConvAlgoChoice> c = text ? decode(*text) : std::nullopt;
  if (c) memory_[key] = *c;
  return c;
}

void ConvAlgoMemo::keep(const std::string& key, const ConvAlgoChoice& c) {
  std::lock_guard lock(mu_);
  memory_[key] = c;
  if (store_) store_->put(key, encode(c));
}

}  // namespace hf::cuda
