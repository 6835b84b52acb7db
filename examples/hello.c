/*
 * hello: every unit writes its id into every unit's part of one global
 * array, then reads its own part back and says which path each write took
 * (self, shared memory to node peers, MPI to other nodes).
 *
 *   dartrun -n 4 --units-per-node 2 ./hello
 */
#define _POSIX_C_SOURCE 200809L
#include <dart/dart.h>
#include <dart/dart_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

#define LINE 256

int main(int argc, char **argv)
{
  TRY(dart_init(&argc, &argv));
  dart_global_unit_t me;
  size_t units;
  int nodes, my_node;
  TRY(dart_myid(&me));
  TRY(dart_size(&units));
  TRY(dart_node_info(&nodes, &my_node));

  /* one long per unit in every unit's part */
  dart_gptr_t array;
  TRY(dart_team_memalloc_aligned(DART_TEAM_ALL, units, DART_TYPE_LONG, &array));

  /* write my id into slot "me" of every unit's part */
  char line[LINE];
  int used = snprintf(line, LINE, "unit %d on node %d: wrote to", me.id,
                      my_node);
  for (size_t u = 0; u < units; u++) {
    dart_gptr_t target = array;
    target.unitid = (dart_unit_t)u;
    target.addr_or_offs.offset = (uint64_t)me.id * sizeof(long);
    dart_path_t path;
    TRY(dart_gptr_path(target, &path));
    long value = me.id;
    TRY(dart_put_blocking(target, &value, 1, DART_TYPE_LONG, DART_TYPE_LONG));
    used += snprintf(line + used, (size_t)(LINE - used), " %zu(%s)", u,
                     dart_path_name(path));
  }
  TRY(dart_barrier(DART_TEAM_ALL));

  /* my part now holds 0, 1, ..., units-1 */
  dart_gptr_t mine = array;
  mine.unitid = me.id;
  long *slots;
  TRY(dart_gptr_getaddr(mine, (void **)&slots));
  int correct = 1;
  for (size_t u = 0; u < units; u++) correct &= slots[u] == (long)u;
  snprintf(line + used, (size_t)(LINE - used), "; received from all: %s",
           correct ? "yes" : "NO");

  /* unit 0 prints every unit's line, in order */
  char *lines = me.id == 0 ? malloc(units * LINE) : NULL;
  TRY(dart_gather(line, lines, LINE, DART_TYPE_BYTE, DART_TEAM_UNIT_ID(0),
                  DART_TEAM_ALL));
  int all_correct;
  TRY(dart_allreduce(&correct, &all_correct, 1, DART_TYPE_INT, DART_OP_MIN,
                     DART_TEAM_ALL));
  if (me.id == 0) {
    printf("%zu units on %d node(s)\n", units, nodes);
    for (size_t u = 0; u < units; u++) printf("%s\n", lines + u * LINE);
    printf("%s\n", all_correct ? "all writes arrived" : "WRITES WERE LOST");
    free(lines);
  }
  TRY(dart_team_memfree(array));
  TRY(dart_exit());
  return all_correct ? 0 : 1;
}
