/*
** lpg_path.c: which backend a path names.  Compiled whether or not the
** PostgreSQL backend is built, so a PostgreSQL connection string is never
** taken for an SQLite file name.
*/
#include "lease_int.h"

#include <string.h>

/* libpq's connection keywords (libpq's "Parameter Key Words"); a path in
** the keyword form starts with one of them followed by '='. */
static const char *const keywords[] = {
  "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
  "options", "application_name", "connect_timeout", "sslmode", "target_session_attrs",
  "client_encoding", "channel_binding", "gssencmode", "sslrootcert",
};

/* See lease_int.h. */
int lease__pg_path(const char *path) {
  size_t n, i;
  if (!path) return 0;
  if (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0) return 1;
  while (*path == ' ' || *path == '\t') path++;
  n = strspn(path, "abcdefghijklmnopqrstuvwxyz_");
  if (n == 0) return 0;
  for (i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
    if (strlen(keywords[i]) == n && strncmp(path, keywords[i], n) == 0) {
      path += n;
      while (*path == ' ' || *path == '\t') path++;
      return *path == '=';
    }
  }
  return 0;
}
