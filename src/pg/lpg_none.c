/*
** lpg_none.c: the PostgreSQL backend of a build without libpq.  Opening a
** PostgreSQL connection string fails with LEASE_CANTOPEN naming the build
** option, instead of the string being taken for an SQLite file name.
*/
#include "lease_int.h"

#include <stdlib.h>
#include <string.h>

/* See lease_int.h: the refusal. */
static int none_open(lease_db *db) {
  return lease__fail(db, LEASE_CANTOPEN,
                     "PostgreSQL support is not built in: configure with -DLEASE_POSTGRESQL=ON "
                     "and libpq installed (Debian: libpq-dev)");
}

/* See lease_int.h: without libpq's parser the name says only which kind of
** server; the secrets are those lease__pg_raw_secrets finds. */
int lease__pg_redact(lease_db *db) {
  size_t cap = 2 * strlen(db->path) + 2, used = 0;
  const char *name = "PostgreSQL (not built)";
  db->secrets = malloc(cap);
  db->name = malloc(strlen(name) + 1);
  if (!db->secrets || !db->name) return lease__fail(db, LEASE_NOMEM, "out of memory");
  db->secrets[0] = '\0';
  lease__pg_raw_secrets(db->path, db->secrets, cap, &used);
  strcpy(db->name, name);
  return LEASE_OK;
}

static void none_close(lease_db *db) { db->conn = NULL; }

static int none_is_private(const lease_db *db) {
  (void)db;
  return 0;
}

static size_t none_max_length(const lease_db *db) {
  (void)db;
  return LEASE_MAX_LENGTH;
}

/* See lease_int.h.  Only open, close and the two queries on a handle are
** ever called: open always fails. */
const lease__backend lease__pg = {
  .name = "PostgreSQL (not built)",
  .open = none_open,
  .close = none_close,
  .is_private = none_is_private,
  .max_length = none_max_length,
};
