# hotfuse-run --dump end to end (tests/dump_cli.sh): the files of each --fusion level, the
# DOT parsed by Graphviz when present, a non-empty directory refused, --force. Kernels go to
# a cache inside the build tree, never the user's.
add_test(NAME cli_dump
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dump_cli.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_dump PROPERTIES
  ENVIRONMENT "HOTFUSE_CACHE_DIR=${PROJECT_BINARY_DIR}/test-kernel-cache;HOTFUSE_VERDICTS=off"
  PASS_REGULAR_EXPRESSION "dump CLI: all checks passed"
  TIMEOUT 600)
