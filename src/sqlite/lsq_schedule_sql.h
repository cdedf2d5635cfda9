/*
** lsq_schedule_sql.h: the SQL of schedules on SQLite (lsq_schedule.c).
** Private to the backend.  The table lease_schedules is made by the
** schema step SCHEDULES (lsq_schema_sql.h).
*/
#ifndef LSQ_SCHEDULE_SQL_H
#define LSQ_SCHEDULE_SQL_H

/* The columns a schedule is read with, in lease_schedule's order. */
#define LSQ_SQL_SCHEDULE_COLUMNS                                          \
  "name, every, cron, queue, payload, priority, max_attempts, created_at, next_at, last_at"

/* Create or replace.  ?1 name .. ?9 next_at; last_at starts NULL.  A
** schedule declared again as it is stored (the same every or cron and job
** options) keeps its created_at, next_at and last_at: a process that
** declares its schedules as it starts loses no tick. */
#define LSQ_SQL_SCHEDULE_SAME                                             \
  "lease_schedules.every IS excluded.every AND lease_schedules.cron IS excluded.cron" \
  " AND lease_schedules.queue IS excluded.queue AND lease_schedules.payload IS excluded.payload" \
  " AND lease_schedules.priority IS excluded.priority"                    \
  " AND lease_schedules.max_attempts IS excluded.max_attempts"
#define LSQ_SQL_SCHEDULE_KEPT(col)                                        \
  " " col " = CASE WHEN " LSQ_SQL_SCHEDULE_SAME " THEN lease_schedules." col \
  " ELSE excluded." col " END"
#define LSQ_SQL_SCHEDULE_PUT                                              \
  "INSERT INTO lease_schedules(name, every, cron, queue, payload, priority,"  \
  " max_attempts, created_at, next_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)" \
  " ON CONFLICT (name) DO UPDATE SET every = excluded.every, cron = excluded.cron," \
  " queue = excluded.queue, payload = excluded.payload, priority = excluded.priority," \
  " max_attempts = excluded.max_attempts,"                                \
  LSQ_SQL_SCHEDULE_KEPT("created_at") "," LSQ_SQL_SCHEDULE_KEPT("next_at") "," \
  " last_at = CASE WHEN " LSQ_SQL_SCHEDULE_SAME " THEN lease_schedules.last_at END"

#define LSQ_SQL_SCHEDULE_DELETE "DELETE FROM lease_schedules WHERE name = ?1"

/* A page in name order after ?1 ('' for the first), at most ?2. */
#define LSQ_SQL_SCHEDULE_LIST                                             \
  "SELECT " LSQ_SQL_SCHEDULE_COLUMNS " FROM lease_schedules"              \
  " WHERE name > ?1 ORDER BY name LIMIT ?2"

/* The schedules due at ?1, at most ?2, in next_at order.  Read outside
** the write transaction: most ticks find nothing due and take no lock. */
#define LSQ_SQL_SCHEDULE_DUE                                              \
  "SELECT " LSQ_SQL_SCHEDULE_COLUMNS " FROM lease_schedules"              \
  " WHERE next_at <= ?1 ORDER BY next_at, name LIMIT ?2"

/* Move one schedule past its tick, guarded: only when its next_at is
** still the value read (?4), so of two ticks that read the same row only
** one moves it and enqueues.  ?1 next_at, ?2 last_at (the tick), ?3 name. */
#define LSQ_SQL_SCHEDULE_MOVE                                             \
  "UPDATE lease_schedules SET next_at = ?1, last_at = ?2"                 \
  " WHERE name = ?3 AND next_at = ?4"

/* Whether schedule ?1 still has next_at ?2 (NULL: whether it is there):
** a row when it does. */
#define LSQ_SQL_SCHEDULE_AT                                               \
  "SELECT 1 FROM lease_schedules WHERE name = ?1 AND next_at = coalesce(?2, next_at)"

#endif
