// Two different kernel specs with one 64-bit hash (issue 23, item 3). The in-memory kernel
// cache was keyed by that FNV-1a hash, so the second spec was "found" and ran the first
// one's kernel. It is keyed by the spec's full encoding now, and a spec whose name
// (hf_<hash>) another spec holds is refused, so its region runs unfused.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "fusion/host_toolchain.h"
#include "fusion/spec.h"
#include "tests/support/jit_env.h"

namespace hf {
namespace {

// x + literal over a rank-1 f32 input; `bits` are the literal's double bits.
fusion::KernelSpec add_literal(uint64_t bits) {
  fusion::KernelSpec s;
  s.rank = 1;
  s.inputs = {fusion::SpecInput{}};
  fusion::SpecExpr in, lit, add;
  in.kind = fusion::ExprKind::Input;
  in.input = 0;
  lit.kind = fusion::ExprKind::Literal;
  lit.value = std::bit_cast<double>(bits);
  add.kind = fusion::ExprKind::Elemwise;
  add.mode = Mode::ADD;
  add.args[0] = 0;
  add.args[1] = 1;
  s.exprs = {in, lit, add};
  fusion::SpecOutput out;
  out.expr = 2;
  s.outputs = {out};
  return s;
}

// Found offline in about a minute: Brent's cycle finding over the FNV-1a state after the
// literal's 8 bytes (the bytes before and after them are fixed, and FNV-1a's step is a
// bijection, so equal states give equal hashes). Both are small finite doubles.
constexpr uint64_t kBitsA = 0x2f9f72d335892d0eull;
constexpr uint64_t kBitsB = 0x3911ea149dfabcd5ull;

TEST(KernelSpecIdentity, TheHashCollidesTheEncodingDoesNot) {
  const fusion::KernelSpec a = add_literal(kBitsA), b = add_literal(kBitsB);
  ASSERT_EQ(a.hash(), b.hash()) << "the committed collision no longer collides";
  EXPECT_EQ(a.hash(), 0xc03c4a4839ab90e7ull);  // the encoding (and so kernel names) is stable
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.canonical(), b.canonical());
  EXPECT_TRUE(a == add_literal(kBitsA));
}

TEST(KernelCache, ASpecWhoseHashCollidesIsNeverServedAnotherSpecsKernel) {
  JitEnv env;
  fusion::KernelCache& k = *env.cache;
  const fusion::KernelSpec a = add_literal(kBitsA), b = add_literal(kBitsB);
  fusion::CompileOutcome first = k.ensure(a, "a");
  ASSERT_TRUE(first.ok) << first.message;
  EXPECT_NE(k.find(a), nullptr);

  // Before: a memory hit, and FusingCpuBackend ran a's kernel for b's region.
  EXPECT_EQ(k.find(b), nullptr);
  EXPECT_FALSE(k.cached(b));
  fusion::CompileOutcome second = k.ensure(b, "b");
  EXPECT_FALSE(second.ok);
  EXPECT_EQ(second.source, fusion::CompileOutcome::Failed);
  EXPECT_NE(second.message.find("collision"), std::string::npos) << second.message;
  EXPECT_NE(second.message.find("its region runs unfused"), std::string::npos);
  EXPECT_EQ(k.find(b), nullptr);
  EXPECT_EQ(k.memory_hits(), 0);
  EXPECT_EQ(k.compiles(), 1);

  // a itself is still served, from memory.
  EXPECT_EQ(k.ensure(a, "a").source, fusion::CompileOutcome::Memory);
  EXPECT_NE(k.find(a), nullptr);
}

}  // namespace
}  // namespace hf
