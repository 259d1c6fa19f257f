#!/bin/sh
# Starts Debian's apache2 (mod_proxy, mod_proxy_http) as a forward proxy on
# 127.0.0.1:PORT with its state under DIR (config, logs), in the
# foreground, one process with threads (mpm_event, -X). Only the
# configuration below applies (none of /etc/apache2). ProxyVia is Apache's
# default (Off: it adds no Via), as a user who enables the proxy gets it,
# unless VIA is given (On: Apache adds a Via in both directions).
# Usage: apache_forward.sh PORT DIR [VIA]
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
dir=$2
via=${3:-Off}
mods=/usr/lib/apache2/modules
mkdir -p "$dir/logs"
cat > "$dir/httpd.conf" <<CONF
$(apache_prelude "$port" "$dir")
LoadModule authz_host_module $mods/mod_authz_host.so
ProxyRequests On
ProxyVia $via
<Proxy "*">
  Require ip 127.0.0.1
</Proxy>
CONF
exec apache2 -X -f "$dir/httpd.conf"
