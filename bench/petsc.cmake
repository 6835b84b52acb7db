# The PetscSF baseline of bench_plan: PETSc's star forests, where
# pkg-config finds PETSc and it builds with this MPI (PETSc's headers refuse
# another MPI's mpi.h, e.g. Debian's Open MPI PETSc in an MPICH build).
# Without it bench_plan measures libdart alone. Only the include folders and
# libraries are taken: PETSc's other flags (-D_FORTIFY_SOURCE) would warn,
# and so fail, in an unoptimised build.

pkg_check_modules(PETSC QUIET PETSc)
if(PETSC_FOUND)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_INCLUDES ${PETSC_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C ${PETSC_LINK_LIBRARIES})
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles([[
#include <petscsf.h>
int main(void) { PetscSF sf; return PetscSFCreate(PETSC_COMM_SELF, &sf); }
]] DART_PETSC_USABLE)
  unset(CMAKE_REQUIRED_INCLUDES)
  unset(CMAKE_REQUIRED_LIBRARIES)
  unset(CMAKE_REQUIRED_QUIET)
endif()
if(NOT PETSC_FOUND OR NOT DART_PETSC_USABLE)
  message(STATUS "bench: no PETSc for this MPI: bench_plan measures libdart "
                 "without the PetscSF baseline")
  return()
endif()
message(STATUS "bench: PetscSF baseline with PETSc ${PETSC_VERSION}")
target_compile_definitions(bench_plan PRIVATE BENCH_HAVE_PETSC)
target_include_directories(bench_plan SYSTEM PRIVATE ${PETSC_INCLUDE_DIRS})
target_link_libraries(bench_plan PRIVATE ${PETSC_LINK_LIBRARIES})
