#include "workers/adapters/http_fields.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "workers/adapters/http_parser.h"

namespace dualswarm::workers {

using ir::Value;

absl::Status AppendHeaderFields(const Value* headers, std::initializer_list<absl::string_view> skip,
                                const OriginNames& names, std::string* out) {
  if (headers == nullptr || !headers->is_map()) return absl::OkStatus();
  for (const auto& [name, v] : headers->as_map()) {
    if (!IsHttpToken(name)) return absl::InvalidArgumentError(absl::StrCat("bad header name \"", name, "\""));
    std::string value = names.ToWire(v.is_string() ? v.as_string() : v.ToString());
    if (value.find_first_of("\r\n") != std::string::npos)
      return absl::InvalidArgumentError(absl::StrCat("header ", name, " contains a line break"));
    std::string lname = absl::AsciiStrToLower(name);
    if (std::find(skip.begin(), skip.end(), lname) != skip.end()) continue;
    absl::StrAppend(out, lname, ": ", value, "\r\n");
  }
  return absl::OkStatus();
}

const Value* HeaderField(const Value* headers, absl::string_view name) {
  if (headers == nullptr || !headers->is_map()) return nullptr;
  for (const auto& [k, v] : headers->as_map())
    if (absl::AsciiStrToLower(k) == name && v.is_string()) return &v;
  return nullptr;
}

Value WithNamesFromWire(const Value& msg, const OriginNames& names) {
  if (names.empty() || !msg.is_map()) return msg;
  Value out = msg;
  if (const Value* path = msg.Find("path"); path != nullptr && path->is_string())
    out = out.Set("path", Value::String(names.FromWire(path->as_string())));
  if (const Value* h = msg.Find("headers"); h != nullptr && h->is_map()) {
    std::vector<std::pair<std::string, Value>> fields;
    for (const auto& [k, v] : h->as_map())
      fields.emplace_back(k, v.is_string() ? Value::String(names.FromWire(v.as_string())) : v);
    out = out.Set("headers", Value::Map(std::move(fields)));
  }
  return out;
}

}  // namespace dualswarm::workers
