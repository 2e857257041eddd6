# The oneDNN plans whose layout follows the machine's vector width (conv_onednn.h's blocked
# plan: nChw16c on AVX-512, nChw8c on AVX2) run again with oneDNN limited to AVX2
# (ONEDNN_MAX_CPU_ISA), so that an AVX-512 machine tests both widths. On an AVX2-only
# machine the two runs test the same plan.
foreach(t test_cpu_conv_onednn test_nhwc_layout test_epilogue)
  if(TARGET ${t})
    gtest_discover_tests(${t} TEST_PREFIX "avx2." DISCOVERY_TIMEOUT 60
      PROPERTIES TIMEOUT 300 ENVIRONMENT "ONEDNN_MAX_CPU_ISA=AVX2")
  endif()
endforeach()
