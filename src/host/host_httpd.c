/*
** host_httpd.c: lease.httpd, a small Lua binding of GNU libmicrohttpd for
** the host program's `lease web` (lua/lease/web.lua).  libmicrohttpd
** parses HTTP (request line, headers, chunked bodies, query arguments,
** cookies); this file only hands each finished request to a Lua function
** and its answer back.
**
** The daemon runs in libmicrohttpd's external-select mode: no thread of
** its own.  srv:run(seconds) waits on the daemon's sockets and serves what
** arrived, in the calling thread, one request at a time; the Lua handler
** runs there too, so the one Lua state is never entered from another
** thread.
**
**   local httpd = require("lease.httpd")          -- preloaded by the host
**   local srv = httpd.listen("127.0.0.1", 0, function(req)
**     return 200, "text/plain", "hello", { ["Cache-Control"] = "no-store" }
**   end)
**   print(srv:port()); while true do srv:run(1) end
*/
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "lease_lua_compat.h"
#include "host_httpd.h"

#define HD_SERVER "lease.httpd.server"
#define HD_MAX_BODY (64 * 1024)   /* bytes of a request body kept; more is 413 */
#define HD_MAX_CONNECTIONS 64     /* well under FD_SETSIZE */

/* A listening daemon: the userdata srv. */
typedef struct hd_server {
  struct MHD_Daemon *daemon;   /* NULL once closed */
  lua_State *L;                /* the state srv:run was called in, during the call */
  int handler;                 /* registry reference of the handler function */
} hd_server;

/* One request being received: its body so far. */
typedef struct hd_request {
  char *body;
  size_t len;
  int too_large;   /* the body went past HD_MAX_BODY: answered 413 */
} hd_request;

/* What hd_dispatch reads, under lua_pcall. */
typedef struct hd_call {
  hd_server *srv;
  struct MHD_Connection *conn;
  const char *method, *url;
  hd_request *req;
} hd_call;

/* MHD_KeyValueIteratorN: t[key] = value for the table on top of the stack
** (cls is the state), with their sizes, so a query argument holding a NUL
** (%00) keeps it and every byte after it; header names are lower-cased by
** the caller. */
static enum MHD_Result hd_set_pair(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size) {
  lua_State *L = (lua_State *)cls;
  (void)kind;
  if (key == NULL) return MHD_YES;
  lua_pushlstring(L, key, key_size);
  lua_pushlstring(L, value ? value : "", value ? value_size : 0);
  lua_rawset(L, -3);
  return MHD_YES;
}

/* Push a table of the connection's values of one kind; with lower, its
** keys lower-cased (HTTP header names are case-blind). */
static void hd_push_values(lua_State *L, struct MHD_Connection *conn, enum MHD_ValueKind kind,
                           int lower) {
  lua_newtable(L);
  MHD_get_connection_values_n(conn, kind, hd_set_pair, L);
  if (!lower) return;
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, -3) != 0) {
    size_t n, i;
    const char *k = lua_tolstring(L, -2, &n);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (i = 0; i < n; i++) luaL_addchar(&b, (k[i] >= 'A' && k[i] <= 'Z') ? (char)(k[i] + 32) : k[i]);
    luaL_pushresult(&b);
    lua_pushvalue(L, -2);
    lua_rawset(L, -5);
    lua_pop(L, 1);
  }
  lua_remove(L, -2);
}

/* Under lua_pcall: build the request table and call the handler with it.
** Leaves the handler's results, adjusted to 4. */
static int hd_dispatch(lua_State *L) {
  hd_call *c = (hd_call *)lua_touserdata(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, c->srv->handler);
  lua_createtable(L, 0, 6);
  lua_pushstring(L, c->method);
  lua_setfield(L, -2, "method");
  lua_pushstring(L, c->url);
  lua_setfield(L, -2, "path");
  hd_push_values(L, c->conn, MHD_GET_ARGUMENT_KIND, 0);
  lua_setfield(L, -2, "query");
  hd_push_values(L, c->conn, MHD_HEADER_KIND, 1);
  lua_setfield(L, -2, "headers");
  hd_push_values(L, c->conn, MHD_COOKIE_KIND, 0);
  lua_setfield(L, -2, "cookies");
  lua_pushlstring(L, c->req->body ? c->req->body : "", c->req->len);
  lua_setfield(L, -2, "body");
  lua_call(L, 1, 4);
  return 4;
}

/* Queue a response of status with body (copied) and content type. */
static enum MHD_Result hd_answer(struct MHD_Connection *conn, unsigned status, const char *ctype,
                                 const char *body, size_t len, lua_State *L, int headers) {
  enum MHD_Result r;
  struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
                                                                MHD_RESPMEM_MUST_COPY);
  if (resp == NULL) return MHD_NO;
  MHD_add_response_header(resp, "Content-Type", ctype);
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  if (L != NULL && lua_type(L, headers) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, headers) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING)
        MHD_add_response_header(resp, lua_tostring(L, -2), lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  r = MHD_queue_response(conn, status, resp);
  MHD_destroy_response(resp);
  return r;
}

/* Call the Lua handler for a finished request and queue its answer; a
** handler that raises is a 500 whose message goes to stderr. */
static enum MHD_Result hd_respond(hd_call *c) {
  lua_State *L = c->srv->L;
  int base = lua_gettop(L);
  enum MHD_Result r;
  lua_pushcfunction(L, hd_dispatch);
  lua_pushlightuserdata(L, c);
  if (lua_pcall(L, 1, 4, 0) != LUA_OK) {
    fprintf(stderr, "lease web: %s %s: %s\n", c->method, c->url,
            lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(error object is not a string)");
    fflush(stderr);
    lua_settop(L, base);
    return hd_answer(c->conn, 500, "text/plain; charset=utf-8", "internal error\n", 15, NULL, 0);
  }
  {
    int status = lua_type(L, base + 1) == LUA_TNUMBER ? (int)lua_tointeger(L, base + 1) : 500;
    const char *ctype = lua_type(L, base + 2) == LUA_TSTRING ? lua_tostring(L, base + 2) : "text/plain";
    size_t len = 0;
    const char *body = lua_type(L, base + 3) == LUA_TSTRING ? lua_tolstring(L, base + 3, &len) : "";
    if (status < 100 || status > 599) status = 500;
    r = hd_answer(c->conn, (unsigned)status, ctype, body, len, L, base + 4);
  }
  lua_settop(L, base);
  return r;
}

/* MHD_AccessHandlerCallback: gather the body, then answer through Lua. */
static enum MHD_Result hd_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls) {
  hd_call c;
  hd_request *req = (hd_request *)*con_cls;
  (void)version;
  if (req == NULL) {   /* the headers are in: start the request */
    req = (hd_request *)calloc(1, sizeof *req);
    if (req == NULL) return MHD_NO;
    *con_cls = req;
    return MHD_YES;
  }
  if (*upload_size != 0) {   /* a piece of the body */
    if (!req->too_large && req->len + *upload_size <= HD_MAX_BODY) {
      char *grown = (char *)realloc(req->body, req->len + *upload_size);
      if (grown == NULL) return MHD_NO;
      memcpy(grown + req->len, upload, *upload_size);
      req->body = grown;
      req->len += *upload_size;
    } else {
      req->too_large = 1;
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (req->too_large)
    return hd_answer(conn, 413, "text/plain; charset=utf-8", "request body too large\n", 23, NULL, 0);
  c.srv = (hd_server *)cls;
  c.conn = conn;
  c.method = method;
  c.url = url;
  c.req = req;
  return hd_respond(&c);
}

/* MHD_RequestCompletedCallback: free the request's body. */
static void hd_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  hd_request *req = (hd_request *)*con_cls;
  (void)cls; (void)conn; (void)toe;
  if (req == NULL) return;
  free(req->body);
  free(req);
  *con_cls = NULL;
}

/* The address to listen on: an IPv4 or IPv6 literal and a port.  Returns
** its length, or 0 when addr is neither. */
static socklen_t hd_address(const char *addr, int port, struct sockaddr_storage *ss) {
  struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
  memset(ss, 0, sizeof *ss);
  if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons((uint16_t)port);
    return sizeof *in4;
  }
  if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)port);
    return sizeof *in6;
  }
  return 0;
}

/*
** httpd.listen(addr, port, handler) -> srv: listen on addr (an IPv4 or
** IPv6 literal, string) and port (integer 0..65535; 0: one the system
** picks, srv:port() tells it).  handler(req) is called for each request
** with req = {method=, path=, query={name=value}, headers={lowercase
** name=value}, cookies={name=value}, body=string} and returns status
** (integer), content type (string), body (string) and optionally a table
** of extra response headers.
** Raises a bad-argument error for a bad addr or port, or the system's
** message when the address cannot be bound (in use, not this host's).
*/
static int hd_listen(lua_State *L) {
  const char *addr = luaL_checkstring(L, 1);
  lua_Integer port = luaL_checkinteger(L, 2);
  struct sockaddr_storage ss;
  hd_server *srv;
  socklen_t len;
  luaL_argcheck(L, port >= 0 && port <= 65535, 2, "port must be 0 to 65535");
  luaL_checktype(L, 3, LUA_TFUNCTION);
  len = hd_address(addr, (int)port, &ss);
  luaL_argcheck(L, len != 0, 1, "not an IPv4 or IPv6 address");
  srv = (hd_server *)lua_newuserdatauv(L, sizeof *srv, 0);
  srv->daemon = NULL;
  srv->L = NULL;
  lua_pushvalue(L, 3);
  srv->handler = luaL_ref(L, LUA_REGISTRYINDEX);
  luaL_setmetatable(L, HD_SERVER);
  errno = 0;
  srv->daemon = MHD_start_daemon(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : MHD_NO_FLAG,
                                 (uint16_t)port, NULL, NULL, hd_access, srv,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                                 MHD_OPTION_NOTIFY_COMPLETED, hd_completed, NULL,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)HD_MAX_CONNECTIONS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                 MHD_OPTION_END);
  if (srv->daemon == NULL)
    return luaL_error(L, "cannot listen on %s port %d: %s", addr, (int)port,
                      errno ? strerror(errno) : "libmicrohttpd refused");
  return 1;
}

/* The server argument, open. */
static hd_server *hd_check(lua_State *L) {
  hd_server *srv = (hd_server *)luaL_checkudata(L, 1, HD_SERVER);
  luaL_argcheck(L, srv->daemon != NULL, 1, "server is closed");
  return srv;
}

/* srv:port() -> integer: the port listened on. */
static int hd_port(lua_State *L) {
  hd_server *srv = hd_check(L);
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
  lua_pushinteger(L, info ? (lua_Integer)info->port : 0);
  return 1;
}

/*
** srv:run(seconds) -> true: wait up to seconds (a number >= 0) for
** requests, serve those that arrived (calling the handler in this
** thread), and return; also returns early when a signal interrupts the
** wait.  Raises the system's message when waiting fails otherwise.
*/
static int hd_run(lua_State *L) {
  hd_server *srv = hd_check(L);
  double s = luaL_checknumber(L, 2);
  fd_set rs, ws, es;
  MHD_socket max = 0;
  MHD_UNSIGNED_LONG_LONG ms;
  struct timeval tv;
  luaL_argcheck(L, s >= 0, 2, "seconds must be >= 0");
  if (s > 86400) s = 86400;
  FD_ZERO(&rs); FD_ZERO(&ws); FD_ZERO(&es);
  if (MHD_get_fdset(srv->daemon, &rs, &ws, &es, &max) != MHD_YES)
    return luaL_error(L, "libmicrohttpd gave no sockets to wait on");
  if (MHD_get_timeout(srv->daemon, &ms) == MHD_YES && (double)ms / 1000.0 < s) s = (double)ms / 1000.0;
  tv.tv_sec = (time_t)s;
  tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
  if (select((int)max + 1, &rs, &ws, &es, &tv) < 0) {
    if (errno != EINTR) return luaL_error(L, "select: %s", strerror(errno));
    FD_ZERO(&rs); FD_ZERO(&ws); FD_ZERO(&es);
  }
  srv->L = L;
  MHD_run_from_select(srv->daemon, &rs, &ws, &es);
  srv->L = NULL;
  lua_pushboolean(L, 1);
  return 1;
}

/* srv:close(): stop listening (closes every connection); again: nothing.
** Also the __gc and __close. */
static int hd_close(lua_State *L) {
  hd_server *srv = (hd_server *)luaL_checkudata(L, 1, HD_SERVER);
  if (srv->daemon != NULL) {
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, srv->handler);
  }
  return 0;
}

static const luaL_Reg hd_methods[] = {
  {"port", hd_port},
  {"run", hd_run},
  {"close", hd_close},
  {NULL, NULL},
};

/* See host_httpd.h. */
int luaopen_lease_httpd(lua_State *L) {
  if (luaL_newmetatable(L, HD_SERVER)) {
    luaL_newlib(L, hd_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, hd_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, hd_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, hd_listen);
  lua_setfield(L, -2, "listen");
  lua_pushstring(L, MHD_get_version());
  lua_setfield(L, -2, "version");
  return 1;
}
