# End-to-end tests of the nmx plugin with its generator efu-nmx-gen (tests/nmx/end_to_end.py,
# docs/nmx.md "Generator (efu-nmx-gen)"): generator → efu → Kafka → Python consumer against the
# generator's ground truth, readouts in time order, shuffled inside packets and delayed across
# packets; nmx_split.json with pairs that must be split; every fault kind; the other facility
# files (mininmx.json, nmx_p0.json); nmx.json with a picture smaller than its strips
# (small_picture: events.rejected.pixel).
foreach(variant ordered shuffled delayed split split_delayed faults mininmx nmx_p0 small_picture)
  efu_add_python_test(nmx_end_to_end_${variant}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/end_to_end.py
      --build-dir ${CMAKE_BINARY_DIR} --source-dir ${PROJECT_SOURCE_DIR}
      --broker ${EFU_TEST_KAFKA_BOOTSTRAP} --variant ${variant}
    LABELS integration FIXTURES_REQUIRED kafka TIMEOUT 180)
endforeach()

# The generator on its own (no efu, no Kafka): its datagrams read back and turned into events by
# a Python model of the facility's rules (strip formula, time groups, split, span cuts, uTPC,
# pixel2D), against its ground truth.
efu_add_python_test(nmx_generator_model
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/end_to_end.py
    --build-dir ${CMAKE_BINARY_DIR} --source-dir ${PROJECT_SOURCE_DIR} --variant model
  LABELS unit TIMEOUT 120)
