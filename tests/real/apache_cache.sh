#!/bin/sh
# Starts Debian's apache2 as a caching reverse proxy (mod_proxy_http in
# front of the origin at 127.0.0.1:ORIGIN_PORT, mod_cache with a disk
# store under DIR/cache) on 127.0.0.1:PORT, with its state under DIR
# (config, logs), in the foreground, one process with threads (mpm_event,
# -X). Only the configuration below applies (none of /etc/apache2).
# Responses without explicit freshness are stored too
# (CacheIgnoreNoLastMod: mod_cache's heuristic otherwise needs a
# Last-Modified, which the tester's origin does not send), for
# CacheDefaultExpire (1 hour). ProxyVia is Apache's default (Off: no Via)
# unless VIA is given (On: a Via in both directions).
# Usage: apache_cache.sh PORT ORIGIN_PORT DIR [VIA]
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
origin_port=$2
dir=$3
via=${4:-Off}
mods=/usr/lib/apache2/modules
mkdir -p "$dir/logs" "$dir/cache"
# Apache stores as User nobody: the job's directory (mode 0700) must let it
# through to the cache directory, which it must own.
chmod o+x "$dir"
chown nobody "$dir/cache"
cat > "$dir/httpd.conf" <<CONF
$(apache_prelude "$port" "$dir")
LoadModule cache_module $mods/mod_cache.so
LoadModule cache_disk_module $mods/mod_cache_disk.so
ProxyPass "/" "http://127.0.0.1:$origin_port/"
ProxyVia $via
CacheEnable disk "/"
CacheRoot "$dir/cache"
CacheIgnoreNoLastMod On
CacheHeader On
CONF
exec apache2 -X -f "$dir/httpd.conf"
