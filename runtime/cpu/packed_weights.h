// Constant weights reordered into a oneDNN primitive's layout, shared by every kernel that
// packs the same constant the same way. A session holds two or three plans of one graph
// while it swaps (the unfused reference, the candidate, the current one), and each kernel
// kept its own packed copy of every weight: ResNet-50's 100 MB, three times.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hf::cpu {

// `owner` is the constant (its ConstantData, which every copy of the graph shares): it
// names the weights and, held by the kernels, keeps them alive, so the key is never reused
// for other values. `layout` says how they are packed (the primitive's weights layout and
// the slice). The first caller's `pack` fills `floats` floats; later callers with the same
// owner and layout get the same buffer for as long as anyone holds it.
std::shared_ptr<const std::vector<float>> shared_packed_weights(
    const std::shared_ptr<const void>& owner, const std::string& layout, size_t floats,
    const std::function<void(float*)>& pack);

}  // namespace hf::cpu
