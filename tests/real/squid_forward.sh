#!/bin/sh
# Starts Debian's squid as a forward proxy that caches nothing on
# 127.0.0.1:PORT with its state under DIR (config, logs), in the
# foreground. Only the configuration below applies (none of
# /etc/squid/squid.conf: its Safe_ports rules would refuse the tester's
# origin port). Its Via names it "ds-squid". With READ_TIMEOUT (seconds),
# it gives up on an origin that sends nothing for that long (squid's
# read_timeout; its default is 15 minutes).
# Usage: squid_forward.sh PORT DIR [READ_TIMEOUT]
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
dir=$2
read_timeout=${3:+read_timeout $3 seconds}
mkdir -p "$dir/logs"
chown -R proxy:proxy "$dir/logs" 2>/dev/null || true
cat > "$dir/squid.conf" <<CONF
http_port 127.0.0.1:$port
cache deny all
${read_timeout:-}
$(squid_common "$dir")
CONF
exec squid -N -f "$dir/squid.conf"
