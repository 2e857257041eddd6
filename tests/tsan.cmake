# The adaptive session's threads (the compile worker, the executor, the thread pool), the
# session over a SessionTarget (test_session_target: the worker over any EnsureKernel) and the
# concurrency tests (many sessions in one process, processes sharing one cache) under
# ThreadSanitizer: in a HOTFUSE_SANITIZE=thread build those suites carry the label `tsan`,
# and tools/test.sh runs `ctest -L tsan` there.
# tools/test.sh runs them two at a time, but HF_RUN_ALONE's suites alone, as in the normal
# tree (tests/CMakeLists.txt says why).
if(HOTFUSE_SANITIZE STREQUAL "thread")
  foreach(suite test_session test_session_target test_concurrency)
    set(serial FALSE)
    if(suite IN_LIST HF_RUN_ALONE)
      set(serial TRUE)
    endif()
    gtest_discover_tests(${suite} TEST_PREFIX "tsan." DISCOVERY_TIMEOUT 60
                         PROPERTIES LABELS tsan TIMEOUT 600 RUN_SERIAL ${serial}
                         ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 second_deadlock_stack=1")
  endforeach()
endif()
