# efu_add_plugin(<name> SOURCES <files...> [NO_INSTALL])
#
# Builds the shared object efu_<name>.so that the efu host loads with dlopen(): `efu --module
# <name>` finds it on the plugin search path ($EFU_PLUGIN_PATH, the build tree, the install
# prefix). Symbols are hidden except the entry point defined by EFU_PLUGIN(), so two plugins
# never clash. Works in the efu tree and out of tree after find_package(efu).
function(efu_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "efu_add_plugin(${name}): SOURCES is required")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET efu::common)
    target_link_libraries(${name} PRIVATE efu::common)
  else()
    target_link_libraries(${name} PRIVATE efu_common)
  endif()
  target_compile_features(${name} PRIVATE cxx_std_20)
  set_target_properties(${name} PROPERTIES
    PREFIX "" OUTPUT_NAME "efu_${name}" SUFFIX ".so"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED EFU_PLUGIN_BUILD_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${EFU_PLUGIN_BUILD_DIR})
  endif()
  if(DEFINED EFU_PLUGIN_INSTALL_DIR AND NOT ARG_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION ${EFU_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
