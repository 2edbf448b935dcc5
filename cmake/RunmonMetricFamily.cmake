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
