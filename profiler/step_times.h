// Per-step wall times over iterations, and the per-op table the launcher prints.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "runtime/exec/executor.h"

namespace hf {

// Records every step's time in every iteration. Storage is reserved up front so that
// recording allocates nothing on the iteration path.
class StepTimes final : public StepObserver {
 public:
  StepTimes(size_t steps, size_t iterations);
  void on_step(size_t step, double seconds) override { times_[step].push_back(seconds); }
  double median(size_t step) const;
  const std::vector<double>& samples(size_t step) const { return times_[step]; }  // by iteration
  size_t steps() const { return times_.size(); }

 private:
  std::vector<std::vector<double>> times_;
};

double median_of(std::vector<double> v);

struct OpRow {
  std::string node;
  std::string op;      // "Elemwise MUL"
  std::string output;  // "f32[1024,1024]"
  double seconds = 0;  // median
  double bytes = 0;    // ideal bytes moved
  double flops = 0;
  double gbps() const { return seconds > 0 ? bytes / seconds * 1e-9 : 0; }
  double gflops() const { return seconds > 0 ? flops / seconds * 1e-9 : 0; }
};

std::vector<OpRow> op_rows(const Graph& g, const Plan& plan, const StepTimes& times);
// With the machine's flop peak (MachinePeak::gflops), a column says what share of it each
// op reached; without (0), only its GFLOP/s.
void print_op_table(std::ostream& os, const std::vector<OpRow>& rows, double peak_gflops = 0);

}  // namespace hf
