# CMA: node peers' registered memory and grown pool chunks through
# process_vm_readv/writev (path counters), 1 B to 64 MiB, strided layouts,
# atomics on the remote transport; DART_CMA=0 (and DART_SHM=0: noshm) take
# the remote path instead (grown chunks: MPI). Every run has node peers
# (upn2 at 2 units would be the physical node and is left out).
dart_add_test(cma SOURCES test_cma.c UNITS 2 4 LAYOUTS node upn2 upn2.ucx
              ENV DART_LOCAL_POOL=1M)
dart_add_test(cma_off SOURCES test_cma.c UNITS 2 4 LAYOUTS node upn2.ucx noshm
              ENV DART_LOCAL_POOL=1M DART_CMA=0)
