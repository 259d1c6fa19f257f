#include "workers/adapters/origin_names.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "engine/lang/interp.h"

namespace dualswarm::workers {

std::string OriginEndpointName(int k) { return lang::OriginEndpointName(k); }

OriginNames::OriginNames(const std::vector<int>& ports) {
  for (size_t k = 0; k < ports.size(); ++k) {
    std::string name = OriginEndpointName(static_cast<int>(k));
    std::string authority = absl::StrCat("127.0.0.1:", ports[k]);
    to_wire_.emplace_back(name, authority);
    from_wire_.emplace_back(authority, name);
    names_.push_back(std::move(name));
  }
}

std::string OriginNames::ToWire(absl::string_view s) const { return Replace(s, to_wire_); }
std::string OriginNames::FromWire(absl::string_view s) const { return Replace(s, from_wire_); }

std::string OriginNames::Replace(absl::string_view s, const std::vector<std::pair<std::string, std::string>>& from_to) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    bool replaced = false;
    for (const auto& [from, to] : from_to) {
      if (s.substr(i, from.size()) != from) continue;
      const size_t after = i + from.size();
      if (after < s.size() && std::isdigit(static_cast<unsigned char>(s[after]))) continue;
      out += to;
      i = after;
      replaced = true;
      break;
    }
    if (!replaced) out += s[i++];
  }
  return out;
}

}  // namespace dualswarm::workers
