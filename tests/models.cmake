# ONNX import tests of the nn ops link the generated protobuf classes (tests/support/onnx_builder.h).
if(TARGET test_onnx_nn)
  target_link_libraries(test_onnx_nn PRIVATE onnx_proto)
endif()

# Real models end to end (models/export_models.py): ResNet-18, MobileNetV2, a GPT-2 block,
# ResNet-50 and a BERT-base encoder layer (two inputs, an i64 mask) exported by torch with torch's outputs as test data, each run under
# `hotfuse-run --check` at --fusion off, all and adaptive. The fixture exports them into
# the build tree (about 20 s the first time, nothing when they are up to date); without
# Debian's python3-torch, python3-torchvision and python3-onnx the model tests are skipped
# with that reason.
set(HF_MODELS_DIR ${PROJECT_BINARY_DIR}/models)
set(HF_MODELS_PYTHON /usr/bin/python3 CACHE FILEPATH
    "Python with torch, torchvision and onnx for models/export_models.py")
add_test(NAME models_export
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/models_export.sh ${HF_MODELS_PYTHON}
                 ${PROJECT_SOURCE_DIR}/models/export_models.py ${HF_MODELS_DIR})
set_tests_properties(models_export PROPERTIES FIXTURES_SETUP hf_models TIMEOUT 600)
foreach(model resnet18 mobilenet_v2 gpt2_block resnet50 bert_layer)
  foreach(level off all adaptive)
    set(extra)
    if(level STREQUAL "adaptive")
      set(extra --sync-compile)
    endif()
    add_test(NAME model_${model}_${level}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/model_check.sh $<TARGET_FILE:hotfuse-run>
                     ${HF_MODELS_DIR} ${model} ${level} --backend cpu --threads 2 ${extra})
    set_tests_properties(model_${model}_${level} PROPERTIES
      FIXTURES_REQUIRED hf_models
      ENVIRONMENT "HOTFUSE_CACHE_DIR=${PROJECT_BINARY_DIR}/test-kernel-cache;HOTFUSE_VERDICTS=off"
      SKIP_RETURN_CODE 77
      TIMEOUT 600
      LABELS models)
  endforeach()
endforeach()

# The models as a current PyTorch exports them (models/export_models.py --current: torch's
# default exporter and opset, 20 for torch 2.15, with a symbolic batch dimension), each
# checked against torch at batch 1, 4 and 16 in one process (tests/model_check.sh: the
# batch sizes after the first must compile no kernel). Needs a PyPI torch in a venv
# (HF_TORCH_PYTHON; Debian's torch is 1.13), else skipped with that reason.
set(HF_TORCH_PYTHON "" CACHE FILEPATH
    "Python with PyPI torch >= 2.9, torchvision and onnxscript (models/export_models.py --current)")
set(HF_MODELS_CURRENT_DIR ${PROJECT_BINARY_DIR}/models-current)
add_test(NAME models_export_current
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/models_export.sh "${HF_TORCH_PYTHON}"
                 ${PROJECT_SOURCE_DIR}/models/export_models.py ${HF_MODELS_CURRENT_DIR} --current)
set_tests_properties(models_export_current PROPERTIES
  FIXTURES_SETUP hf_models_current TIMEOUT 600)
foreach(model resnet18 mobilenet_v2 gpt2_block resnet50 bert_layer)
  foreach(level off all)
    add_test(NAME model_current_${model}_${level}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/model_check.sh
                     $<TARGET_FILE:hotfuse-run> ${HF_MODELS_CURRENT_DIR} ${model} ${level}
                     --backend cpu --threads 2)
    set_tests_properties(model_current_${model}_${level} PROPERTIES
      FIXTURES_REQUIRED hf_models_current
      ENVIRONMENT "HOTFUSE_CACHE_DIR=${PROJECT_BINARY_DIR}/test-kernel-cache;HOTFUSE_VERDICTS=off"
      SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS models)
  endforeach()
endforeach()

# The same models on the CUDA backend (Conv through cuDNN, the pools, Concat/Slice/Gather
# kernels) unfused and fused; skipped (exit 77) with the reason without a usable device.
if(HF_HAVE_CUDA_BACKEND)
  foreach(model resnet18 mobilenet_v2 gpt2_block resnet50 bert_layer)
    foreach(level off all)
      add_test(NAME model_${model}_cuda_${level}
               COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cuda_or_skip.sh $<TARGET_FILE:hotfuse-run>
                       bash ${CMAKE_CURRENT_SOURCE_DIR}/model_check.sh $<TARGET_FILE:hotfuse-run>
                       ${HF_MODELS_DIR} ${model} ${level} --backend cuda)
      set_tests_properties(model_${model}_cuda_${level} PROPERTIES
        FIXTURES_REQUIRED hf_models
        ENVIRONMENT "HOTFUSE_CACHE_DIR=${PROJECT_BINARY_DIR}/test-kernel-cache;HOTFUSE_VERDICTS=off"
        SKIP_RETURN_CODE 77
        TIMEOUT 600
        LABELS "models;cuda")
    endforeach()
  endforeach()
endif()
