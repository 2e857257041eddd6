# hotfuse-run end to end: every example at every --fusion level prints its per-op tables
# and, where it fuses, checks fused against unfused outputs; the report has
# its public fields, and every kind of bad input gives exit code 2 with one line naming
# the problem (tests/cli_errors.sh). Kernels go to a cache inside the build tree, never
# the user's. The cache is shared by the tests, so its region verdicts are not: every test
# decides for itself, whichever ran before it (tests/cli_verdicts.sh covers them).
set(HF_TEST_ENV "HOTFUSE_CACHE_DIR=${PROJECT_BINARY_DIR}/test-kernel-cache" "HOTFUSE_VERDICTS=off")
file(GLOB HF_EXAMPLES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/traces/graphs/*.json)
foreach(ex ${HF_EXAMPLES})
  get_filename_component(name ${ex} NAME_WE)
  foreach(level off static all adaptive)
    add_test(NAME cli_run_${name}_${level}
             COMMAND hotfuse-run ${ex} --iters 3 --warmup 1 --backend cpu --fusion ${level})
    set(pass "sum of ops")
    if(level STREQUAL "all")
      set(pass "outputs match unfused")
    elseif(level STREQUAL "adaptive")
      # Whether a region is worth it depends on this machine's timings; either way the
      # session settles, prints its decisions and checks its outputs.
      set(pass "outputs match unfused|nothing fused")
    endif()
    set_tests_properties(cli_run_${name}_${level} PROPERTIES
      ENVIRONMENT "${HF_TEST_ENV}"
      PASS_REGULAR_EXPRESSION "${pass}"
      FAIL_REGULAR_EXPRESSION "internal error|failed to compile")
  endforeach()
endforeach()
# Two 3x3 Convs with SiLU epilogues on random weights (values that cancel): the fused plan's
# Convs run Winograd (docs/math.md), and so must the unfused plan the launcher checks the
# outputs against, or its rounding reads as a fusion error.
foreach(level all adaptive)
  add_test(NAME cli_run_conv_silu_chain_${level}
           COMMAND hotfuse-run ${CMAKE_CURRENT_SOURCE_DIR}/data/graphs/conv_silu_chain.json
                   --iters 3 --warmup 1 --backend cpu --fusion ${level} --sync-compile)
  set_tests_properties(cli_run_conv_silu_chain_${level} PROPERTIES
    ENVIRONMENT "${HF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "outputs match unfused|nothing fused"
    FAIL_REGULAR_EXPRESSION "internal error|failed to compile")
endforeach()
# The settle phase is bounded by iterations too: 5 cannot settle (warm-up and profiling
# alone take more), so the run says where it stopped and measures as it is.
add_test(NAME cli_settle_iters
         COMMAND hotfuse-run ${PROJECT_SOURCE_DIR}/traces/graphs/abc.json --iters 1
                 --settle-iters 5 --backend cpu)
set_tests_properties(cli_settle_iters PROPERTIES ENVIRONMENT "${HF_TEST_ENV}"
  PASS_REGULAR_EXPRESSION "still [a-z]+ after 5 iterations \\(--settle-iters\\); measuring as it is")
add_test(NAME cli_sigterm
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_sigterm.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_sigterm PROPERTIES TIMEOUT 180)
add_test(NAME cli_shapes
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_shapes.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_shapes PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# Its bound is the timeout: quadratic planning took minutes. Sanitizers slow every step
# several-fold, and what they check is memory, not growth: their trees get more room.
set(long_chain_timeout 60)
if(HOTFUSE_SANITIZE)
  set(long_chain_timeout 300)
endif()
add_test(NAME cli_long_chain
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_long_chain.sh $<TARGET_FILE:hotfuse-run>)
set_tests_properties(cli_long_chain PROPERTIES ENVIRONMENT "${HF_TEST_ENV}"
  TIMEOUT ${long_chain_timeout})
add_test(NAME cli_report
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_report.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
add_test(NAME cli_errors
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_errors.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_report cli_errors PROPERTIES ENVIRONMENT "${HF_TEST_ENV}")
# Region verdicts kept in the kernel cache's directory for the next process (its own cache).
add_test(NAME cli_verdicts
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_verdicts.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_verdicts PROPERTIES TIMEOUT 300)
# The machine probe's cache entry under the cache's rules (each run names its own cache).
add_test(NAME cli_probe
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_probe.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
add_test(NAME cli_help COMMAND hotfuse-run --help)
set_tests_properties(cli_help PROPERTIES
  PASS_REGULAR_EXPRESSION "--iters.*--warmup.*--backend.*--fusion.*--profile-iters.*--reprofile-iters.*--min-saving.*--expected-iters.*--sync-compile.*--settle-timeout.*--report.*--check.*--atol.*--rtol.*--inputs.*--save-outputs.*--seed")
