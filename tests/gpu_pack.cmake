# tools/gpu-pack.sh: the pack a GPU machine without package registries runs from starts
# with nothing but what it carries (tests/gpu_pack.sh). Needs the CUDA backend, which is
# what the pack is for.
if(NOT HF_HAVE_CUDA_BACKEND)
  return()
endif()
add_test(NAME gpu_pack COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_pack.sh ${PROJECT_BINARY_DIR})
set_tests_properties(gpu_pack PROPERTIES TIMEOUT 600)
