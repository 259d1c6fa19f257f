// JSON text <-> Value. The parser reports errors as "line:column: message"
// (1-based) so a malformed trace line can be pointed at exactly. Integers
// must fit in 64 bits; fractions and exponents are refused (the IR has no
// floats).
#ifndef DUALSWARM_ENGINE_IR_JSON_H_
#define DUALSWARM_ENGINE_IR_JSON_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "engine/ir/value.h"

namespace dualswarm::ir {

// Parses exactly one JSON value (surrounding whitespace allowed).
absl::StatusOr<Value> ParseJson(absl::string_view text);

// Compact JSON. Options print as null / their inner value; symbolic terms
// print as a string holding the term in spec syntax.
std::string ToJson(const Value& v);

// Appends s as a JSON string literal.
void AppendJsonString(absl::string_view s, std::string* out);

}  // namespace dualswarm::ir

#endif  // DUALSWARM_ENGINE_IR_JSON_H_
