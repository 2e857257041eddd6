// hotfuse-run --check DIR: ONNX's backend-test convention. DIR holds model.onnx and
// test_data_set_*/{input,output}_*.pb; every data set is run on the plan the chosen --fusion
// mode ends up with and every output compared with |expected - actual| <= atol +
// rtol * |expected| (NaN matches NaN, infinities match in sign, integers and bools exactly).
// Prints PASS or FAIL per data set, with the worst element of a failing output. On the CUDA
// backend the inputs go up and the outputs come down through Backend::upload/download.
#pragma once
#include <filesystem>
#include <string>

#include "session/run_target.h"
#include "session/session.h"

namespace hf {

// --check's default atol and rtol where f32 Convs and MatMuls run on TF32 (CUDA at
// HOTFUSE_F32_PRECISION=high): a 10-bit mantissa's rounding, over a network's layers.
inline constexpr double kTf32CheckTolerance = 1e-2;

struct CheckOptions {
  std::filesystem::path dir;
  double atol = 1e-3, rtol = 1e-3;  // onnx_test_runner's defaults
  std::string tolerance_note;       // printed after them: why they are what they are
  int threads = 0;
  SessionOptions session;  // its policy is the --fusion mode
  SettleBound settle;      // how long the session may take to settle (--settle-timeout, -iters)
  // The CUDA backend (choose_backend's), or null: the CPU. Every --fusion mode runs on both.
  Backend* cuda = nullptr;
};

// 0 when every data set passes, 1 on a mismatch; bad input (a missing or malformed file,
// counts, types or shapes that do not fit the model) throws hf::Error naming the file.
int run_check(const CheckOptions& o);

}  // namespace hf
