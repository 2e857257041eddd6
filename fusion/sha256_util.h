// SHA-256 (FIPS 180-4), private to fusion/. Cache keys are content addresses of code that
// gets loaded and run, so they need a hash whose collisions are practically impossible,
// and the same hash doubles as the cache's entry checksum. No crypto library dependency:
// the inputs are small (sources, PTX, shared objects), so a plain implementation is enough.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace hf::fusion {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  uint64_t total_ = 0;  // bytes hashed so far
  size_t used_ = 0;     // bytes in buf_
};

std::array<uint8_t, 32> sha256(std::string_view data);
std::string to_hex(const uint8_t* bytes, size_t n);
std::string sha256_hex(std::string_view data);

}  // namespace hf::fusion
