/* The configuration: one table of environment variables, read once. */
#ifndef DART__BASE__ENV_H_
#define DART__BASE__ENV_H_

#include <stddef.h>
#include <stdio.h>

#include "base/slots.h"

typedef enum {
  DART__TRANSPORT_MPI = 0,
  DART__TRANSPORT_UCX = 1
} dart__transport_t;

typedef enum { DART__COLL_AUTO = 0, DART__COLL_MPI = 1 } dart__coll_choice_t;

/* Room for a string of the configuration, terminating NUL included. */
#define DART__ENV_STRING_MAX 4096

typedef struct {
  int log_level;          /* DART_LOG_LEVEL */
  int units_per_node;     /* DART_UNITS_PER_NODE, 0 = physical nodes */
  int transport;          /* DART_TRANSPORT */
  int segid_reuse;        /* DART_SEGID_REUSE, dart__slots_reuse_t */
  size_t local_pool;      /* DART_LOCAL_POOL, bytes */
  int progress_thread;    /* DART_PROGRESS_THREAD */
  int progress_interval;  /* DART_PROGRESS_INTERVAL, microseconds */
  int shm;                /* DART_SHM */
  int coll;               /* DART_COLL, dart__coll_choice_t */
  int coll_check;         /* DART_COLL_CHECK */
  int cma;                /* DART_CMA */
  int ucx_alloc;          /* DART_UCX_ALLOC */
  int htm;                /* DART_HTM */
  int info;               /* DART_INFO */
  int gpu;                /* DART_GPU */
  int gpu_device;         /* DART_GPU_DEVICE, -1 = by node-local rank */
  int gpu_ucx;            /* DART_GPU_UCX, device memory through UCX */
  int gpu_emulate;        /* DART_GPU_EMULATE, devices emulated */
  char topology[DART__ENV_STRING_MAX]; /* DART_TOPOLOGY, empty = this machine */
  size_t plan_lend;       /* DART_PLAN_LEND, bytes */
  size_t am_queue;        /* DART_AM_QUEUE, bytes */
  int owner_atomics;      /* DART_OWNER_ATOMICS */
  int cpu_mhz;            /* DART_CPU_MHZ, the clock where none is known */
  int shmem_mbps;         /* DART_SHMEM_MBPS (or DASH_MAX_SHMEM_MBPS), the
                             bandwidth where none is known */
} dart__config_t;

extern dart__config_t dart__base__config;

/* Parses the environment into dart__base__config; logs and returns
 * nonzero for a value that cannot be parsed. */
int dart__base__env_parse(void);

/* Prints the table with the effective values. */
void dart__base__env_print(FILE *out);

#endif
