// Forwarding header: the GPU probe is part of the profiler (profiler/device_peak.h). It
// stays only until tools/check_mode.cpp and tools/hotfuse_run.cpp include the new path;
// tools/check_layers.py allows this one include up a layer until then.
#pragma once
#include "profiler/device_peak.h"
