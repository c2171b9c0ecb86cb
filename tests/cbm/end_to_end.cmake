# End to end through a broker (the suite's kafka fixture): efu-cbm-gen -> efu --module cbm ->
# Kafka, per test config of tests/cbm/e2e_<type>.json, with every fault the generator makes.
# The events and histograms read back must equal the generator's ground truth exactly and the
# counters what it sent, fault by fault.
foreach(type 0d 2d ibm beer)
  efu_add_python_test(cbm_end_to_end_${type}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/end_to_end.py
      --build-dir ${CMAKE_BINARY_DIR} --source-dir ${PROJECT_SOURCE_DIR}
      --broker ${EFU_TEST_KAFKA_BOOTSTRAP} --type ${type}
    LABELS integration FIXTURES_REQUIRED kafka TIMEOUT 180)
endforeach()
