/*
** lpg_schema.c: the schema version of a PostgreSQL database
** (src/core/lease_schema.h): reading it, classifying a database without a
** version row, and the steps that bring it to LEASE_SCHEMA_VERSION (their
** SQL: lpg_schema_sql.h).
*/
#include "lpg_int.h"
#include "lpg_schema_sql.h"

#include <stdlib.h>

/* The steps in order: steps[k - 1] takes a database from version k - 1 to
** k.  A step LEASE_SCHEMA_STEPS names without its LPG_STEP_<NAME> fails to
** build here. */
#define LPG_STEP_ENTRY_(name) LPG_STEP_##name,
static const char *const steps[] = {LEASE_SCHEMA_STEPS(LPG_STEP_ENTRY_)};
#undef LPG_STEP_ENTRY_

/* Run sql, which returns one row, into *res (the caller clears it).
** LEASE_OK or the failure (no row is one, as the statement's). */
static int one_row(lease_db *db, const char *sql, PGresult **res) {
  int rc;
  *res = PQexec(LPG(db)->pg, sql);
  if (PQresultStatus(*res) == PGRES_TUPLES_OK && PQntuples(*res) <= 1) return LEASE_OK;
  rc = lpg_fail(db, *res);
  PQclear(*res);
  *res = NULL;
  return rc;
}

/* The version row's value into *version (-1: no row).  LEASE_SCHEMA when
** it is not a version number. */
static int version_row(lease_db *db, long *version) {
  PGresult *res;
  int rc = one_row(db, LPG_SQL_META_FOUND, &res), found;
  *version = -1;
  if (rc != LEASE_OK) return rc;
  found = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
  PQclear(res);
  if (!found || (rc = one_row(db, LPG_SQL_VERSION_GET, &res)) != LEASE_OK) return rc;
  if (PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] != 't')
    rc = lease__fail(db, LEASE_SCHEMA, "the database's schema version (" LEASE_SCHEMA_META
                     ", key " LEASE_SCHEMA_KEY ") is not a version number");
  else if (PQntuples(res) == 1)
    *version = strtol(PQgetvalue(res, 0, 1), NULL, 10);
  PQclear(res);
  return rc;
}

/* See lpg_int.h. */
int lpg_schema_read(lease_db *db) {
  lpg_conn *c = LPG(db);
  PGresult *res;
  long version;
  int rc = version_row(db, &version);
  if (rc != LEASE_OK) return rc;
  c->versioned = version >= 0;
  if (!c->versioned) {
    if ((rc = one_row(db, LPG_SQL_CLASSIFY, &res)) != LEASE_OK) return rc;
    version = PQntuples(res) == 1 ? strtol(PQgetvalue(res, 0, 0), NULL, 10) : 0;
    PQclear(res);
  }
  if (version > LEASE_SCHEMA_VERSION)
    return lease__fail(db, LEASE_SCHEMA, "the database's schema is version %ld, newer than "
                       "this build of lease knows (%d): upgrade lease", version,
                       LEASE_SCHEMA_VERSION);
  c->version = (int)version;
  return LEASE_OK;
}

/* The body of lpg_schema_upgrade, in its open transaction. */
static int upgrade_body(lease_db *db) {
  lpg_conn *c = LPG(db);
  int k, rc = lpg_exec(db, LPG_SQL_CREATE_JOBS);
  if (rc == LEASE_OK) rc = lpg_schema_read(db);
  if (rc != LEASE_OK || (c->versioned && c->version == LEASE_SCHEMA_VERSION)) return rc;
  for (k = c->version; k < LEASE_SCHEMA_VERSION && rc == LEASE_OK; k++)
    if (steps[k][0]) rc = lpg_exec(db, steps[k]);
  if (rc == LEASE_OK) rc = lpg_exec(db, LPG_SQL_META_CREATE);
  if (rc == LEASE_OK) rc = lpg_exec(db, LPG_SQL_VERSION_SET);
  if (rc == LEASE_OK) rc = lpg_exec(db, LPG_TX_SQL_CREATE);
  return rc;
}

/* See lpg_int.h. */
int lpg_schema_upgrade(lease_db *db) {
  int rc = lpg_exec(db, "BEGIN ISOLATION LEVEL READ COMMITTED; " LPG_SQL_LOCK);
  if (rc == LEASE_OK) rc = upgrade_body(db);
  if (rc == LEASE_OK) rc = lpg_exec(db, "COMMIT");
  if (rc != LEASE_OK) {
    lpg_rollback(db);
    return rc;
  }
  LPG(db)->version = LEASE_SCHEMA_VERSION;
  LPG(db)->versioned = 1;
  return LEASE_OK;
}
