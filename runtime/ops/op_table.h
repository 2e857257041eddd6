// Forwarding header: the op table is part of the IR (runtime/ir/op_table.h). It stays only
// until session/fusing_backend.cpp and session/session.cpp include the new path;
// tools/check_layers.py allows this one include up a layer until then.
#pragma once
#include "runtime/ir/op_table.h"
