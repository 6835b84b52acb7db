# Hardware locality: the hierarchies of DART_TEAM_ALL and of sub-teams, the
# units' records, the operations on hierarchies, dart_group_locality_split
# and bad input; on this machine (also on the UCX transport, which the
# exchange of records must keep progressing) and on recorded and synthetic
# topologies (DART_TOPOLOGY, with the shape they must show); in every run
# DASH's load-balancing weights from the records (finite, positive, a sane
# split); the configured clock and bandwidth where the topology gives none;
# dart_init with a DART_TOPOLOGY that hwloc cannot load and with a clock or
# bandwidth that is no positive number.
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
set(topologies ${CMAKE_CURRENT_SOURCE_DIR}/topologies)
# a recording of caches and memory only: the clock and bandwidth are the
# configured fallbacks
dart_add_test(locality_xml SOURCES test_locality.c
  LAYOUTS ${xml_layouts}
  ENV DART_TOPOLOGY=${topologies}/2pkg-2numa-4core.xml
  ARGS --shape 2,2,4,1 --caches 49152,524288,8388608 --numa-mib 256)
# the same with the bandwidth of each NUMA node (20000, 16000, 12000, 8000
# MiB/s from its cores) and two kinds of cores (3000 and 1500 MHz, even and
# odd cores) recorded, as hwloc records a machine's firmware tables
dart_add_test(locality_hmat SOURCES test_locality.c
  LAYOUTS ${xml_layouts}
  ENV DART_TOPOLOGY=${topologies}/2pkg-2numa-4core-hmat.xml
  ARGS --shape 2,2,4,1 --caches 49152,524288,8388608 --numa-mib 256
       --mhz 3000,1500 --mbps 20972,16777,12583,8389)
# and with no memory sizes and no cache line sizes recorded
dart_add_test(locality_sparse SOURCES test_locality.c UNITS 1 2 4
  LAYOUTS node upn2
  ENV DART_TOPOLOGY=${topologies}/2pkg-2numa-4core-sparse.xml
  ARGS --shape 2,2,4,1 --caches 49152,524288,8388608)
dart_add_test(locality_smt SOURCES test_locality.c
  LAYOUTS ${smt_layouts}
  ENV "DART_TOPOLOGY=package:1 numa:2 core:3 pu:2"
  ARGS --shape 1,2,3,2 --caches none --numa-mib 1024)
# the configured fallbacks: DART-MPI's DASH_MAX_SHMEM_MBPS where
# DART_SHMEM_MBPS is unset, DART_SHMEM_MBPS over it; on this machine and on
# a synthetic topology
dart_add_test(locality_fallback SOURCES test_locality.c UNITS 1 2 4
  LAYOUTS node upn2
  ENV DART_CPU_MHZ=1800 DART_SHMEM_MBPS=4321 DASH_MAX_SHMEM_MBPS=5000)
dart_add_test(locality_fallback_smt SOURCES test_locality.c UNITS 1 2 4
  LAYOUTS node upn2
  ENV "DART_TOPOLOGY=package:1 numa:2 core:3 pu:2" DART_CPU_MHZ=3100
      DASH_MAX_SHMEM_MBPS=5000
  ARGS --shape 1,2,3,2 --caches none --numa-mib 1024)
# configuration dart_init must refuse, one log line naming it
dart_add_test(locality_bad_synthetic SOURCES test_locality.c UNITS 1 2
  LAYOUTS node ENV "DART_TOPOLOGY=package:2 core:x"
  ARGS --bad-env DART_TOPOLOGY)
dart_add_test(locality_bad_xml SOURCES test_locality.c UNITS 1 2
  LAYOUTS node ENV DART_TOPOLOGY=/nonexistent/topology.xml
  ARGS --bad-env DART_TOPOLOGY)
set(bad_config_names "")
foreach(bad DART_CPU_MHZ=0 DART_CPU_MHZ=2600000 DART_SHMEM_MBPS=-5
            DASH_MAX_SHMEM_MBPS=fast)
  string(REPLACE "=" ";" name_value ${bad})
  list(GET name_value 0 name)
  list(GET name_value 1 value)
  string(TOLOWER "locality_bad_${name}_${value}" test)
  string(REGEX REPLACE "[^a-z0-9_]" "" test ${test})
  dart_add_test(${test} SOURCES test_locality.c UNITS 1 2 LAYOUTS node
    ENV ${bad} ARGS --bad-env ${name})
  list(APPEND bad_config_names ${test})
endforeach()
foreach(name locality locality_xml locality_hmat locality_sparse locality_smt
        locality_fallback locality_fallback_smt locality_bad_synthetic
        locality_bad_xml ${bad_config_names})
  target_link_libraries(test_${name} PRIVATE PkgConfig::HWLOC m)
endforeach()
