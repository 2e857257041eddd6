// A region's check in parts: its kernel run on one block of rows at a time, each block's
// live-outs compared with the same rows of the unfused ones.
//
// A check runs the region's kernel alone, and a run cannot be cut: a heavy epilogue (GPT-2's
// fc MatMul with its GELU) takes a few milliseconds, several times an iteration's share.
// Run on a block of its rows it takes that block's share of the time, and the blocks
// together compute and compare exactly what the whole run would: every element of every
// live-out, against the same element, with the same tolerance.
//
// The blocks split the live-outs' outermost axis of more than one element (all of them the
// same shape, every axis outside it of one element, so that a block is a contiguous run of
// elements). A live-in that has that axis too is cut the same way; one that broadcasts
// along it (or a MatMul's right operand, when the axis is the MatMul's rows) is read whole.
// Only epilogue regions are split here (a library call with its elementwise ops, which takes
// any row count: a compiled kernel is made for one shape, and is checked a block of its
// launch range per run instead, fusion/kernel_blocks.h), and only when each of their ops
// computes a row from the same rows of its operands: Elemwise, PowC, TypeCvt and MatMul
// (rows or batch, never its columns); a view, a Reduce or anything else keeps the check whole.
#pragma once
#include <map>

#include "fusion/region_spec.h"
#include "runtime/ir/graph.h"

namespace hf {

struct CheckParts {
  int parts = 1;                        // 1: the check runs whole
  std::map<ValueId, Shape> cut_shapes;  // the live-ins cut into blocks, and a block's shape
};

// Into how many blocks the kernel `k` of a region of `g` can be checked: the smallest
// number of equal blocks that is at least `wanted`, or 1 where it cannot be split (above).
CheckParts check_parts(const Graph& g, const fusion::RegionKernel& k, int wanted);

}  // namespace hf
