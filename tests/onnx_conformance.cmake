# ONNX conformance: `hotfuse-run --check` on ONNX's own backend-test data, from Debian's
# libonnx-testdata (tools/install-deps.sh). Every node/ test runs under --fusion off and
# --fusion all; a test the importer refuses as unsupported ("unsupported op", "element type
# DOUBLE is not supported", ...: exit code 2 and one line saying so) is reported SKIPPED,
# anything else that does not pass fails. The summary tests print "N passed, M failed, K
# skipped" with every skip reason (tests/onnx_conformance.sh). Tests whose data hotfuse
# deliberately disagrees with are listed with the reason in onnx_conformance_known.txt and
# must fail their check. Without the package the tests are not added (a configure message
# says so). docs/onnx.md has the results.
set(HF_ONNX_TESTDATA "/usr/share/libonnx-testdata/data" CACHE PATH
    "ONNX backend-test data (Debian's libonnx-testdata)")

# hotfuse-run --check, --atol/--rtol, --inputs, --save-outputs (docs/onnx.md): on copies
# of libonnx-testdata's node tests (check_cli.sh), and on a generated model that the
# adaptive session fuses (check_adaptive.sh, needs Debian's python3-onnx). Each is skipped
# (exit code 77) without what it needs; check_adaptive.sh also when, on a loaded machine,
# the session keeps no fused kernel in 5 tries. About 3 and 7 s.
add_test(NAME cli_check
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_cli.sh $<TARGET_FILE:hotfuse-run>
                 "${HF_ONNX_TESTDATA}/node")
add_test(NAME cli_check_adaptive
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_adaptive.sh $<TARGET_FILE:hotfuse-run>
                 ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_check cli_check_adaptive PROPERTIES
  ENVIRONMENT "${HF_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 300)

# The conformance sweeps below run in the normal tree only: in a sanitizer tree (one process
# per model, each several times slower) they cost more than the rest of its suite, whose
# unit tests run the same kernels and importer, as do the fuzzers (docs/reliability.md).
if(HOTFUSE_SANITIZE)
  return()
endif()

# The node tests of a current ONNX release, at its newest opsets (Debian's data above stops
# at opset 17): tests/onnx_node_suite.py writes them with PyPI onnx from the test venv
# (tools/test-venv.sh, which tools/test.sh runs; about 5 s), then one summary each under
# --fusion off and all, with their own list of known disagreements, of the tests that are
# not byte-identical to Debian's (a quarter are; those run below, under both levels).
# Skipped with the reason when the venv is missing (no PyPI).
set(HF_TEST_VENV ${PROJECT_BINARY_DIR}/test-venv CACHE PATH
    "venv with the PyPI test tooling (tools/test-venv.sh)")
set(HF_ONNX_CURRENT ${PROJECT_BINARY_DIR}/onnx-current)
add_test(NAME onnx_current_generate
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/onnx_current.sh generate ${HF_TEST_VENV}
                 ${HF_ONNX_CURRENT})
set_tests_properties(onnx_current_generate PROPERTIES
  FIXTURES_SETUP onnx_current SKIP_RETURN_CODE 77 TIMEOUT 300)
foreach(level off all)
  add_test(NAME onnx_summary_current_${level}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/onnx_current.sh summary ${HF_ONNX_CURRENT}
                   $<TARGET_FILE:hotfuse-run>
                   ${CMAKE_CURRENT_SOURCE_DIR}/onnx_conformance_known_current.txt
                   "${HF_ONNX_TESTDATA}/node" --fusion ${level} --threads 1 --backend cpu)
  set_tests_properties(onnx_summary_current_${level} PROPERTIES
    FIXTURES_REQUIRED onnx_current ENVIRONMENT "${HF_TEST_ENV}" LABELS onnx_conformance
    SKIP_RETURN_CODE 77 TIMEOUT 1200)
endforeach()

if(NOT IS_DIRECTORY "${HF_ONNX_TESTDATA}/node")
  message(STATUS "ONNX conformance tests: ${HF_ONNX_TESTDATA}/node not found (install "
                 "libonnx-testdata); not added")
  return()
endif()

set(HF_ONNX_KNOWN ${CMAKE_CURRENT_SOURCE_DIR}/onnx_conformance_known.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${HF_ONNX_KNOWN})
file(STRINGS ${HF_ONNX_KNOWN} known_lines REGEX "^[^#].*: ")
set(known_tests "")
foreach(line ${known_lines})
  string(REGEX REPLACE ":.*" "" name "${line}")
  list(APPEND known_tests ${name})
endforeach()

file(GLOB node_dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS "${HF_ONNX_TESTDATA}/node/*")
# One thread each: the tensors are tiny, and the timing-sensitive tests that CTest runs
# beside these (test_session) keep a core.
foreach(dir ${node_dirs})
  if(NOT EXISTS "${dir}/model.onnx")
    continue()
  endif()
  get_filename_component(name "${dir}" NAME)
  foreach(level off all)
    set(test onnx_node_${name}_${level})
    add_test(NAME ${test} COMMAND hotfuse-run --check "${dir}" --fusion ${level} --threads 1
                                  --backend cpu)
    set_tests_properties(${test} PROPERTIES
      ENVIRONMENT "${HF_TEST_ENV}" LABELS onnx_conformance TIMEOUT 120
      SKIP_REGULAR_EXPRESSION "unsupported|not supported")
    if(name IN_LIST known_tests)
      # It must run and fail its comparison, nothing else.
      set_tests_properties(${test} PROPERTIES PASS_REGULAR_EXPRESSION "test_data_set_0: FAIL: output")
    endif()
  endforeach()
endforeach()

# The summaries: one line of counts and the skip reasons per folder (--fusion off; the
# tests above run node/ under --fusion all as well). The pytorch-* and simple/ folders are
# cheap (under 2 s together), so they are swept too.
foreach(folder node pytorch-converted pytorch-operator simple)
  if(IS_DIRECTORY "${HF_ONNX_TESTDATA}/${folder}")
    add_test(NAME onnx_summary_${folder}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/onnx_conformance.sh $<TARGET_FILE:hotfuse-run>
                     "${HF_ONNX_TESTDATA}/${folder}" ${HF_ONNX_KNOWN} --fusion off --threads 1
                     --backend cpu)
    set_tests_properties(onnx_summary_${folder} PROPERTIES
      ENVIRONMENT "${HF_TEST_ENV}" LABELS onnx_conformance TIMEOUT 600)
  endif()
endforeach()

# The node/ summary on the CUDA backend (--fusion off: the AOT, cuBLAS and cuDNN kernels;
# all: NVRTC fused kernels too). Skipped (exit 77) with hotfuse-run's reason without a
# usable device (tests/cuda_or_skip.sh).
if(HF_HAVE_CUDA_BACKEND AND IS_DIRECTORY "${HF_ONNX_TESTDATA}/node")
  foreach(level off all)
    add_test(NAME onnx_summary_node_cuda_${level}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cuda_or_skip.sh $<TARGET_FILE:hotfuse-run>
                     bash ${CMAKE_CURRENT_SOURCE_DIR}/onnx_conformance.sh $<TARGET_FILE:hotfuse-run>
                     "${HF_ONNX_TESTDATA}/node" ${HF_ONNX_KNOWN} --fusion ${level} --backend cuda)
    set_tests_properties(onnx_summary_node_cuda_${level} PROPERTIES
      ENVIRONMENT "${HF_TEST_ENV}" LABELS "onnx_conformance;cuda" TIMEOUT 900
      SKIP_RETURN_CODE 77)
  endforeach()
endif()
