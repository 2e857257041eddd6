// Which cuDNN algorithm a convolution runs. cuDNN's heuristics rate algorithms without
// running them, and their first choice is often not the fastest: the backend measures the
// candidates once per convolution shape (cudnnFindConvolutionForwardAlgorithmEx, on scratch
// buffers when the plan is made) and keeps the winner, in memory for the process and in a
// ResultStore across processes, under a key of everything the measurement depends on.
// The pure parts (keys, the record, the choice among candidates) are here, tested without
// a device. Internal to runtime/cuda/.
#pragma once
#include <cudnn.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "runtime/cuda/conv_shape.h"
#include "runtime/cuda/cuda_math.h"
#include "runtime/cuda/result_store.h"
#include "runtime/ir/dtype.h"

namespace hf::cuda {

struct ConvAlgoChoice {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t workspace = 0;  // bytes
  float ms = -1;         // as measured; -1: from the heuristics, not measured
};

// Everything a measured choice depends on: the device (name and arch), cuDNN's version,
// the shape as cuDNN sees it, the data type and the math policy.
std::string conv_algo_key(const std::string& device, int arch, size_t cudnn_version,
                          const CudnnConvShape& s, DType dt, const CudaMath& m);

// "algo math workspace ms" and back; nullopt for anything else (a corrupt or foreign value).
std::string encode(const ConvAlgoChoice& c);
std::optional<ConvAlgoChoice> decode(std::string_view text);

// What the caller could set up for a candidate: its workspace's size once allocated, or
// nullopt (no room, or cuDNN refused the candidate's math or workspace query).
using TakeCandidate = std::function<std::optional<size_t>(const cudnnConvolutionFwdAlgoPerf_t&)>;

// The first candidate (cuDNN lists them best first) that succeeded, whose math `m` allows
// for `dt`, and that `take` could set up (it is not asked about the others). nullopt when
// none. The choice's time is the candidate's.
std::optional<ConvAlgoChoice> pick_algorithm(std::span<const cudnnConvolutionFwdAlgoPerf_t> perf,
                                             const CudaMath& m, DType dt,
                                             const TakeCandidate& take);

// One backend's measured choices: in memory for the process (plans are made again and
// again: every swap), and in the ResultStore when there is one. Thread-safe.
class ConvAlgoMemo {
 public:
  // device, arch: the key's first parts (conv_algo_key).
  ConvAlgoMemo(std::string device, int arch);
  void set_store(std::shared_ptr<ResultStore> store);
  std::string key(const CudnnConvShape& s, DType dt, const CudaMath& m) const;
  // A choice kept under `key` here or in the store (a value that does not decode is ignored).
  std::optional<ConvAlgoChoice> find(const std::string& key);
  void keep(const std::string& key, const ConvAlgoChoice& c);

 private:
  const std::string device_;
  const int arch_;
  std::mutex mu_;
  std::map<std::string, ConvAlgoChoice> memory_;
  std::shared_ptr<ResultStore> store_;
};

}  // namespace hf::cuda
