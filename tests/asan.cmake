# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer): in a
# HOTFUSE_SANITIZE=address,undefined build every test in this directory carries the label
# `asan`, and tools/test.sh runs `ctest -L asan` there (docs/reliability.md).
if(HOTFUSE_SANITIZE MATCHES "address")
  set_property(DIRECTORY APPEND PROPERTY LABELS asan)
endif()
