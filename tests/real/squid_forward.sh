#!/bin/sh
# Starts Debian's squid as a forward proxy that caches nothing on
# 127.0.0.1:PORT with its state under DIR (config, logs), in the
# foreground. Only the configuration below applies (none of
# /etc/squid/squid.conf: its Safe_ports rules would refuse the tester's
# origin port). Its Via names it "ds-squid".
# Usage: squid_forward.sh PORT DIR
set -eu
port=$1
dir=$2
mkdir -p "$dir/logs"
chown -R proxy:proxy "$dir/logs" 2>/dev/null || true
cat > "$dir/squid.conf" <<CONF
http_port 127.0.0.1:$port
acl local src 127.0.0.1/32
http_access allow local
http_access deny all
cache deny all
visible_hostname ds-squid
pid_filename $dir/logs/squid.pid
cache_log $dir/logs/cache.log
access_log none
coredump_dir $dir/logs
shutdown_lifetime 0 seconds
CONF
exec squid -N -f "$dir/squid.conf"
