// The device's yardsticks for the adaptive session (hf::MachinePeak, as probe_machine gives
// for the CPU): op classification (memory- vs compute-bound) and the fused-time prediction
// need the GPU's bandwidth, FLOP rate and launch floor, not the host's.
#pragma once
#include "profiler/machine_probe.h"

namespace hf::cuda {

class CudaBackend;

// FP32 lanes per SM (an FMA each per clock): 64 up to sm_80, 128 from sm_86 (Ampere
// GA10x, Ada, Hopper, Blackwell).
int fp32_lanes_per_sm(int arch);
// Peak f32 GFLOP/s: SMs x lanes x 2 (an FMA is two flops) x clock.
double fp32_peak_gflops(int arch, int sm_count, double clock_khz);

// Measured on `b`'s device (~0.1 s): bandwidth_gbps from d2d_copy_gbps (bytes read +
// written, like the op table's ideal bytes), gflops from the device properties (peak
// clock), launch_us the floor of one profiled step, which is timed on the host clock
// around the launch and the cudaStreamSynchronize after it (Executor with an observer):
// the median of a 4-byte cudaMemsetAsync and that synchronisation. threads: the SM count;
// cpu: the device name. hf::Error on a CUDA failure.
MachinePeak device_peak(CudaBackend& b);

}  // namespace hf::cuda
