# Checks on hf::vm (runtime/ops/vmath.h) as the kernels compile it.
#
# vmath_vectorizes: GCC must vectorise a loop over every vm function at -O3 -march=native
# -fno-math-errno (no -ffast-math): one scalar libm call makes a fused kernel compute-bound.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME vmath_vectorizes
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_vectorized.py
              ${CMAKE_CXX_COMPILER} ${PROJECT_SOURCE_DIR}
              ${CMAKE_CURRENT_BINARY_DIR}/vectorize_probe.o)
  endif()
endif()

# test_vmath_native: the accuracy tests again, built with the kernel flags, so that the
# vectorised, FMA-contracted code the kernels run is what is measured.
if(HOTFUSE_NATIVE AND TARGET test_vmath)
  add_executable(test_vmath_native ${CMAKE_CURRENT_LIST_DIR}/test_vmath.cpp)
  target_compile_options(test_vmath_native PRIVATE ${HF_WARNINGS} ${HF_KERNEL_FLAGS})
  target_include_directories(test_vmath_native PRIVATE ${PROJECT_SOURCE_DIR})  # header-only
  target_link_libraries(test_vmath_native PRIVATE GTest::gtest GTest::gtest_main)
  gtest_discover_tests(test_vmath_native TEST_PREFIX "native." DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT 300)
endif()
