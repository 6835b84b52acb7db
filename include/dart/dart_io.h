/**
 * \file dart_io.h
 * Parallel I/O of the DART 3.2 interface: HDF5 files through MPI-IO on a
 * team's communicator.
 *
 * Self-contained: the file access property list is an int64_t, which is
 * HDF5's hid_t since HDF5 1.10 (older hid_t convert to it), so this header
 * needs no <hdf5.h>, and libdart needs no HDF5: the function calls the
 * H5Pset_fapl_mpio of the parallel HDF5 that the program links.
 */
#ifndef DART__IO_H_
#define DART__IO_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Sets the HDF5 file access property list \c plist_id (a hid_t) to MPI-IO
 * on the communicator of team \c teamid (H5Pset_fapl_mpio with
 * MPI_INFO_NULL), so that the team's units open an HDF5 file together.
 * \return DART_ERR_INVAL for an unknown team; DART_ERR_OTHER where the
 * program has no parallel HDF5 (no H5Pset_fapl_mpio) or HDF5 fails.
 */
dart_ret_t dart__io__hdf5__prep_mpio(int64_t plist_id,
                                     dart_team_t teamid) DART_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* DART__IO_H_ */
