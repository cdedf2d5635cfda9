/*
** lpg_schedule_sql.h: the SQL of schedules on PostgreSQL (lpg_schedule.c).
** Private to src/pg/.  Names, cron expressions, queues and payloads are
** bytea, as the jobs' ids are.  The table lease_schedules is made by the
** schema step SCHEDULES (lpg_schema_sql.h).
*/
#ifndef LPG_SCHEDULE_SQL_H
#define LPG_SCHEDULE_SQL_H

/* A read-only handle's empty copy of the schedules' table, on a database
** older than LPG_SCHEDULES_READABLE (its layout: LPG_STEP_SCHEDULES). */
#define LPG_S_SQL_TEMP                                                                 \
  "CREATE TEMP TABLE IF NOT EXISTS lease_schedules(name bytea PRIMARY KEY,"           \
  " every float8, cron bytea, queue bytea NOT NULL DEFAULT 'default', payload bytea,"  \
  " priority int8 NOT NULL DEFAULT 0, max_attempts int8 NOT NULL DEFAULT 25,"          \
  " created_at float8 NOT NULL, next_at float8 NOT NULL, last_at float8)"

#define LPG_S_SQL_COLUMNS                                                              \
  "name, every, cron, queue, payload, priority, max_attempts, created_at, next_at, last_at"

/* Create or replace.  $1 name .. $9 next_at; last_at starts NULL.  A
** schedule declared again as it is stored (the same every or cron and job
** options) keeps its created_at, next_at and last_at: a process that
** declares its schedules as it starts loses no tick. */
#define LPG_S_SQL_SAME                                                                  \
  "(lease_schedules.every, lease_schedules.cron, lease_schedules.queue,"              \
  " lease_schedules.payload, lease_schedules.priority, lease_schedules.max_attempts)"  \
  " IS NOT DISTINCT FROM (EXCLUDED.every, EXCLUDED.cron, EXCLUDED.queue,"              \
  " EXCLUDED.payload, EXCLUDED.priority, EXCLUDED.max_attempts)"
#define LPG_S_SQL_KEPT(col)                                                             \
  " " col " = CASE WHEN " LPG_S_SQL_SAME " THEN lease_schedules." col " ELSE EXCLUDED." col " END"
#define LPG_SQL_SCHEDULE_PUT                                                            \
  "INSERT INTO lease_schedules(name, every, cron, queue, payload, priority,"           \
  " max_attempts, created_at, next_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"    \
  " ON CONFLICT (name) DO UPDATE SET every = EXCLUDED.every, cron = EXCLUDED.cron,"    \
  " queue = EXCLUDED.queue, payload = EXCLUDED.payload,"                               \
  " priority = EXCLUDED.priority, max_attempts = EXCLUDED.max_attempts,"               \
  LPG_S_SQL_KEPT("created_at") "," LPG_S_SQL_KEPT("next_at") ","                       \
  " last_at = CASE WHEN " LPG_S_SQL_SAME " THEN lease_schedules.last_at END"

/* Delete schedule $1, its row locked first (a delete another transaction
** committed meanwhile leaves nothing to lock): how many rows were locked,
** how many deleted.  One locked and none deleted: another client's
** trigger skipped the delete. */
#define LPG_SQL_SCHEDULE_DELETE                                                         \
  "WITH s AS (SELECT name FROM lease_schedules WHERE name = $1 FOR UPDATE),"           \
  " d AS (DELETE FROM lease_schedules WHERE name = $1 AND name IN (SELECT name FROM s)" \
  " RETURNING 1) SELECT (SELECT count(*) FROM s), (SELECT count(*) FROM d)"

/* A page in name order after $1, at most $2. */
#define LPG_SQL_SCHEDULE_LIST                                                           \
  "SELECT " LPG_S_SQL_COLUMNS " FROM lease_schedules WHERE name > $1"                  \
  " ORDER BY name LIMIT $2"

/* The schedules due at $1, at most $2: read outside the write transaction,
** most ticks find nothing due. */
#define LPG_SQL_SCHEDULE_DUE                                                            \
  "SELECT " LPG_S_SQL_COLUMNS " FROM lease_schedules WHERE next_at <= $1"              \
  " ORDER BY next_at, name LIMIT $2"

/* Guarded: only while next_at is still the value read ($4); under READ
** COMMITTED an UPDATE that waited for another's re-checks the new row.
** $1 next_at, $2 last_at, $3 name. */
#define LPG_SQL_SCHEDULE_MOVE                                                           \
  "UPDATE lease_schedules SET next_at = $1, last_at = $2"                              \
  " WHERE name = $3 AND next_at = $4"

/* Whether schedule $1 still has next_at $2: a row when it does.  Run after
** a move that changed no row, as a statement of its own: under READ
** COMMITTED it sees what the tick that moved the row committed. */
#define LPG_SQL_SCHEDULE_AT "SELECT 1 FROM lease_schedules WHERE name = $1 AND next_at = $2"

/* The statements by their names in the shared list (lease_statements.h):
** SQL, parameter count, parameter types in $n order (lpg.c's table). */
#define LPG_STMT_SCHEDULE_PUT                                                           \
  LPG_SQL_SCHEDULE_PUT, 9,                                                              \
  {T_BYTEA, T_FLOAT8, T_BYTEA, T_BYTEA, T_BYTEA, T_INT8, T_INT8, T_FLOAT8, T_FLOAT8}
#define LPG_STMT_SCHEDULE_DELETE LPG_SQL_SCHEDULE_DELETE, 1, {T_BYTEA}
#define LPG_STMT_SCHEDULE_LIST LPG_SQL_SCHEDULE_LIST, 2, {T_BYTEA, T_INT4}
#define LPG_STMT_SCHEDULE_DUE LPG_SQL_SCHEDULE_DUE, 2, {T_FLOAT8, T_INT4}
#define LPG_STMT_SCHEDULE_MOVE LPG_SQL_SCHEDULE_MOVE, 4, {T_FLOAT8, T_FLOAT8, T_BYTEA, T_FLOAT8}
#define LPG_STMT_SCHEDULE_AT LPG_SQL_SCHEDULE_AT, 2, {T_BYTEA, T_FLOAT8}

#endif
