/*
** host_httpd.h: lease.httpd, the host program's binding of libmicrohttpd
** (host_httpd.c), built when CMake finds libmicrohttpd (LEASE_HAVE_MHD).
*/
#ifndef HOST_HTTPD_H
#define HOST_HTTPD_H

#include "lease_lua_compat.h"

/*
** luaopen_lease_httpd(L): push the module table {listen=, version=}
** (version: libmicrohttpd's, a string).  The host puts it in
** package.preload as "lease.httpd".
*/
int luaopen_lease_httpd(lua_State *L);

#endif
