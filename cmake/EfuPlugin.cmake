# efu_add_plugin(<name> SOURCES <files...>
#                [CORE <files...>]
#                [CONFIGS <dir>]
#                [GENERATOR <executable> <files...>]
#                [NO_INSTALL])
#
# Builds the shared object efu_<name>.so that the efu host loads with dlopen(): `efu --module
# <name>` finds it on the plugin search path ($EFU_PLUGIN_PATH, the build tree, the install
# prefix). Symbols are hidden except the entry point defined by EFU_PLUGIN(), so two plugins
# never clash. Works in the efu tree and out of tree after find_package(efu).
#
# CORE: the family's logic as the static library <name>_core (its folder on the include path),
#   which the plugin, the generator, tests and benchmarks link.
# CONFIGS: a folder of shipped *.json configs, installed to <prefix>/share/efu/<name>/. The core
#   (or the plugin, without CORE) gets EFU_PLUGIN_CONFIGS_SOURCE (this folder, used while it
#   exists) and EFU_PLUGIN_CONFIGS_INSTALLED (the installed one) for efu::ShippedFiles
#   (efu/plugin_files.h).
# GENERATOR: the family's data generator, an executable linking the core.
# NO_INSTALL: nothing is installed (test plugins).
include(GNUInstallDirs)

function(efu_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "CONFIGS" "SOURCES;CORE;GENERATOR" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "efu_add_plugin(${name}): SOURCES is required")
  endif()
  if(TARGET efu::common)
    set(common efu::common)
  else()
    set(common efu_common)
  endif()

  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${common})
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

  set(logic ${name})
  if(ARG_CORE)
    set(logic ${name}_core)
    add_library(${logic} STATIC ${ARG_CORE})
    target_include_directories(${logic} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${logic} PUBLIC ${common})
    target_compile_features(${logic} PUBLIC cxx_std_20)
    set_target_properties(${logic} PROPERTIES POSITION_INDEPENDENT_CODE ON)  # in a MODULE
    target_link_libraries(${name} PRIVATE ${logic})
  endif()

  if(ARG_CONFIGS)
    target_compile_definitions(${logic} PRIVATE
      EFU_PLUGIN_CONFIGS_SOURCE="${CMAKE_CURRENT_SOURCE_DIR}/${ARG_CONFIGS}"
      EFU_PLUGIN_CONFIGS_INSTALLED="${CMAKE_INSTALL_FULL_DATADIR}/efu/${name}")
    if(NOT ARG_NO_INSTALL)
      install(DIRECTORY ${ARG_CONFIGS}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/efu/${name}
        FILES_MATCHING PATTERN "*.json")
    endif()
  endif()

  if(ARG_GENERATOR)
    list(POP_FRONT ARG_GENERATOR generator)
    if(NOT ARG_GENERATOR OR NOT ARG_CORE)
      message(FATAL_ERROR "efu_add_plugin(${name}): GENERATOR needs a name, its sources and CORE")
    endif()
    add_executable(${generator} ${ARG_GENERATOR})
    target_link_libraries(${generator} PRIVATE ${logic})
    if(TARGET CLI11::CLI11)  # the generators' shared command line (efu/gen/) uses CLI11
      target_link_libraries(${generator} PRIVATE CLI11::CLI11)
    endif()
    if(NOT ARG_NO_INSTALL)
      install(TARGETS ${generator} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    endif()
  endif()
endfunction()
