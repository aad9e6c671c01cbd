# remotecall_generate(TARGET <target> FILES <a.x>... [CLIENT] [SERVER] [OUTPUT_DIR <dir>])
#
# Runs idlc (the target remotecall::idlc) on each .x file at build time and adds what it
# writes to <target>: NAME.h and NAME_xdr.c always, NAME_clnt.c (the client stubs) with CLIENT,
# NAME_svc.c (the server's tables, which call the NAME_V_svc procedures the target defines)
# with SERVER; with neither, both. The output folder (default
# ${CMAKE_CURRENT_BINARY_DIR}/remotecall_gen) goes on the target's include path, the target
# links remotecall::remotecall, and the files are made again whenever the .x file or idlc
# changes -- as protobuf_generate does for .proto files.
function(remotecall_generate)
  cmake_parse_arguments(RCG "CLIENT;SERVER" "TARGET;OUTPUT_DIR" "FILES" ${ARGN})
  if(NOT RCG_TARGET OR NOT RCG_FILES)
    message(FATAL_ERROR "remotecall_generate: TARGET and FILES are required")
  endif()
  if(RCG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "remotecall_generate: unknown arguments ${RCG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${RCG_TARGET})
    message(FATAL_ERROR "remotecall_generate: ${RCG_TARGET} is not a target")
  endif()
  if(NOT TARGET remotecall::idlc)
    message(FATAL_ERROR "remotecall_generate: remotecall::idlc is not defined "
                        "(find_package(remotecall) first; on Debian, install the idlc package)")
  endif()
  if(NOT RCG_CLIENT AND NOT RCG_SERVER)
    set(RCG_CLIENT ON)
    set(RCG_SERVER ON)
  endif()
  if(NOT RCG_OUTPUT_DIR)
    set(RCG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/remotecall_gen)
  endif()
  file(MAKE_DIRECTORY ${RCG_OUTPUT_DIR})
  foreach(x IN LISTS RCG_FILES)
    get_filename_component(src ${x} ABSOLUTE)
    get_filename_component(name ${x} NAME_WE)
    set(outs ${RCG_OUTPUT_DIR}/${name}.h ${RCG_OUTPUT_DIR}/${name}_xdr.c
        ${RCG_OUTPUT_DIR}/${name}_clnt.c ${RCG_OUTPUT_DIR}/${name}_svc.c)
    add_custom_command(
      OUTPUT ${outs}
      COMMAND remotecall::idlc -o ${RCG_OUTPUT_DIR} ${src}
      DEPENDS ${src} remotecall::idlc
      COMMENT "idlc ${x}"
      VERBATIM)
    set(use ${RCG_OUTPUT_DIR}/${name}.h ${RCG_OUTPUT_DIR}/${name}_xdr.c)
    if(RCG_CLIENT)
      list(APPEND use ${RCG_OUTPUT_DIR}/${name}_clnt.c)
    endif()
    if(RCG_SERVER)
      list(APPEND use ${RCG_OUTPUT_DIR}/${name}_svc.c)
    endif()
    target_sources(${RCG_TARGET} PRIVATE ${use})
  endforeach()
  target_include_directories(${RCG_TARGET} PRIVATE ${RCG_OUTPUT_DIR})
  target_link_libraries(${RCG_TARGET} PRIVATE remotecall::remotecall)
endfunction()
