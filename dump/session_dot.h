// before.dot and after.dot of a Session, in every --fusion mode (the one DOT writer).
//
// before: the graph as imported, coloured by the unfused profile (Session::unfused_ops:
// time, class), memory-bound hotspots marked, each node's region and its fate in the tooltip.
// after: the graph as executed now (Session::current_graph), coloured by the last
// re-profile (nodes it did not time: by the unfused profile). Each kept region is a filled
// cluster around its Fused node, labelled with its kernel, the time of the ops it replaced
// and of the kernel, and the speedup; reverted, failed, rejected and queued regions are
// dashed or dotted clusters around their original nodes with the reason.
#pragma once
#include "dump/dot_graph.h"
#include "session/session.h"

namespace hf::dump {

// The drawings point into the session's graphs: use them before the session changes.
Drawing session_before(const Session& s);
Drawing session_after(const Session& s);

}  // namespace hf::dump
