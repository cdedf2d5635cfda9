/*
** lsq_schema.c: the schema version of a database file in the SQLite
** backend (src/core/lease_schema.h): reading it, classifying a file
** without a version row, and the steps that bring a file to
** LEASE_SCHEMA_VERSION (their SQL: lsq_schema_sql.h).
*/
#include "lsq.h"

#include <stdint.h>

/* Each step's statements, then the steps in order: steps[k - 1] takes a
** file from version k - 1 to k.  A step LEASE_SCHEMA_STEPS names without
** its LSQ_STEP_<NAME> fails to build here. */
#define LSQ_STEP_TEXT_(sql) sql,
#define LSQ_STEP_ARRAY_(name) \
  static const char *const step_##name[] = {LSQ_STEP_##name(LSQ_STEP_TEXT_) NULL};
LEASE_SCHEMA_STEPS(LSQ_STEP_ARRAY_)
#define LSQ_STEP_ENTRY_(name) step_##name,
static const char *const *const steps[] = {LEASE_SCHEMA_STEPS(LSQ_STEP_ENTRY_)};
#undef LSQ_STEP_TEXT_
#undef LSQ_STEP_ARRAY_
#undef LSQ_STEP_ENTRY_

/* Row of LSQ_SQL_VERSION_GET or LSQ_SQL_CLASSIFY: *(int64_t *)ctx = the
** version; a value that is not a whole number of zero or more is refused. */
static int on_version(lease_db *db, sqlite3_stmt *st, void *ctx) {
  if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_int64(st, 0) < 0)
    return lease__fail(db, LEASE_SCHEMA, "the database's schema version (" LEASE_SCHEMA_META
                       ", key " LEASE_SCHEMA_KEY ") is not a version number");
  *(int64_t *)ctx = sqlite3_column_int64(st, 0);
  return LSQ_STOP;
}

/* See lsq.h. */
int lsq_schema_read(lease_db *db, sqlite3 *sql) {
  lsq_conn *c = LSQ(db);
  int64_t version = -1;
  int meta = 0, rc;
  c->versioned = 0;
  rc = lsq_query(db, sql, LSQ_SQL_META_FOUND, lsq_found, &meta);
  if (rc == LEASE_OK && meta) rc = lsq_query(db, sql, LSQ_SQL_VERSION_GET, on_version, &version);
  if (rc != LEASE_OK) return rc;
  c->versioned = version >= 0;
  if (!c->versioned && (rc = lsq_query(db, sql, LSQ_SQL_CLASSIFY, on_version, &version)) != LEASE_OK)
    return rc;
  if (version > LEASE_SCHEMA_VERSION)
    return lease__fail(db, LEASE_SCHEMA, "the database's schema is version %lld, newer than "
                       "this build of lease knows (%d): upgrade lease", (long long)version,
                       LEASE_SCHEMA_VERSION);
  c->version = (int)version;
  return LEASE_OK;
}

/* See lsq.h. */
int lsq_schema_upgrade(lease_db *db) {
  lsq_conn *c = LSQ(db);
  int k, rc = LEASE_OK;
  const char *const *s;
  for (k = c->version; k < LEASE_SCHEMA_VERSION && rc == LEASE_OK; k++)
    for (s = steps[k]; *s && rc == LEASE_OK; s++) rc = lsq_exec(db, *s);
  if (rc == LEASE_OK) rc = lsq_exec(db, LSQ_SQL_META_CREATE);
  if (rc == LEASE_OK) rc = lsq_exec(db, LSQ_SQL_VERSION_SET);
  if (rc != LEASE_OK) return rc;
  c->version = LEASE_SCHEMA_VERSION;
  c->versioned = 1;
  return LEASE_OK;
}
