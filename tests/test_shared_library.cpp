// runtime/ir/shared_library.h: the one loader for the libraries opened on first use.
#include "runtime/ir/shared_library.h"

#include <gtest/gtest.h>

namespace hf {
namespace {

TEST(SharedLibrary, OpensTheFirstCandidateThatLoads) {
  std::string why = "untouched";
  void* lib = open_shared_library({"libhotfuse-no-such-library.so.7", "libm.so.6"}, &why);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(why, "untouched");
  double (*cos_fn)(double) = nullptr;
  EXPECT_TRUE(bind_symbol(lib, cos_fn, "cos"));
  ASSERT_NE(cos_fn, nullptr);
  EXPECT_DOUBLE_EQ(cos_fn(0.0), 1.0);
  EXPECT_FALSE(bind_symbol(lib, cos_fn, "hotfuse_no_such_symbol"));
  EXPECT_EQ(cos_fn, nullptr);
}

TEST(SharedLibrary, SaysWhyForEveryCandidateWhenNoneLoads) {
  std::string why;
  EXPECT_EQ(open_shared_library({"libhotfuse-missing-a.so.1", "/nonexistent/libb.so"}, &why),
            nullptr);
  EXPECT_NE(why.find("libhotfuse-missing-a.so.1"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/libb.so"), std::string::npos) << why;
  EXPECT_EQ(open_shared_library({}, &why), nullptr);
  EXPECT_FALSE(why.empty());
  void (*fn)() = nullptr;
  EXPECT_FALSE(bind_symbol(nullptr, fn, "cos"));
}

}  // namespace
}  // namespace hf
