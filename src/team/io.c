/*
 * dart_io.h: a team's communicator for HDF5's MPI-IO driver. The program
 * that calls this links parallel HDF5; libdart finds H5Pset_fapl_mpio in
 * it, so that it needs no HDF5 of its own (and none where no one uses it).
 */
#include <dart/dart_io.h>
#include <dlfcn.h>

#include "base/runtime.h"
#include "team/team.h"

/* herr_t H5Pset_fapl_mpio(hid_t, MPI_Comm, MPI_Info); hid_t is int64_t
 * since HDF5 1.10, herr_t an int */
typedef int (*set_fapl_mpio_t)(int64_t, MPI_Comm, MPI_Info);

dart_ret_t dart__io__hdf5__prep_mpio(int64_t plist_id, dart_team_t teamid)
{
  DART__CHECK_INIT();
  dart__team_t *team = dart__team__lookup(__func__, teamid);
  if (team == NULL) return DART_ERR_INVAL;
  set_fapl_mpio_t set_fapl_mpio;
  *(void **)&set_fapl_mpio = dlsym(RTLD_DEFAULT, "H5Pset_fapl_mpio");
  if (set_fapl_mpio == NULL) {
    DART_LOG_ERROR("H5Pset_fapl_mpio is not in this program: it needs a "
                   "parallel HDF5 (Debian: libhdf5-openmpi-dev)");
    return DART_ERR_OTHER;
  }
  if (set_fapl_mpio(plist_id, team->comm, MPI_INFO_NULL) < 0) {
    DART_LOG_ERROR("H5Pset_fapl_mpio failed on property list %lld",
                   (long long)plist_id);
    return DART_ERR_OTHER;
  }
  return DART_OK;
}
