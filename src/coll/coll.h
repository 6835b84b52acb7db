/*
 * Collectives: what the team module calls. A team's collective state
 * (node-shared cells, the node leaders' communicator, the queue of
 * operations in flight) lives here; doc/design.md, "Collectives", has the
 * algorithms.
 */
#ifndef DART__COLL__COLL_H_
#define DART__COLL__COLL_H_

#include <dart/dart_types.h>

struct dart__team;

/* Adds the collectives' state to every team (dart__team__add_part), at
 * dart_init before DART_TEAM_ALL: the node peers' shared cells and the
 * leaders' communicator; teams made after dart_init also meet through the
 * remote transport's barrier at once. And the progress source that
 * advances handle collectives in every wait. */
dart_ret_t dart__coll__init(void);
/* At dart_exit, after the teams have gone. */
void dart__coll__fini(void);

/* DART_TEAM_ALL's leaders meet through the remote transport's barrier,
 * once that is up (dart_init), and stop before it goes. */
dart_ret_t dart__coll__remote_start(const char *func, struct dart__team *team);
void dart__coll__remote_stop(struct dart__team *team);

#endif
