# End-to-end tests of the trex plugin with its generator (registered by the generator's author;
# included by tests/trex/CMakeLists.txt).
#
# Generator → efu --module trex → Kafka → Python consumer against the ground truth: the
# facility's trex.json time ordered, shuffled inside packets and delayed across packets; let.json
# ordered and shuffled; every fault kind (trex_shuffled, let_shuffled and faults also draw a tenth
# of the neutrons outside the pixel volume: expected rejections, counted); two copies of the
# facility files with one value changed (trex_size140: SizeY 140; let_offset: YOffset 50) so that
# whole vessels, rotated ones included, land inside the pixel volume; grid_span: neutrons over the
# grid-span cut, rejected and counted.
foreach(variant trex_ordered trex_shuffled trex_delayed let_ordered let_shuffled faults
        trex_size140 let_offset grid_span)
  efu_add_python_test(trex_end_to_end_${variant}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/end_to_end.py
      --build-dir ${CMAKE_BINARY_DIR} --source-dir ${PROJECT_SOURCE_DIR}
      --broker ${EFU_TEST_KAFKA_BOOTSTRAP} --variant ${variant}
    LABELS integration FIXTURES_REQUIRED kafka TIMEOUT 180)
endforeach()

# The generator alone, no efu and no Kafka: its datagrams on a UDP socket of the test, decoded with
# the reference's forward equations (TREXGeometry, LETGeometry), against its own ground truth.
efu_add_python_test(trex_generator_against_reference
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/end_to_end.py
    --build-dir ${CMAKE_BINARY_DIR} --source-dir ${PROJECT_SOURCE_DIR} --variant generator
  LABELS integration TIMEOUT 180)
