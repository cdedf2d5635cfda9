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

/* The keywords whose values are secrets: never shown in a message. */
static const char *const secret_keywords[] = {"password", "sslpassword", "passfile"};

/* 1 when k[0..n) is one of secret_keywords. */
static int is_secret_keyword(const char *k, size_t n) {
  size_t i;
  for (i = 0; i < sizeof secret_keywords / sizeof secret_keywords[0]; i++)
    if (strlen(secret_keywords[i]) == n && strncmp(k, secret_keywords[i], n) == 0) return 1;
  return 0;
}

/* See lease_int.h. */
void lease__secret_add(char *out, size_t cap, size_t *used, const char *s, size_t n) {
  if (n == 0 || *used + n + 2 > cap) return;
  memcpy(out + *used, s, n);
  out[*used + n] = '\0';
  *used += n + 1;
  out[*used] = '\0';
}

/* The URI form: the password of the user info (up to the first '@', and up
** to the last one before the path, as a stray '@' may be read either way)
** and the secret keywords of the query. */
static void uri_secrets(const char *p, char *out, size_t cap, size_t *used) {
  const char *end = p + strcspn(p, "/?"), *first = memchr(p, '@', (size_t)(end - p)), *last = NULL;
  const char *q, *colon;
  for (q = p; q < end; q++)
    if (*q == '@') last = q;
  if (first && (colon = memchr(p, ':', (size_t)(first - p))) != NULL)
    lease__secret_add(out, cap, used, colon + 1, (size_t)(first - colon - 1));
  if (last && last != first && (colon = memchr(p, ':', (size_t)(last - p))) != NULL)
    lease__secret_add(out, cap, used, colon + 1, (size_t)(last - colon - 1));
  if ((q = strchr(p, '?')) == NULL) return;
  for (q++; *q;) {
    size_t n = strcspn(q, "&"), k = strcspn(q, "=&");
    if (k < n && is_secret_keyword(q, k)) lease__secret_add(out, cap, used, q + k + 1, n - k - 1);
    q += n;
    if (*q == '&') q++;
  }
}

/* The keyword form: key = value pairs, a value plain or in single quotes
** (a backslash escapes the next character).  A word without '=' right after
** a secret is taken for the rest of a secret written with a space and no
** quotes: libpq refuses the string naming that word. */
static void keyword_secrets(const char *p, char *out, size_t cap, size_t *used) {
  int after_secret = 0;
  while (*p) {
    const char *k, *v;
    size_t kn;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    k = p;
    while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    kn = (size_t)(p - k);
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p != '=') {
      if (!after_secret) return;   /* not a keyword string past here: libpq refuses it */
      lease__secret_add(out, cap, used, k, kn);
      continue;
    }
    after_secret = is_secret_keyword(k, kn);
    p++;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (*p == '\'') {
      v = ++p;
      while (*p && *p != '\'') p += (*p == '\\' && p[1]) ? 2 : 1;
      if (is_secret_keyword(k, kn)) lease__secret_add(out, cap, used, v, (size_t)(p - v));
      if (*p) p++;
    } else {
      v = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
        p += (*p == '\\' && p[1]) ? 2 : 1;
      if (is_secret_keyword(k, kn)) lease__secret_add(out, cap, used, v, (size_t)(p - v));
    }
  }
}

/* See lease_int.h. */
void lease__pg_raw_secrets(const char *path, char *out, size_t cap, size_t *used) {
  if (strncmp(path, "postgresql://", 13) == 0) uri_secrets(path + 13, out, cap, used);
  else if (strncmp(path, "postgres://", 11) == 0) uri_secrets(path + 11, out, cap, used);
  else keyword_secrets(path, out, cap, used);
}
