# The reliability suites (docs/reliability.md): the security test builds an ONNX model
# with the generated protobuf classes.
if(TARGET test_faults_security)
  target_link_libraries(test_faults_security PRIVATE onnx_proto)
endif()
if(TARGET test_faults)
  target_link_libraries(test_faults PRIVATE onnx_proto)
endif()
