// KernelSpec -> C++ source for the host compiler (fusion/host_compiler.h gives the flags; built
// into a .so and loaded with dlopen). docs/codegen.md shows what comes out.
//
// The kernel follows fusion/kernel_abi.h:
//   extern "C" void <name>(const hf::fusion::KernelArgs* args, long long begin, long long end);
// [begin, end) are flat element indices, or row indices when the spec has a reduce. The
// source includes only the embedded headers (runtime/ops/*, fusion/kernel_abi.h,
// fusion/codegen_support.h).
//
// Values follow the unfused graph exactly: an expression typed f16/bf16 is computed in f32
// and rounded to its storage type, as the unfused kernel that produced it would have
// stored it; conversions, pow_const and reductions have the unfused kernels' semantics
// (runtime/ops/) and order of operations. Fused and unfused results therefore agree except
// where the host compiler contracts a multiply and an add of two former ops into one FMA.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "fusion/spec.h"

namespace hf::fusion {

// One translation unit with one kernel. Throws std::invalid_argument for an invalid spec
// or a kernel name that is not a plain C identifier. origin_comment (typically node ids and
// names from the model file) is sanitised into a one-line comment.
std::string generate_cpp(const KernelSpec& spec, const std::string& kernel_name,
                         const std::string& origin_comment);

// Several kernels (spec, kernel name) in one translation unit, the includes once: one
// compiler start-up for all of them. Names must be distinct.
std::string generate_cpp_unit(const std::vector<std::pair<KernelSpec, std::string>>& kernels);

struct UnitKernel {
  KernelSpec spec;
  std::string name;
  std::string origin;  // as generate_cpp's origin_comment
};
std::string generate_cpp_unit(const std::vector<UnitKernel>& kernels);

}  // namespace hf::fusion
