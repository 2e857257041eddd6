# hotfuse-run end to end: every example prints its per-op table, and every kind of bad
# input gives exit code 2 with one line naming the problem (tests/cli_errors.sh).
file(GLOB HF_EXAMPLES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/traces/graphs/*.json)
foreach(ex ${HF_EXAMPLES})
  get_filename_component(name ${ex} NAME_WE)
  add_test(NAME cli_run_${name}
           COMMAND hotfuse-run ${ex} --iters 3 --warmup 1 --backend cpu)
  set_tests_properties(cli_run_${name} PROPERTIES
    PASS_REGULAR_EXPRESSION "sum of ops"
    FAIL_REGULAR_EXPRESSION "internal error")
endforeach()
add_test(NAME cli_errors
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli_errors.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
add_test(NAME cli_help COMMAND hotfuse-run --help)
set_tests_properties(cli_help PROPERTIES
  PASS_REGULAR_EXPRESSION "--iters.*--warmup.*--backend.*--seed")
