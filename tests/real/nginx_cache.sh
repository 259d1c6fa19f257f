#!/bin/sh
# Starts Debian's nginx as a caching reverse proxy (proxy_cache) on
# 127.0.0.1:PORT in front of the origin at 127.0.0.1:ORIGIN_PORT, with its
# state under DIR (config, cache, logs), in the foreground. It revalidates
# stale responses with conditional requests (proxy_cache_revalidate) and
# keeps responses without explicit freshness for 10 s (proxy_cache_valid,
# a heuristic in RFC 9111 §4.2.2 terms). With VIA "on" it sends a Via
# field on the requests it forwards (nginx has no such setting: a
# proxy_set_header does it).
# Usage: nginx_cache.sh PORT ORIGIN_PORT DIR [VIA]
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
origin_port=$2
dir=$3
mkdir -p "$dir/cache" "$dir/tmp" "$dir/logs"
via=""
if [ "${4:-off}" = on ]; then via="proxy_set_header Via \"1.1 ds-nginx\";"; fi
cat > "$dir/nginx.conf" <<CONF
$(nginx_prelude "$dir")
  proxy_cache_path $dir/cache keys_zone=ds:1m;
  upstream origin {
    server 127.0.0.1:$origin_port;
    keepalive 4;
  }
  server {
    listen 127.0.0.1:$port;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache ds;
      proxy_cache_revalidate on;
      proxy_cache_valid 200 404 10s;
      $via
    }
  }
}
CONF
exec nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/logs/error.log"
