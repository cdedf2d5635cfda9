/*
** lease_schema.h: the schema version of a database, and the numbered
** steps that take a database from one version to the next.
**
** A database carries its version in the engine's table lease_meta, row
** key 'schema_version' (an integer).  Step k takes a database of version
** k-1 to version k; version 0 is the contract's bare jobs table.  A
** writable open runs every step past the database's version, in order,
** in one write transaction, then writes the version row.  Each backend
** defines, for each step NAME, its SQL as a macro of its own
** (LSQ_STEP_NAME in src/sqlite/lsq_schema_sql.h, LPG_STEP_NAME in
** src/pg/lpg_schema_sql.h): a step missing from one backend fails to build.
** A step's SQL never changes once released: a change is a new step.  A
** step shares macros with the engine's statements, so specs/c/test_steps.c
** (ctest c_steps) holds a hash of every step's SQL on each backend and
** fails when one differs.
**
** Adding a step: one line at the end of LEASE_SCHEMA_STEPS, one macro per
** backend, LEASE_SCHEMA_VERSION one higher, and the step's line in
** specs/c/test_steps.c (the test prints it).
*/
#ifndef LEASE_SCHEMA_H
#define LEASE_SCHEMA_H

/* The version this build makes and knows: the number of steps. */
#define LEASE_SCHEMA_VERSION 24

/*
** The steps, in order: the k-th entry takes version k-1 to k.
**   QUEUE    1: the job queue's tables lease_queue (an attempt column a
**              trigger counts up at each claim) and lease_errors, and the
**              triggers on jobs that keep them.
**   REFENCE  2: lease_queue WITHOUT ROWID, its attempts counted as the
**              fence's growth since base_fence (no trigger at a claim); on
**              SQLite no index lease_jobs_pending on jobs.
**   RENAMED  3: a job whose id another client changes keeps its queue row
**              and errors (SQLite's trigger lease_jobs_renamed).
**   SCHEDULES 4: the schedules' table lease_schedules (lease.h,
**              "Schedules"); nothing else.
**   CONTROL   5: queue control's tables lease_queues (a queue's paused flag
**              and limits) and lease_queue_claims (the claims in a rate
**              limit's window).
**   CLOCK     6: lease_queue's column due_at, the claim order (priority,
**              due_at, seq) in the index lease_queue_due in place of
**              lease_queue_ready, and the triggers on jobs giving a job
**              without run_at the clock mark (lease_meta, key clock_mark)
**              as its due_at when they make or reopen its queue row.
**   ATTEMPTS  7: PostgreSQL counts a job's attempts as SQLite does, the
**              fence's growth since lease_queue.base_fence (each job's
**              count kept), no longer in a column a trigger counts up at
**              each claim; nothing on SQLite.
**   EVENTS    8: the events ledger's table lease_events (lease.h, "The
**              events ledger"): seq, at, op, id, queue, owner, fence,
**              outcome, reason; op and reason as the numbers of lease.h's
**              lists, outcome 0 (ok) or 1 (refused); nothing else.
**   TIMEOUT   9: lease_queue's column timeout (seconds a handler may run
**              on the job; NULL: none), which enqueue stores and
**              claim_next hands out.
**   DEPS     10: dependencies: the table lease_deps(child, parent) and its
**              index by parent (lease.h: lease_new_job's after); a job
**              waiting for them is queue state 4 (lease_int.h).
**   UNIQUE   11: lease_queue's column key (NULL: none; existing rows get
**              none) and the unique index lease_queue_key on (queue, key)
**              over the rows with a key that the queue has not ended (state
**              not completed, discarded or cancelled).
**   DEPS_FOLLOW 12: PostgreSQL's trigger lease_deps_follow locks the jobs
**              rows of a parent's children before it reads their other
**              parents and writes their states, as every write of a queue
**              state does, and records the ledger's events of the jobs a
**              cascade cancels; nothing on SQLite, whose writers take turns.
**   COMPLETE_ONCE 13: PostgreSQL's trigger lease_jobs_changed leaves
**              alone a completed job's queue row that the statement
**              storing done = 1 has already made completed (the engine's
**              complete and complete_many do), so a completion writes that
**              row once; another client's done = 1 is turned into the
**              state as before; nothing on SQLite.
**   DEPS_CHILDLESS 14: PostgreSQL's trigger lease_deps_follow returns at
**              once when no job runs after the one that ended, before it
**              locks or writes anything; nothing on SQLite.
**   QUEUE_NOW_PLPGSQL 15: PostgreSQL's lease_queue_now, the read of a
**              job's queue row after its jobs row is locked, in PL/pgSQL,
**              whose query is planned once per connection, not at each
**              call; nothing on SQLite.
**   SQLITE_COMPLETE_ONCE 16: SQLite's trigger lease_jobs_done leaves
**              alone a completed job's queue row that is already
**              completed (the engine's complete writes that row first, in
**              the same transaction), so a completion writes that row
**              once; another client's done = 1 is turned into the state as
**              before; nothing on PostgreSQL, whose step 13 did the same.
**   DEPS_KEYED 17: PostgreSQL's trigger lease_deps_follow finds the rows
**              it reads and writes by their ids, so that its kept plans
**              read those rows alone at any table size; nothing on SQLite.
**   ADDED_FLOOR 18: PostgreSQL's trigger lease_jobs_added reads the fence
**              floor again after the insert and raises a job inserted
**              below it (an enqueue that waited for another transaction's
**              insert of the same id, which a prune then deleted); nothing
**              on SQLite.
**   DEPS_ANY_CLIENT 19: the jobs waiting for a job follow its end whoever
**              writes it: on SQLite a done = 1 another client stores opens
**              them (lease_jobs_done), as PostgreSQL's triggers have since
**              step 10; on both, a job deleted that was not completed
**              (another client's DELETE, prune of a cancelled job whose
**              child was retried) opens them as a completion does
**              (lease_deps_parent_gone): a listed job no longer there
**              counts as done.
**   HELD_SLOTS 20: a concurrency limit counts every job of its queue held
**              with a live lease, whatever its queue state (one cancelled
**              while a worker holds it keeps its slot until that lease
**              ends); PostgreSQL's index lease_queue_aside on
**              lease_queue(queue) over the rows neither open nor completed
**              serves the count made without lease_jobs_live; nothing on
**              SQLite.
**   QUIET_COMPLETE 21: PostgreSQL's engine completions call no trigger:
**              jobs.lease_completions, counted up by the engine's
**              complete and complete_many, keeps lease_jobs_changed from
**              firing for them, and lease_queue.waited_on, set on a job
**              another is enqueued after, keeps lease_deps_follow to the
**              ends of such jobs; nothing on SQLite.
**   WAITED_ON_ANY_CLIENT 22: PostgreSQL's waited_on set by triggers,
**              whoever writes the rows it follows (an earlier build's
**              handle, another client): lease_deps_added flags the parent
**              of each edge inserted or moved to it, lease_jobs_added a
**              job inserted under an id lease_deps names as a parent,
**              lease_queue_renamed a job renamed to such an id, and the
**              step every job so named; nothing on SQLite.
**   WAKE_ANY_CLIENT 23: PostgreSQL's writes that make a job claimable
**              wake its waiters whoever stores them: lease_jobs_added
**              (jobs another program inserted into jobs alone),
**              lease_queue_reopened (a queue row open again) and
**              lease_jobs_sooner (a lease end moved earlier) send NOTIFY
**              lease_wake, delivered at the commit; nothing on SQLite,
**              whose waiters see every commit in the files.
**   SQLITE_QUIET_COMPLETE 24: SQLite's trigger lease_jobs_done runs its
**              body only for a change it writes (done becoming 0, or
**              non-zero on a queue row not completed), so the engine's
**              completions, which make the row completed first, skip it;
**              nothing on PostgreSQL (step 21 did the same there).
*/
#define LEASE_SCHEMA_STEPS(XX) \
  XX(QUEUE)                    \
  XX(REFENCE)                  \
  XX(RENAMED)                  \
  XX(SCHEDULES)                \
  XX(CONTROL)                  \
  XX(CLOCK)                    \
  XX(ATTEMPTS)                 \
  XX(EVENTS)                   \
  XX(TIMEOUT)                  \
  XX(DEPS)                     \
  XX(UNIQUE)                   \
  XX(DEPS_FOLLOW)              \
  XX(COMPLETE_ONCE)            \
  XX(DEPS_CHILDLESS)            \
  XX(QUEUE_NOW_PLPGSQL)        \
  XX(SQLITE_COMPLETE_ONCE)     \
  XX(DEPS_KEYED)               \
  XX(ADDED_FLOOR)              \
  XX(DEPS_ANY_CLIENT)          \
  XX(HELD_SLOTS)               \
  XX(QUIET_COMPLETE)           \
  XX(WAITED_ON_ANY_CLIENT)     \
  XX(WAKE_ANY_CLIENT)          \
  XX(SQLITE_QUIET_COMPLETE)

/* How many steps LEASE_SCHEMA_STEPS lists: must be LEASE_SCHEMA_VERSION. */
enum {
#define LEASE_SCHEMA_COUNT_(name) LEASE__STEP_##name,
  LEASE_SCHEMA_STEPS(LEASE_SCHEMA_COUNT_)
#undef LEASE_SCHEMA_COUNT_
  LEASE__STEP_COUNT
};
_Static_assert(LEASE__STEP_COUNT == LEASE_SCHEMA_VERSION,
               "LEASE_SCHEMA_VERSION must be the number of LEASE_SCHEMA_STEPS");

/* Whether a database of schema version v has what step NAME made (its
** version is past the step's index). */
#define LEASE_SCHEMA_HAS(v, name) ((v) > LEASE__STEP_##name)

/* The engine's table of its own facts about the database, and the key of
** the schema version there. */
#define LEASE_SCHEMA_META "lease_meta"
#define LEASE_SCHEMA_KEY "schema_version"

#endif
