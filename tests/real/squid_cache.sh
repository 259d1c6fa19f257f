#!/bin/sh
# Starts Debian's squid as a caching reverse proxy (an accelerator, memory
# cache only) on 127.0.0.1:PORT in front of the origin at
# 127.0.0.1:ORIGIN_PORT, with its state under DIR (config, logs), in the
# foreground. Only the configuration below applies (none of
# /etc/squid/squid.conf). Its Via names it "ds-squid".
# Usage: squid_cache.sh PORT ORIGIN_PORT DIR
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
origin_port=$2
dir=$3
mkdir -p "$dir/logs"
chown -R proxy:proxy "$dir/logs" 2>/dev/null || true
cat > "$dir/squid.conf" <<CONF
http_port 127.0.0.1:$port accel defaultsite=origin-0 no-vhost
cache_peer 127.0.0.1 parent $origin_port 0 no-query no-digest originserver name=origin
cache_peer_access origin allow all
never_direct allow all
cache_mem 16 MB
$(squid_common "$dir")
CONF
exec squid -N -f "$dir/squid.conf"
