#!/bin/sh
# Starts Debian's varnishd as a caching reverse proxy on 127.0.0.1:PORT in
# front of the origin at 127.0.0.1:ORIGIN_PORT, with its state under DIR
# (working directory, VCL), in the foreground, with Varnish's built-in VCL
# as shipped (what it caches and for how long is Varnish's default policy:
# default_ttl 120 s for responses without explicit freshness) and a memory
# store. No jail: the tests run as root in a throwaway directory. With
# VIA "on" it sends a Via field on the requests it forwards (Varnish sends
# one only on its responses; a line of VCL adds it).
# Usage: varnish_cache.sh PORT ORIGIN_PORT DIR [VIA]
set -eu
port=$1
origin_port=$2
dir=$3
mkdir -p "$dir/varnish"
via=""
if [ "${4:-off}" = on ]; then
  via='sub vcl_backend_fetch { set bereq.http.Via = "1.1 ds-varnish"; }'
fi
cat > "$dir/default.vcl" <<VCL
vcl 4.1;
backend origin {
  .host = "127.0.0.1";
  .port = "$origin_port";
}
$via
VCL
exec varnishd -F -j none -n "$dir/varnish" -a "127.0.0.1:$port" -f "$dir/default.vcl" -s malloc,16m \
  -T none -p thread_pools=1 -p thread_pool_min=5
