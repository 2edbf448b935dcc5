# How a collector family plugs in, from its own folder (docs/adding-a-collector.md).
#
# runmon_metric_family(NAME SOURCES...): a collector family's metric descriptor table, from the family's
# own folder. The sources are compiled into runmon_core (they are constant data and need nothing else, so
# every reader of the catalog has them without linking a collector), and NAME joins the list the catalog's
# join is generated from (src/core/CMakeLists.txt): the source must define
# `std::span<const MetricDescriptor> runmon::metric_families::NAME()`. Families join in the order their
# folders are added (src/collectors/CMakeLists.txt), which is their order within a catalog section.
function(runmon_metric_family name)
  target_sources(runmon_core PRIVATE ${ARGN})
  set_property(TARGET runmon_core APPEND PROPERTY RUNMON_METRIC_FAMILIES ${name})
endfunction()

# runmon_collector_family(NAME SOURCES...): a family's factory. The sources join runmon_collectors and NAME
# joins the generated factory table (src/collectors/CMakeLists.txt): the sources must define
# `const CollectorFamily& runmon::collector_families::NAME()` (collectors/builtin.hpp). Families start in the
# order they are registered; a folder may register several (each its own row) and sources may be empty
# when an earlier call of the folder already added them.
function(runmon_collector_family name)
  if(ARGN)
    target_sources(runmon_collectors PRIVATE ${ARGN})
  endif()
  set_property(TARGET runmon_collectors APPEND PROPERTY RUNMON_COLLECTOR_FAMILIES ${name})
endfunction()
