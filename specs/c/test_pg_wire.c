/*
** test_pg_wire.c: what the PostgreSQL backend does with messages a server
** sends outside any query, against a scripted server on a Unix socket (no
** PostgreSQL needed).  A backend that starts just as the server goes down
** sends "FATAL: terminating connection due to unexpected postmaster exit"
** right after ReadyForQuery; libpq hands such a message to the connection's
** notice processor, and libpq's default prints it on stderr.  The library
** must never write to its caller's stderr: opening through such a server
** fails with an error on the handle and leaves fd 2 untouched, whether the
** message comes right after the startup or after a statement's answer.
** And the backend's readers of binary result fields (lpg_int.h: r_i8,
** r_i4, r_f8) read 0, never outside libpq's memory, from a result of a
** shape the code did not expect (no such row, SQL NULL, another width).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lease.h"
#include "lpg_int.h"

/* The scripted server's directory (host=), made once per test. */
static char dir[256];

/* Write all of buf to fd. */
static int put_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Read exactly n bytes from fd into buf; -1 on end of input. */
static int get_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Send one backend message: type byte, big-endian length, body. */
static int send_msg(int fd, char type, const void *body, uint32_t n) {
  unsigned char head[5];
  uint32_t len = n + 4;
  head[0] = (unsigned char)type;
  head[1] = (unsigned char)(len >> 24);
  head[2] = (unsigned char)(len >> 16);
  head[3] = (unsigned char)(len >> 8);
  head[4] = (unsigned char)len;
  if (put_all(fd, head, 5) != 0) return -1;
  return n ? put_all(fd, body, n) : 0;
}

/* The FATAL a backend sends when its postmaster died. */
static int send_fatal(int fd) {
  static const char body[] = "SFATAL\0VFATAL\0C57P01\0"
                             "Mterminating connection due to unexpected postmaster exit\0";
  return send_msg(fd, 'E', body, sizeof body);   /* the final 0 ends the fields */
}

/*
** The scripted server: accept one connection, read the startup message,
** answer AuthenticationOk and ReadyForQuery, then answer `queries` simple
** queries with CommandComplete and ReadyForQuery, then send the FATAL and
** close.  Runs in a child process; exits 0 when the script ran.
*/
static void serve(int lfd, int queries) {
  unsigned char len4[4], auth_ok[4] = {0, 0, 0, 0};
  char buf[4096];
  int fd = accept(lfd, NULL, NULL);
  uint32_t len;
  if (fd < 0 || get_all(fd, len4, 4) != 0) _exit(2);
  len = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | (uint32_t)len4[2] << 8 | len4[3];
  if (len < 8 || len - 4 > sizeof buf || get_all(fd, buf, len - 4) != 0) _exit(3);
  if (send_msg(fd, 'R', auth_ok, 4) != 0 || send_msg(fd, 'Z', "I", 1) != 0) _exit(4);
  for (int q = 0; q < queries; q++) {
    char type;
    if (get_all(fd, &type, 1) != 0 || get_all(fd, len4, 4) != 0) _exit(5);
    len = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | (uint32_t)len4[2] << 8 | len4[3];
    if (len < 4 || len - 4 > sizeof buf || get_all(fd, buf, len - 4) != 0) _exit(6);
    if (type != 'Q') _exit(7);
    /* the answer and the FATAL in one write when this is the last query */
    if (send_msg(fd, 'C', "SET", 4) != 0 || send_msg(fd, 'Z', "I", 1) != 0) _exit(8);
  }
  if (send_fatal(fd) != 0) _exit(9);
  close(fd);
  _exit(0);
}

/*
** Open "host=<dir> ..." against the scripted server with `queries`
** answered before the FATAL; check that the open fails with an error on
** the handle and that nothing reached fd 2.
*/
static void open_through_fatal(int queries) {
  char sock[300], conninfo[400], errpath[300], seen[256];
  struct sockaddr_un addr;
  int lfd, saved, efd, status = -1;
  lease_db *db = NULL;
  pid_t pid;
  FILE *f;
  size_t got;
  snprintf(dir, sizeof dir, "%s/pgwire-%d-%d", getenv("LEASE_TEST_TMP") ? getenv("LEASE_TEST_TMP") : "/tmp",
           (int)getpid(), queries);
  mkdir(dir, 0700);
  snprintf(sock, sizeof sock, "%s/.s.PGSQL.5432", dir);
  unlink(sock);
  lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(lfd >= 0);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  assert_true(strlen(sock) < sizeof addr.sun_path);
  strcpy(addr.sun_path, sock);
  assert_int_equal(bind(lfd, (struct sockaddr *)&addr, sizeof addr), 0);
  assert_int_equal(listen(lfd, 1), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) serve(lfd, queries);
  close(lfd);

  /* fd 2 goes to a file for the length of the open */
  snprintf(errpath, sizeof errpath, "%s/stderr", dir);
  efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  assert_true(efd >= 0);
  fflush(stderr);
  saved = dup(2);
  dup2(efd, 2);
  close(efd);
  snprintf(conninfo, sizeof conninfo, "host=%s dbname=d user=u connect_timeout=10", dir);
  int rc = lease_open(conninfo, NULL, &db);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);

  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_not_equal(rc, LEASE_OK);
  assert_non_null(db);
  assert_non_null(strstr(lease_errmsg(db), "PostgreSQL"));
  lease_close(db);

  f = fopen(errpath, "rb");
  assert_non_null(f);
  got = fread(seen, 1, sizeof seen - 1, f);
  seen[got] = 0;
  fclose(f);
  if (got) print_error("written to stderr: %s\n", seen);
  assert_int_equal(got, 0);
  unlink(errpath);
  unlink(sock);
  rmdir(dir);
}

/* The FATAL right after the startup's ReadyForQuery. */
static void fatal_after_startup(void **state) {
  (void)state;
  open_through_fatal(0);
}

/* The FATAL right after the first statement's ReadyForQuery. */
static void fatal_after_statement(void **state) {
  (void)state;
  open_through_fatal(1);
}

/* A result made in memory: one row, an int8 column holding 7, an int4
** column holding 5, an int8 column that is NULL. */
static void fields_of_unexpected_shape(void **state) {
  PGresAttDesc cols[3];
  char i8[8], i4[4];
  PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
  int c;
  (void)state;
  assert_non_null(r);
  memset(cols, 0, sizeof cols);
  for (c = 0; c < 3; c++) {
    cols[c].name = (char *)(c == 0 ? "a" : c == 1 ? "b" : "c");
    cols[c].format = 1;
    cols[c].typid = c == 1 ? T_INT4 : T_INT8;
    cols[c].typlen = c == 1 ? 4 : 8;
    cols[c].atttypmod = -1;
  }
  assert_int_equal(PQsetResultAttrs(r, 3, cols), 1);
  put_be(i8, 7, 8);
  put_be(i4, 5, 4);
  assert_int_equal(PQsetvalue(r, 0, 0, i8, 8), 1);
  assert_int_equal(PQsetvalue(r, 0, 1, i4, 4), 1);
  assert_int_equal(PQsetvalue(r, 0, 2, NULL, -1), 1);
  assert_int_equal(r_i8(r, 0, 0), 7);
  assert_int_equal(r_i4(r, 0, 1), 5);
  assert_int_equal(r_i8(r, 0, 1), 0);   /* another width */
  assert_int_equal(r_i8(r, 0, 2), 0);   /* NULL */
  assert_int_equal(r_i8(r, 1, 0), 0);   /* no such row */
  assert_int_equal(r_i4(r, 0, 3), 0);   /* no such column */
  assert_true(r_f8(r, 3, 0) == 0.0);
  PQclear(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(fatal_after_startup),
    cmocka_unit_test(fatal_after_statement),
    cmocka_unit_test(fields_of_unexpected_shape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
