#!/bin/sh
# Starts Debian's nginx as a WebDAV-writable server on 127.0.0.1:PORT with its
# state under DIR (config, document root, logs), in the foreground.
# Usage: nginx_webdav.sh PORT DIR
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
dir=$2
mkdir -p "$dir/root" "$dir/tmp" "$dir/logs"
cat > "$dir/nginx.conf" <<CONF
$(nginx_prelude "$dir")
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
