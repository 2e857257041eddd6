# hotfuse-view (viewer/, docs/viewer.md).
#
# test_viewer_model (the data model's unit tests) links the model library, and the Graphviz
# layout library when it was built (HF_VIEWER_HAVE_LAYOUT turns its tests on).
#
# viewer_screenshot renders the committed example dump headless (xvfb-run -a, Mesa software
# OpenGL) to a PNG and checks it: the requested size, and many distinct colours in the graph
# area; then the ~300-node synthetic model dump (tests/data/viewer/scoped300), checking what
# the Graph panel says it drew (--screenshot-facts): scope boxes and readable labels at fit,
# and a click on a box expanding it. viewer_bad_dump checks that a missing / empty / malformed dump is reported on stderr
# with a non-zero exit. Without xvfb-run (or python3) they are skipped, saying why, with
# CTest's SKIP_RETURN_CODE 77; they are not registered at all when hotfuse-view is not built
# (the configure step says so).
# test_viewer_graph (the Graph panel's grouping, name elision, layout direction and title;
# the synthetic 300-node dump tests/data/viewer/scoped300) is linked the same way.
foreach(t test_viewer_model test_viewer_graph)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE hf_viewer_model)
    if(TARGET hf_viewer_layout)
      target_link_libraries(${t} PRIVATE hf_viewer_layout)
      target_compile_definitions(${t} PRIVATE HF_VIEWER_HAVE_LAYOUT=1)
    endif()
  endif()
endforeach()

# test_viewer_timeline: the Timeline's model (range statistics, search, label placement,
# flows, counters) and the files side (per-file errors, recent dumps, the folder watch).
if(TARGET test_viewer_timeline)
  target_link_libraries(test_viewer_timeline PRIVATE hf_viewer_model)
endif()

if(TARGET hotfuse-view)
  # The dump the screenshot is taken of: the example dump the dump writer commits
  # (traces/adam/) when it is there, else the viewer's own fixture.
  set(HF_VIEWER_TEST_DUMP ${PROJECT_SOURCE_DIR}/tests/data/viewer/adam)
  if(EXISTS ${PROJECT_SOURCE_DIR}/traces/adam/report.json)
    set(HF_VIEWER_TEST_DUMP ${PROJECT_SOURCE_DIR}/traces/adam)
  endif()
  add_test(NAME viewer_screenshot
           COMMAND sh ${PROJECT_SOURCE_DIR}/viewer/tools/screenshot_test.sh
                   $<TARGET_FILE:hotfuse-view> ${HF_VIEWER_TEST_DUMP}
                   ${CMAKE_CURRENT_BINARY_DIR}/viewer_screenshot
                   ${PROJECT_SOURCE_DIR}/tests/data/viewer/scoped300)
  add_test(NAME viewer_bad_dump
           COMMAND sh ${PROJECT_SOURCE_DIR}/viewer/tools/bad_dump_test.sh
                   $<TARGET_FILE:hotfuse-view> ${PROJECT_SOURCE_DIR}/tests/data/viewer
                   ${CMAKE_CURRENT_BINARY_DIR}/viewer_bad_dump)
  set_tests_properties(viewer_screenshot viewer_bad_dump PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS viewer)
endif()

# viewer_timeline_screenshot: the Timeline's and Summary's messages and colours (a slowdown
# in red, a garbage trace.json's parse error in the Timeline, nothing cut off at 1024x640),
# from the frame's facts (--screenshot-facts) and the pixels.
if(TARGET hotfuse-view)
  add_test(NAME viewer_timeline_screenshot
           COMMAND sh ${PROJECT_SOURCE_DIR}/viewer/tools/timeline_screenshot_test.sh
                   $<TARGET_FILE:hotfuse-view> ${PROJECT_SOURCE_DIR}/tests/data/viewer
                   ${CMAKE_CURRENT_BINARY_DIR}/viewer_timeline_screenshot)
  set_tests_properties(viewer_timeline_screenshot PROPERTIES
                       SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS viewer)
endif()
