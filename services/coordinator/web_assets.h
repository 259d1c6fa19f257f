// The web UI's static files (web/), compiled into the coordinator so one
// binary serves them. The table is generated at build time by
// services/embed_files.cmake from every file under web/.
#ifndef DUALSWARM_SERVICES_COORDINATOR_WEB_ASSETS_H_
#define DUALSWARM_SERVICES_COORDINATOR_WEB_ASSETS_H_

#include <cstddef>

namespace dualswarm::coord {

struct WebAsset {
  const char* path;           // relative to web/, e.g. "index.html", "js/app.js"
  const unsigned char* data;  // the file's bytes
  size_t size;
};

extern const WebAsset kWebAssets[];
extern const size_t kWebAssetCount;

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_WEB_ASSETS_H_
