// The wire protocols an adapter speaks, named in one place: the CLI's flags
// and --help, the worker's --adapters, the coordinator's target check and
// MakeAdapter all read this list, so adding a protocol is one edit here (and
// its codec). Header-only: services/ and cli/ include it without linking the
// adapters.
#ifndef DUALSWARM_WORKERS_ADAPTERS_ADAPTER_KINDS_H_
#define DUALSWARM_WORKERS_ADAPTERS_ADAPTER_KINDS_H_

#include <array>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace dualswarm::workers {

// http: HTTP/1.1; jsonl: one JSON value per line; resp: the Redis protocol
// (RESP2); memcached: memcached's text protocol; grpc: unary gRPC calls
// described by a protobuf descriptor set; fs: operations on directory trees
// and runs of a command-line program (docs/adapters.md).
inline constexpr std::array<absl::string_view, 6> kAdapterKinds = {"http", "jsonl", "resp", "memcached", "grpc", "fs"};

inline bool IsAdapterKind(absl::string_view kind) {
  for (absl::string_view k : kAdapterKinds)
    if (k == kind) return true;
  return false;
}

// "http|jsonl|resp|memcached|grpc", for usage lines.
inline std::string AdapterKindsBar() { return absl::StrJoin(kAdapterKinds, "|"); }

// `text` with every "{ADAPTERS}" replaced by AdapterKindsBar(): help texts
// name the list without restating it.
inline std::string WithAdapterKinds(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"{ADAPTERS}", AdapterKindsBar()}});
}

// InvalidArgument `unknown adapter "x" (known: http, jsonl, resp, memcached, grpc, fs)` unless
// `kind` is one of kAdapterKinds.
inline absl::Status CheckAdapterKind(absl::string_view kind) {
  if (IsAdapterKind(kind)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown adapter \"", kind, "\" (known: ", absl::StrJoin(kAdapterKinds, ", "), ")"));
}

// The adapter a spec's `use` schema implies when none is named: json ->
// jsonl, resp -> resp, memcached -> memcached, grpc -> grpc, fs -> fs, anything else (http,
// none) -> http.
inline std::string DefaultAdapterForSchema(absl::string_view schema) {
  if (schema == "json") return "jsonl";
  if (schema == "resp") return "resp";
  if (schema == "memcached") return "memcached";
  if (schema == "grpc") return "grpc";
  if (schema == "fs") return "fs";
  return "http";
}

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_ADAPTER_KINDS_H_
