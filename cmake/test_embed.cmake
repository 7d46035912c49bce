# ctest install.embed_example: install keig, build examples/embed against the
# installed package (find_package(keig)), run it.
set(prefix "${KEIG_BINARY_DIR}/embed-test/install")
set(build "${KEIG_BINARY_DIR}/embed-test/build")
file(REMOVE_RECURSE "${KEIG_BINARY_DIR}/embed-test")
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "embed test: '${ARGN}' failed (${rc})")
  endif()
endfunction()
step(${CMAKE_COMMAND} --install "${KEIG_BINARY_DIR}" --prefix "${prefix}")
string(REPLACE ";" "\\;" prefix_path "${prefix};${KEIG_PREFIX_PATH}")
step(${CMAKE_COMMAND} -S "${KEIG_SOURCE_DIR}/examples/embed" -B "${build}" -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_CXX_COMPILER=${KEIG_CXX_COMPILER} "-DCMAKE_PREFIX_PATH=${prefix_path}")
step(${CMAKE_COMMAND} --build "${build}")
step("${build}/embed")
