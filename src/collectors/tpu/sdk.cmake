# runmon_collectors_tpu_sdk: libtpu's monitoring SDK (libtpu_sdk.hpp), loaded with dlopen at run time and
# never linked, and the search for libtpu.so.
add_library(runmon_collectors_tpu_sdk STATIC ${CMAKE_CURRENT_LIST_DIR}/libtpu_sdk.cpp)
target_link_libraries(runmon_collectors_tpu_sdk PUBLIC runmon_core runmon_fmt ${CMAKE_DL_LIBS})
runmon_set_warnings(runmon_collectors_tpu_sdk)
