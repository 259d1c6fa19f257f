// A launched SUT's readiness probe, as targets spell it: "tcp" (a TCP
// connect succeeds) or "http:/PATH" (GET PATH answers with a 2xx/3xx/4xx
// status). One parser for the coordinator, which refuses a bad probe when a
// target is created, and the worker's launcher, which runs it.
#ifndef DUALSWARM_UTIL_READY_PROBE_H_
#define DUALSWARM_UTIL_READY_PROBE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::util {

struct ReadyProbe {
  bool http = false;
  std::string path;  // http: starts with '/'
};

// INVALID_ARGUMENT unless `probe` is "tcp" (or empty) or "http:/PATH" with a
// PATH of printable ASCII without spaces (it goes on a request line as is),
// at most 1000 bytes.
inline absl::StatusOr<ReadyProbe> ParseReadyProbe(const std::string& probe) {
  ReadyProbe p;
  if (probe.empty() || probe == "tcp") return p;
  if (!absl::StartsWith(probe, "http:/"))
    return absl::InvalidArgumentError(
        absl::StrCat("bad readiness probe \"", probe, "\": want \"tcp\" or \"http:/PATH\""));
  p.http = true;
  p.path = probe.substr(5);
  if (p.path.size() > 1000) return absl::InvalidArgumentError("readiness probe path exceeds 1000 bytes");
  if (absl::StartsWith(p.path, "//"))
    return absl::InvalidArgumentError(
        absl::StrCat("bad readiness probe \"", probe, "\": want http:/PATH, a path on the SUT's own port, not a URL"));
  for (char c : p.path)
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f)
      return absl::InvalidArgumentError(
          absl::StrCat("bad readiness probe \"http:", absl::CHexEscape(p.path), "\": byte 0x",
                       absl::Hex(static_cast<unsigned char>(c)),
                       " (the path goes on the request line: printable ASCII without spaces; "
                       "percent-encode the rest)"));
  return p;
}

}  // namespace dualswarm::util

#endif  // DUALSWARM_UTIL_READY_PROBE_H_
