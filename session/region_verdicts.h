// What an adaptive session decided about its regions at one input shape signature, kept
// for the sessions of the same model at other signatures (ShapeSessions), which take a
// verdict over where it still holds instead of deciding again.
//
// A verdict holds in the direction fusion's economics move with size: a kernel kept for
// being faster stays worth it on more data (its saving grows with the bytes it no longer
// moves, its launch cost does not); a kernel not faster, or a region not worth a kernel,
// stays so on less data. Within a factor of two either way both hold: sizes that close do
// not change the picture. A wrong kernel (failed compile or validation) is the same code
// at every size: that verdict always holds. Anything else is decided again from the new
// shape's profile.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hf {

struct RegionVerdict {
  enum Kind { Kept, Slower, NotWorthIt, Wrong };
  Kind kind = NotWorthIt;
  double io_bytes = 0;  // the region's inputs and outputs at the signature it was decided at
  std::string at;       // that signature: "x [1,64]"
  std::string reason;   // as the session said it
};

// Whether `v` holds for the same region moving `io_bytes`: the reason to carry it over,
// naming where it was decided; nullopt when the region must be decided again.
std::optional<std::string> carried_reason(const RegionVerdict& v, double io_bytes);

class VerdictStore;

class RegionVerdicts {
 public:
  // With a store (verdict_store.h), a region's verdicts are read from it the first time
  // the region is looked up or recorded, and each change is written back.
  explicit RegionVerdicts(std::shared_ptr<const VerdictStore> store = nullptr);
  // A region's verdict at one signature; a later one at the same signature replaces it.
  void record(const std::string& region_key, RegionVerdict v);
  // A Wrong verdict, else the one decided at the size nearest `io_bytes` (by ratio), or null.
  const RegionVerdict* find(const std::string& region_key, double io_bytes) const;

 private:
  std::vector<RegionVerdict>& of(const std::string& region_key) const;

  std::shared_ptr<const VerdictStore> store_;
  // What the store held or was given, per region looked up so far.
  mutable std::map<std::string, std::vector<RegionVerdict>> by_region_;
};

}  // namespace hf
