// The grpc adapter: unary calls to any gRPC service a protobuf descriptor
// set describes (grpc_catalog.h), through gRPC's generic stub — no code
// generated per service. Each of the tester's connections is its own
// channel (its own HTTP/2 connection) and carries one call at a time, so a
// connection's responses come in the order of its requests, as the
// checker's network model expects; requests sent while a call is in flight
// wait in the adapter. The IR (docs/adapters.md, "grpc"):
//   request  {"method": "package.Service/Method", "request": {...}}
//   reply    {"reply": {...}}                      the response message
//            {"status": {"code": "NOT_FOUND", "message": "..."}}
// A call that ends UNAVAILABLE closes its connection instead: requests
// queued behind it are dropped, like bytes unsent on a TCP connection that
// broke; when no connection could be made at all, Poll returns Unavailable
// (the SUT is gone), as the TCP adapters do for a failed connect.
#ifndef DUALSWARM_WORKERS_ADAPTERS_GRPC_ADAPTER_H_
#define DUALSWARM_WORKERS_ADAPTERS_GRPC_ADAPTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {

// `descriptor_set`: the bytes of a FileDescriptorSet (grpc_catalog.h).
// Connection c calls host:ports[c].
absl::StatusOr<std::unique_ptr<Adapter>> MakeGrpcAdapter(const std::string& host, const std::vector<int>& ports,
                                                         absl::string_view descriptor_set);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_GRPC_ADAPTER_H_
