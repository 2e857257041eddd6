# The CUDA backend's checks that need more than a gtest binary (tests/test_cuda_*.cpp are
# built by tests/CMakeLists.txt like every suite; without the toolkit they skip).
# - cuda_no_libcuda: no binary needs libcuda.so, directly (readelf NEEDED) or through a
#   library (ldd), so the same binaries start on a machine without an NVIDIA driver; nor
#   libcublas (opened on first use, runtime/cuda/cublas_api.h: linked, it costs every
#   process ~150 MB of resident memory); nor does hotfuse-run load libnvrtc at start-up
#   (fusion/nvrtc_api.h: ~27 MB).
# - cuda_cli: --backend auto/cuda on this machine: with no device, auto prints one line
#   naming the reason and runs on the CPU, cuda fails with exit code 2; with a device both
#   run on it (tests/cuda_cli.sh).
if(NOT HF_HAVE_CUDA_BACKEND)
  return()
endif()

set(HF_CUDA_CHECKED_BINARIES $<TARGET_FILE:hotfuse-run>)
foreach(src ${HF_TEST_SRC})
  get_filename_component(name ${src} NAME_WE)
  list(APPEND HF_CUDA_CHECKED_BINARIES $<TARGET_FILE:${name}>)
endforeach()
add_test(NAME cuda_no_libcuda
         COMMAND sh -c [=[
status=0
for f in "$@"; do
  if readelf -d "$f" | grep -q 'NEEDED.*libcuda\.so'; then echo "$f NEEDs libcuda.so"; status=1; fi
  if ldd "$f" | grep -q 'libcuda\.so'; then echo "$f loads libcuda.so through a library"; status=1; fi
  if ldd "$f" | grep -q 'libcublas'; then echo "$f loads libcublas at start-up"; status=1; fi
done
# The product opens NVRTC when it first compiles a CUDA kernel (fusion/nvrtc_api.h); the
# tests that call NVRTC themselves link it.
if ldd "$1" | grep -q 'libnvrtc'; then echo "$1 loads libnvrtc at start-up"; status=1; fi
[ $status = 0 ] && echo "checked $# binaries: none needs libcuda.so or libcublas; hotfuse-run not libnvrtc"
exit $status
]=] sh ${HF_CUDA_CHECKED_BINARIES})
set_tests_properties(cuda_no_libcuda PROPERTIES TIMEOUT 60)

add_test(NAME cuda_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cuda_cli.sh $<TARGET_FILE:hotfuse-run>
                               ${PROJECT_SOURCE_DIR}/traces/graphs/activation_chain.json)
set_tests_properties(cuda_cli PROPERTIES TIMEOUT 300)
