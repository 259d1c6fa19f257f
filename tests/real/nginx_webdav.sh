#!/bin/sh
# Starts Debian's nginx as a WebDAV-writable server on 127.0.0.1:PORT with its
# state under DIR (config, document root, logs), in the foreground.
# Usage: nginx_webdav.sh PORT DIR
set -eu
port=$1
dir=$2
mkdir -p "$dir/root" "$dir/tmp" "$dir/logs"
cat > "$dir/nginx.conf" <<CONF
daemon off;
master_process off;
user root;
worker_processes 1;
error_log $dir/logs/error.log warn;
pid $dir/nginx.pid;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$port;
    root $dir/root;
    location / {
      dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw group:rw all:r;
    }
  }
}
CONF
exec nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/logs/error.log"
