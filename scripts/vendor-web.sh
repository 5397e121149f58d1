#!/bin/sh
# Reproduce the dashboard's vendored web files (src/vcflow/dashboard/static/vendor/)
# from the npm registry at pinned versions: the page loads nothing from a CDN.
#   dagre.min.js         @dagrejs/dagre dist/dagre.min.js (classic script, sets window.dagre;
#                        it bundles @dagrejs/graphlib, so graphlib's licence is copied too)
# Usage: scripts/vendor-web.sh   (needs node + npm; writes the files and prints their sha256)
set -eu
DAGRE_VERSION=3.1.3
GRAPHLIB_VERSION=4.0.6   # the version dagre $DAGRE_VERSION depends on and bundles

here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/src/vcflow/dashboard/static/vendor"
tmp=$(mktemp -d /tmp/vcflow-vendor.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

cd "$tmp"
npm pack --silent "@dagrejs/dagre@$DAGRE_VERSION" "@dagrejs/graphlib@$GRAPHLIB_VERSION" >/dev/null
mkdir dagre graphlib
tar -xzf "dagrejs-dagre-$DAGRE_VERSION.tgz" -C dagre
tar -xzf "dagrejs-graphlib-$GRAPHLIB_VERSION.tgz" -C graphlib
# the bundled graphlib must be the one pinned here
grep -q "\"@dagrejs/graphlib\": \"$GRAPHLIB_VERSION\"" dagre/package/package.json

mkdir -p "$out"
cp dagre/package/dist/dagre.min.js "$out/dagre.min.js"
cp dagre/package/LICENSE "$out/LICENSE.dagre.txt"
cp graphlib/package/LICENSE "$out/LICENSE.graphlib.txt"
cd "$out" && sha256sum dagre.min.js LICENSE.dagre.txt LICENSE.graphlib.txt
