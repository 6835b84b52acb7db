# Hardware locality: the hierarchies of DART_TEAM_ALL and of sub-teams, the
# units' records, the operations on hierarchies, dart_group_locality_split
# and bad input; on this machine (also on the UCX transport, which the
# exchange of records must keep progressing) and on recorded and synthetic
# topologies (DART_TOPOLOGY, with the shape they must show); dart_init with
# a DART_TOPOLOGY that hwloc cannot load.
set(locality_layouts node upn1 upn2 upn3)
dart_add_test(locality SOURCES test_locality.c LAYOUTS ${locality_layouts}
              UCX)
# the recorded and synthetic topologies: their layouts in the release
# build, the physical node in the sanitizer build
set(xml_layouts ${locality_layouts})
set(smt_layouts node upn2 upn3)
if(DART_SANITIZE)
  set(xml_layouts node)
  set(smt_layouts node)
endif()
dart_add_test(locality_xml SOURCES test_locality.c
  LAYOUTS ${xml_layouts}
  ENV DART_TOPOLOGY=${CMAKE_CURRENT_SOURCE_DIR}/topologies/2pkg-2numa-4core.xml
  ARGS --shape 2,2,4,1 --caches 49152,524288,8388608 --numa-mib 256)
dart_add_test(locality_smt SOURCES test_locality.c
  LAYOUTS ${smt_layouts}
  ENV "DART_TOPOLOGY=package:1 numa:2 core:3 pu:2"
  ARGS --shape 1,2,3,2 --caches none --numa-mib 1024)
dart_add_test(locality_bad_synthetic SOURCES test_locality.c UNITS 1 2
  LAYOUTS node ENV "DART_TOPOLOGY=package:2 core:x" ARGS --bad-topology)
dart_add_test(locality_bad_xml SOURCES test_locality.c UNITS 1 2
  LAYOUTS node ENV DART_TOPOLOGY=/nonexistent/topology.xml
  ARGS --bad-topology)
foreach(name locality locality_xml locality_smt locality_bad_synthetic
        locality_bad_xml)
  target_link_libraries(test_${name} PRIVATE PkgConfig::HWLOC)
endforeach()
