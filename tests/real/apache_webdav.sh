#!/bin/sh
# Starts Debian's apache2 as a WebDAV-writable server (mod_dav, mod_dav_fs)
# on 127.0.0.1:PORT with its state under DIR (config, document root, lock
# database, logs), in the foreground, one process with threads (mpm_event,
# -X), so requests on different connections run concurrently. Only the
# configuration below applies (none of /etc/apache2).
# Usage: apache_webdav.sh PORT DIR
set -eu
. "$(dirname "$0")/conf_preludes.sh"
port=$1
dir=$2
mods=/usr/lib/apache2/modules
mkdir -p "$dir/logs" "$dir/root" "$dir/lock"
# Apache serves and writes as User nobody: the job's directory (mode 0700)
# must let it through to the document root and lock database it owns.
chmod o+x "$dir"
chown nobody "$dir/root" "$dir/lock"
cat > "$dir/httpd.conf" <<CONF
$(apache_prelude "$port" "$dir")
LoadModule dav_module $mods/mod_dav.so
LoadModule dav_fs_module $mods/mod_dav_fs.so
DavLockDB "$dir/lock/DavLock"
DocumentRoot "$dir/root"
<Directory "$dir/root">
  Dav On
  Require all granted
</Directory>
CONF
exec apache2 -X -f "$dir/httpd.conf"
