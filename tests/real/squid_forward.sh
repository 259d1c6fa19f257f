#!/bin/sh
# Starts Debian's squid as a forward proxy that caches nothing on
# 127.0.0.1:PORT with its state under DIR (config, logs), in the
# foreground. Only the configuration below applies (none of
# /etc/squid/squid.conf: its Safe_ports rules would refuse the tester's
# origin port). Its Via names it "ds-squid".
# Usage: squid_forward.sh PORT DIR
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
dir=$2
mkdir -p "$dir/logs"
chown -R proxy:proxy "$dir/logs" 2>/dev/null || true
cat > "$dir/squid.conf" <<CONF
http_port 127.0.0.1:$port
cache deny all
$(squid_common "$dir")
CONF
exec squid -N -f "$dir/squid.conf"
