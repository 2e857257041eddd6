// What an iteration gives the session's background work (building and faulting in plans,
// checking kernels, the compilers): `share` of the unfused median, plus what the plan in use
// saved against that median in this iteration, less what the iteration already did inline
// for fusion (swapping a plan in, ending a phase). A fused plan that runs faster than the
// unfused graph gives the difference to the compilers that make it faster still, and an
// iteration plans no more than (1 + share) of the unfused median for fusion's sake.
// docs/adaptive.md, "Never stall".
#pragma once
#include <algorithm>

namespace hf {

inline double background_credit_s(double share, double unfused_s, double plan_s, double inline_s) {
  return share * unfused_s + std::max(0.0, unfused_s - plan_s) - inline_s;
}

}  // namespace hf
