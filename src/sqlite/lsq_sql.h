/*
** lsq_sql.h: the SQL of the SQLite backend, one definition of each
** statement.  Private: included by the backend (src/sqlite/) and by the
** benchmark's floor (bench/lease_bench.c), which runs these very strings
** through raw SQLite to measure what the engine adds around them.
**
** Every write is one guarded UPDATE whose WHERE clause carries the whole
** check of the contract (owner, fence, done, until).
*/
#ifndef LSQ_SQL_H
#define LSQ_SQL_H

#include "lease_int.h"   /* the queue states, LEASE__Q_*_S */
#include "lease_statements.h"
#include "lsq_queue_sql.h"
#include "lsq_schedule_sql.h"

/* Contract step 1: the table, exactly as the seed declares it. */
#define LSQ_SQL_CREATE_JOBS                                               \
  "CREATE TABLE IF NOT EXISTS jobs(id TEXT PRIMARY KEY, owner TEXT, "    \
  "until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, "    \
  "result TEXT, done INTEGER NOT NULL DEFAULT 0)"

/*
** Why a job not done can never be handed out, as a code: 0 when it can.
** Another client may store what the engine cannot honour: an id that is
** not a non-empty text (no call can name it), a fence that is not a
** non-negative integer (fence + 1 would not be a new token), a fence at
** 2^63-1 (it cannot grow), an until that is not a number (text compares
** greater than every number, so it would never expire).  Such a job is
** "blocked": every guard requires this to be 0, so it is never claimed,
** renewed or completed, and never counted ready or held.  The codes are
** LEASE_BLOCKED_MAP's (lease_int.h), in its order.  LSQ_SQL_BLOCKED_OF(t)
** is the same of the jobs row a statement names t ("j."), LSQ_SQL_BLOCKED
** of the row of a statement's one table.
*/
#define LSQ_SQL_BLOCKED_OF(t)                                             \
  "(CASE WHEN typeof(" t "id) <> 'text' OR " t "id = '' THEN 1"          \
  " WHEN typeof(" t "fence) <> 'integer' OR " t "fence < 0 THEN 2"       \
  " WHEN " t "fence >= 9223372036854775807 THEN 3"                      \
  " WHEN typeof(" t "until) NOT IN ('integer', 'real') THEN 4 ELSE 0 END)"
#define LSQ_SQL_BLOCKED LSQ_SQL_BLOCKED_OF("")

/* The queue has not ended the job (lsq_queue_sql.h: discarded 2,
** cancelled 3): claim, renew, complete and fail require it. */
#define LSQ_SQL_NOT_ENDED                                                 \
  "NOT EXISTS (SELECT 1 FROM lease_queue AS q WHERE q.id = jobs.id"      \
  " AND q.state >= " LEASE__Q_DISCARDED_S ")"

/* Take the write lock before reading, so the check and the update see one
** state (contract step 4). */
#define LSQ_SQL_BEGIN "BEGIN IMMEDIATE"
#define LSQ_SQL_COMMIT "COMMIT"
#define LSQ_SQL_ROLLBACK "ROLLBACK"

/* Contract step 2; never OR REPLACE (it would reset a lease).  ?1 id,
** ?2 the fence the job starts at: the database's fence floor
** (LSQ_SQL_Q_FLOOR; NULL: 0), so that its first claim hands out a fence
** above every fence of a job pruned before, under this id or any other. */
#define LSQ_SQL_ENQUEUE "INSERT OR IGNORE INTO jobs(id, fence) VALUES (?1, coalesce(?2, 0))"

/* Contract step 4.  ?1 id, ?2 owner, ?3 now, ?4 now + ttl.  Held means
** until > now, so until <= now is free: the boundary now == until can be
** claimed again.  A blocked job is never claimed. */
#define LSQ_SQL_CLAIM                                                     \
  "UPDATE jobs SET owner = ?2, until = ?4, fence = fence + 1"            \
  " WHERE id = ?1 AND done = 0 AND until <= ?3"                          \
  " AND " LSQ_SQL_NOT_ENDED                                               \
  " AND " LSQ_SQL_BLOCKED " = 0"                                         \
  " RETURNING fence"

/* Contract step 5.  ?1 id, ?2 owner, ?3 fence, ?4 now, ?5 now + ttl.
** until > now: an expired lease is never revived. */
#define LSQ_SQL_RENEW                                                     \
  "UPDATE jobs SET until = ?5"                                           \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4" \
  " AND " LSQ_SQL_BLOCKED " = 0"                                         \
  " AND " LSQ_SQL_NOT_ENDED

/* Complete's guard on the jobs row, the contract's step 6 but for the
** queue's end state: ?1 id, ?2 owner, ?3 fence, ?4 now. */
#define LSQ_SQL_COMPLETE_GUARD                                            \
  "id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0 AND until > ?4"    \
  " AND " LSQ_SQL_BLOCKED " = 0"

/* Contract step 6.  ?1 id, ?2 owner, ?3 fence, ?4 now, ?5 result.  The
** engine writes the job's queue row just before, in the same transaction
** (LSQ_SQL_Q_COMPLETE). */
#define LSQ_SQL_COMPLETE                                                  \
  "UPDATE jobs SET result = ?5, done = 1"                                \
  " WHERE " LSQ_SQL_COMPLETE_GUARD                                        \
  " AND " LSQ_SQL_NOT_ENDED

/* Contract step 7.  ?1 id, ?2 owner, ?3 fence.  The fence is kept.  (A
** blocked job may be released: that writes a sound until.) */
#define LSQ_SQL_RELEASE                                                   \
  "UPDATE jobs SET owner = NULL, until = 0"                              \
  " WHERE id = ?1 AND owner = ?2 AND fence = ?3 AND done = 0"

/*
** Why a guarded write (claim, renew, complete, release) changed nothing:
** the negation of their WHERE clauses, one column per check.  ?1 id,
** ?2 owner, ?3 fence (a claim checks neither: it never reads columns 1
** and 2), ?4 now (NULL for release, which never reads columns 3 to 5).
** Columns: done, owner differs, fence differs, until <= now, blocked
** code, until > now, the queue's end state (2 discarded, 3 cancelled).
*/
#define LSQ_SQL_WHY                                                       \
  "SELECT done <> 0, owner IS NOT ?2, fence IS NOT ?3, until <= ?4, "    \
  LSQ_SQL_BLOCKED ", until > ?4,"                                        \
  " coalesce((SELECT state FROM lease_queue AS q WHERE q.id = jobs.id), " LEASE__Q_OPEN_S ")" \
  " FROM jobs WHERE id = ?1"

/* Counts by state: LSQ_SQL_Q_TALLY (lsq_queue_sql.h), by status too. */
#define LSQ_SQL_TALLY LSQ_SQL_Q_TALLY

/*
** The statements of a connection (cached: lsq_stmt), by name: the shared
** list's (lease_statements.h), whose SQL is LSQ_SQL_<name>, then this
** backend's own.  BEGIN, COMMIT and ROLLBACK: an operation here is several
** statements in one transaction (PostgreSQL's are one statement each);
** WHY: a refused guarded write asks why afterwards (PostgreSQL's guarded
** writes report their checks in the same statement).  The shared
** statements run by their text on each call (schedules, queue settings:
** lsq_schedule.c, lsq_queue.c) have a slot here that stays unprepared.
*/
#define LSQ_OWN_STATEMENTS(XX)           \
  XX(BEGIN)                              \
  XX(COMMIT)                             \
  XX(ROLLBACK)                           \
  XX(WHY)                                \
  XX(Q_FLOOR)                            \
  XX(Q_FLOOR_RAISE)                      \
  LSQ_QUEUE_OWN_STATEMENTS(XX)
#define LSQ_STATEMENT_MAP(XX) LEASE_STATEMENTS(XX) LSQ_OWN_STATEMENTS(XX)

#endif
