// A process setting read from the environment as one of two words, the first the default:
// HOTFUSE_F32_PRECISION, HOTFUSE_VERDICTS, HOTFUSE_CUDA_GRAPHS, HOTFUSE_CUDA_LAYOUT.
#pragma once

namespace hf {

// Whether `name` holds `first` (also when unset or empty) rather than `second`; any other
// value is an hf::Error saying "NAME='value': expected first or second".
bool env_switch(const char* name, const char* first, const char* second);

}  // namespace hf
