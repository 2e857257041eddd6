#!/bin/sh
# The host kernel compiler with AVX-512 turned off after the kernel flags' -march=native:
# emulates an AVX2+FMA machine on an AVX-512 one. Use as HOTFUSE_CXX=bench/cxx_avx2.sh (an
# absolute path), with HF_RATIO_PEER_FLAGS=-mno-avx512f for bench/peer_ratio.py's peer.
exec c++ "$@" -mno-avx512f
