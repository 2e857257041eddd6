# layers: no #include points from a folder to one in a higher layer (tools/check_layers.py
# has the order; CMakeLists.txt builds one library per layer folder in the same order).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME layers
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(layers PROPERTIES TIMEOUT 60)
endif()
