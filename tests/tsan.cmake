# The adaptive session's threads (the compile worker, the executor, the thread pool) under
# ThreadSanitizer: in a HOTFUSE_SANITIZE=thread build the session tests carry the label
# `tsan`, and tools/test.sh runs `ctest -L tsan` there.
if(HOTFUSE_SANITIZE STREQUAL "thread")
  gtest_discover_tests(test_session TEST_PREFIX "tsan." DISCOVERY_TIMEOUT 60
                       PROPERTIES LABELS tsan TIMEOUT 600
                       ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1")
endif()
