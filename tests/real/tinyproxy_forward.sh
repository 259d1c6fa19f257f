#!/bin/sh
# Starts Debian's tinyproxy as a forward proxy on 127.0.0.1:PORT with its
# state under DIR (config, log), in the foreground. It reaches any origin
# (the tester's is on 127.0.0.1) and sends Via as "1.1 ds-tinyproxy".
# Usage: tinyproxy_forward.sh PORT DIR
set -eu
port=$1
dir=$2
mkdir -p "$dir"
cat > "$dir/tinyproxy.conf" <<CONF
Port $port
Listen 127.0.0.1
Timeout 60
MaxClients 64
Allow 127.0.0.1
LogLevel Warning
LogFile "$dir/tinyproxy.log"
PidFile "$dir/tinyproxy.pid"
ViaProxyName "ds-tinyproxy"
User nobody
Group nogroup
CONF
exec tinyproxy -d -c "$dir/tinyproxy.conf"
