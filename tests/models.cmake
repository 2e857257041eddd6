# ONNX import tests of the nn ops link the generated protobuf classes (tests/support/onnx_builder.h).
if(TARGET test_onnx_nn)
  target_link_libraries(test_onnx_nn PRIVATE onnx_proto)
endif()
