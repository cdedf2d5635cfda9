/*
** lease_statements.h: the statements both backends run, each named once.
**
** LEASE_STATEMENTS(XX) calls XX(NAME) for each statement the two backends
** have in common: the contract's operations, the queue's and the
** schedules'.  Each backend builds its table of statements from this list
** by pasting its own prefix onto NAME (SQLite: LSQ_SQL_NAME, in
** src/sqlite/lsq_*_sql.h; PostgreSQL: LPG_STMT_NAME, its SQL and parameter
** types, in src/pg/lpg_*_sql.h), so a statement named here that one
** backend lacks fails to build.  A statement only one backend needs stays
** in that backend's own list (LSQ_OWN_STATEMENTS, LPG_OWN_STATEMENTS), after
** these.  The enum lease__stmt numbers the list; each backend's enum
** starts with the same names in the same order (both check it), and its
** member `statement` (lease_int.h: lease__backend) gives the SQL of each.
**
** The parameters below are by meaning, not by position: each backend's
** SQL says which placeholder holds which.  A backend may do more in one statement than
** the other (PostgreSQL locks the job's row and reports the checks of a
** guarded write in the same statement; SQLite asks with LSQ_SQL_WHY).
**
** Adding a statement: one line here, and its SQL in each backend's header
** under the pasted name.
*/
#ifndef LEASE_STATEMENTS_H
#define LEASE_STATEMENTS_H

#define LEASE_STATEMENTS(XX)                                                          \
  /* Contract step 2: add a job by id, nothing when it exists (PostgreSQL  */         \
  /* writes its queue data too: payload, queue, priority, run_at, max_attempts, */    \
  /* timeout, key, and reads the key's holder, inserting nothing when there is */     \
  /* one). */                                                                         \
  XX(ENQUEUE)                                                                         \
  /* Contract step 4, guarded: id, owner, now, now + ttl; the new fence. */           \
  XX(CLAIM)                                                                           \
  /* Contract step 5, guarded: id, owner, fence, now, now + ttl. */                   \
  XX(RENEW)                                                                           \
  /* Contract step 6, guarded: id, owner, fence, now, result. */                      \
  XX(COMPLETE)                                                                        \
  /* Contract step 7, guarded (the fence kept): id, owner, fence. */                  \
  XX(RELEASE)                                                                         \
  /* Counts by state and by status: now, queue (NULL: all). */                        \
  XX(TALLY)                                                                           \
  /* One job with its queue data (lease_row's columns): id, now. */                   \
  XX(Q_STATE)                                                                         \
  /* A job's timeout (NULL: none), on step TIMEOUT's layout or newer: id. */          \
  XX(Q_TIMEOUT)                                                                       \
  /* A page of jobs: after (seq), now, limit, status, queue, results, which. */       \
  XX(Q_LIST)                                                                          \
  /* A job's recorded errors, oldest first: id, limit. */                             \
  XX(Q_ERRORS)                                                                        \
  /* fail's guarded write, the lease ended: id, owner, fence, now (PostgreSQL */      \
  /* records the message too). */                                                     \
  XX(Q_FAIL)                                                                          \
  /* After a failure: id, the attempts made, state, run_at, finished_at. */           \
  XX(Q_AFTER_FAIL)                                                                    \
  /* The jobs ended before a time: before, queue (NULL: all), state; PostgreSQL */    \
  /* deletes them, SQLite lists them with their rowids for a delete of each. */      \
  XX(Q_PRUNE)                                                                         \
  /* A queue's settings (paused, concurrency, rate, per): queue. */                   \
  XX(Q_SETTINGS)                                                                      \
  /* The live leases of a queue: queue, now. */                                       \
  XX(Q_LIVE)                                                                          \
  /* A claim's time for a rate and the claims around it: queue, now, per. */          \
  XX(Q_RECENT)                                                                        \
  /* Record claims of a queue: queue, at, how many. */                                \
  XX(Q_RECORD_CLAIMS)                                                                 \
  /* Pause or resume a queue: queue, paused. */                                       \
  XX(Q_SET_PAUSED)                                                                    \
  /* A queue's limits: queue, concurrency, rate, per (NULL: none). */                 \
  XX(Q_SET_LIMITS)                                                                    \
  /* Drop a queue's row left with no setting: queue. */                               \
  XX(Q_TIDY)                                                                          \
  /* Every queue with jobs or settings, with its settings. */                         \
  XX(Q_QUEUES)                                                                        \
  /* A job's queue state when another is enqueued after it: id (no row: */           \
  /* missing; PostgreSQL locks its jobs row FOR SHARE). */                            \
  XX(Q_DEP_STATE)                                                                     \
  /* Store a dependency: the child's id, the parent's id, and the queue */           \
  /* and key of the batch entry of that id (NULL: none), whose key's */              \
  /* holder the child waits for when the entry was skipped as a duplicate. */       \
  XX(Q_DEP_ADD)                                                                       \
  /* An open job waits while one of its parents is not completed: id */               \
  /* (PostgreSQL: then whether it stored, and whether the job needed it). */          \
  XX(Q_DEP_WAIT)                                                                      \
  /* After a Q_DEP_ADD that changed no row: whether the edge is there (no */          \
  /* row: another client's trigger skipped it), Q_DEP_ADD's arguments */              \
  /* (PostgreSQL: the child's id, the parent's id). */                                \
  XX(Q_DEP_THERE)                                                                     \
  /* The jobs a job runs after, by id, with their status: id, now, limit. */          \
  XX(Q_DEPS)                                                                          \
  /* lease_wait's look, when a job of a queue becomes claimable (NULL: */             \
  /* none): queue, now (SQLite: seconds from now; PostgreSQL: the time, */            \
  /* then the server's clock). */                                                     \
  XX(Q_DUE)                                                                           \
  /* lease_wait's look at a queue's limits, seconds until each may leave */          \
  /* room (NULL: room now): queue, now, concurrency, rate, per (0: none). */         \
  XX(Q_LIMIT_DUE)                                                                     \
  /* The database's clock mark (lease__clock). */                                     \
  XX(CLOCK_READ)                                                                      \
  /* Move the clock mark: the new mark. */                                            \
  XX(CLOCK_MOVE)                                                                      \
  /* Create or replace a schedule: name, every, cron, queue, payload, */              \
  /* priority, max_attempts, created_at, next_at. */                                  \
  XX(SCHEDULE_PUT)                                                                    \
  /* Delete a schedule: name. */                                                      \
  XX(SCHEDULE_DELETE)                                                                 \
  /* A page of schedules in name order: after, limit. */                              \
  XX(SCHEDULE_LIST)                                                                   \
  /* The schedules due: now, limit. */                                                \
  XX(SCHEDULE_DUE)                                                                    \
  /* Move a schedule past its tick, guarded by the next_at read: next_at, */          \
  /* last_at, name, the next_at read. */                                              \
  XX(SCHEDULE_MOVE)                                                                   \
  /* Whether a schedule still has the next_at read (a move that changed no */        \
  /* row: another tick moved it, or a trigger skipped the move): name, next_at. */   \
  XX(SCHEDULE_AT)                                                                     \
  /* The events ledger, add an event: at (NULL: the backend's clock), op, */          \
  /* id, queue, owner, fence, reason (0: ok). */                                      \
  XX(EVENT_ADD)                                                                       \
  /* Prune the ledger: the events up to a seq, and those before a time. */            \
  XX(EVENT_PRUNE)                                                                     \
  /* A page of events in seq order: after (seq), id (NULL: all), limit. */            \
  XX(EVENT_READ)

/* The shared statements, numbered in the list's order. */
typedef enum lease__stmt {
#define LEASE__STMT_ENUM_(name) LEASE__ST_##name,
  LEASE_STATEMENTS(LEASE__STMT_ENUM_)
#undef LEASE__STMT_ENUM_
  LEASE__ST_COUNT
} lease__stmt;

#endif
