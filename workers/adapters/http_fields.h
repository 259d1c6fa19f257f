// What the HTTP codecs (client side: http_codec.cc; origin side:
// http_origin_codec.cc) do alike to a message's target and header fields:
// write an IR `headers` map as validated lowercased field lines, and map
// origin names (origin_names.h) in a decoded message.
#ifndef DUALSWARM_WORKERS_ADAPTERS_HTTP_FIELDS_H_
#define DUALSWARM_WORKERS_ADAPTERS_HTTP_FIELDS_H_

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/ir/value.h"
#include "workers/adapters/origin_names.h"

namespace dualswarm::workers {

// Appends "name: value\r\n" per entry of `headers` (a map; anything else
// adds nothing), names lowercased, values through names.ToWire (a
// non-string value as its JSON text), leaving out the (lowercase) names in
// `skip`. InvalidArgument for a name that is no token or a value with a
// line break.
absl::Status AppendHeaderFields(const ir::Value* headers, std::initializer_list<absl::string_view> skip,
                                const OriginNames& names, std::string* out);

// The value of field `name` (lowercase) of IR `headers`, if it is a string.
const ir::Value* HeaderField(const ir::Value* headers, absl::string_view name);

// A decoded message with its "path" and header values mapped FromWire.
ir::Value WithNamesFromWire(const ir::Value& msg, const OriginNames& names);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_HTTP_FIELDS_H_
