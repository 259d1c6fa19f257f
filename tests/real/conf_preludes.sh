# Sourced by the launch scripts in tests/real: the parts of the nginx,
# Apache and squid configurations they share. Each function prints its
# lines; the scripts paste them into the configuration they write.

# nginx: one foreground process as root, logs and temporary files under
# DIR; opens the http block (the caller closes it).
nginx_prelude() {
  cat <<CONF
daemon off;
master_process off;
user root;
worker_processes 1;
error_log $1/logs/error.log warn;
pid $1/nginx.pid;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path $1/tmp;
  proxy_temp_path $1/tmp;
  fastcgi_temp_path $1/tmp;
  uwsgi_temp_path $1/tmp;
  scgi_temp_path $1/tmp;
  keepalive_requests 100000;
CONF
}

# Apache (apache_prelude PORT DIR): listens on 127.0.0.1:PORT with its
# state under DIR, mpm_event, mod_proxy and mod_proxy_http, as nobody.
apache_prelude() {
  mods=/usr/lib/apache2/modules
  cat <<CONF
ServerRoot "$2"
ServerName 127.0.0.1
Listen 127.0.0.1:$1
PidFile "$2/logs/httpd.pid"
ErrorLog "$2/logs/error.log"
LogLevel warn
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule proxy_module $mods/mod_proxy.so
LoadModule proxy_http_module $mods/mod_proxy_http.so
User nobody
Group nogroup
CONF
}

# squid (squid_common DIR): only 127.0.0.1 may use it, its Via names it
# "ds-squid", its pid file and log under DIR/logs, no access log, and it
# stops at once.
squid_common() {
  cat <<CONF
acl local src 127.0.0.1/32
http_access allow local
http_access deny all
visible_hostname ds-squid
pid_filename $1/logs/squid.pid
cache_log $1/logs/cache.log
access_log none
coredump_dir $1/logs
shutdown_lifetime 0 seconds
CONF
}
