// OriginNames: the logical names of the tester's origin endpoints
// ("origin-K", what specs, traces and J-expressions say) and their wire
// authorities ("127.0.0.1:PORT", what the intermediary is told and sends).
// The HTTP codecs map between them at the wire: request targets and header
// values going out (ToWire), targets and header values coming in
// (FromWire), never bodies. So nothing the checker sees depends on the
// ports a run happened to get.
#ifndef DUALSWARM_WORKERS_ADAPTERS_ORIGIN_NAMES_H_
#define DUALSWARM_WORKERS_ADAPTERS_ORIGIN_NAMES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace dualswarm::workers {

// The logical name of origin endpoint K: "origin-K" (lang::OriginEndpointName,
// what the spec builtin `origins()` lists).
std::string OriginEndpointName(int k);

class OriginNames {
 public:
  OriginNames() = default;
  // Endpoint K is "origin-K" <-> "127.0.0.1:ports[K]".
  explicit OriginNames(const std::vector<int>& ports);

  bool empty() const { return names_.empty(); }
  // `s` with each logical name replaced by its authority, or each
  // authority by its name; a match must not be followed by a digit
  // ("origin-1" is not a prefix of "origin-12", nor port 808 of 8080).
  std::string ToWire(absl::string_view s) const;
  std::string FromWire(absl::string_view s) const;

 private:
  static std::string Replace(absl::string_view s, const std::vector<std::pair<std::string, std::string>>& from_to);
  std::vector<std::pair<std::string, std::string>> to_wire_;    // (name, authority)
  std::vector<std::pair<std::string, std::string>> from_wire_;  // (authority, name)
  std::vector<std::string> names_;
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_ORIGIN_NAMES_H_
