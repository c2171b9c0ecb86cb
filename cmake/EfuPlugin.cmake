# efu_add_plugin(<name> SOURCES <files...>)
# Builds the shared object efu_<name>.so that the efu host loads with dlopen().
# The file name is what `efu --module <name>` looks for on the plugin search path.
function(efu_add_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "efu_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET efu::common)
    target_link_libraries(${name} PRIVATE efu::common)
  else()
    target_link_libraries(${name} PRIVATE efu_common)
  endif()
  set_target_properties(${name} PROPERTIES
    PREFIX "" OUTPUT_NAME "efu_${name}" SUFFIX ".so"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED EFU_PLUGIN_BUILD_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${EFU_PLUGIN_BUILD_DIR})
  endif()
endfunction()
