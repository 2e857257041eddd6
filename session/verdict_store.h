// Region verdicts kept across processes, in the kernel cache's disk directory and under its
// rules (a private directory, checksummed entries, atomic writes): a model run again on the
// same machine takes what an earlier run decided about its regions (region_verdicts.h),
// compiles nothing (its kernels are in the same cache), and reaches steady state right
// after its profile.
//
// An entry holds one region's verdicts at every signature decided, keyed by the region
// and by what else a verdict depends on (the context: the machine, the kernels'
// toolchain, the selection's options, the rule that judged "slower"), so a change of any
// of them decides again.
// HOTFUSE_VERDICTS=off turns the store off: every process decides for itself.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "fusion/disk_cache.h"
#include "session/region_verdicts.h"

namespace hf {

struct MachinePeak;
struct SelectionOptions;

class VerdictStore {
 public:
  VerdictStore(std::shared_ptr<fusion::DiskCache> disk, std::string context);

  // hf::Error naming HOTFUSE_VERDICTS when it is set to something other than on or off.
  static void check_environment();
  // The store in `disk` (null without one), or null when HOTFUSE_VERDICTS=off; hf::Error
  // as check_environment.
  static std::shared_ptr<VerdictStore> from_env(std::shared_ptr<fusion::DiskCache> disk,
                                                std::string context);
  // The context of a session's verdicts: its machine, the toolchain of its kernels (the
  // kernel cache's key parts), the options its selection weighs and the version of the
  // re-profiling verdict (selection.h's judge_in_turn).
  static std::string context(const MachinePeak& machine, const std::vector<std::string>& toolchain,
                             const SelectionOptions& select);

  // The verdicts stored for `region_key` in this context; none when absent or unreadable.
  std::vector<RegionVerdict> load(const std::string& region_key) const;
  // Replaces them. A failed write is harmless: the next process decides again.
  void save(const std::string& region_key, const std::vector<RegionVerdict>& verdicts) const;

 private:
  std::string key(const std::string& region_key) const;

  std::shared_ptr<fusion::DiskCache> disk_;
  std::string context_;
};

}  // namespace hf
