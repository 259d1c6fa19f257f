// How Dualswarm writes the API's wire values as words, in one place for the
// coordinator (services/), the worker daemon (workers/daemon/) and the CLI
// (cli/remote/), which may all include proto/ but not each other:
//   * enum values as the lower-case words the store, the logs and the CLI
//     use: RUN_STATE_PASSED <-> "passed", VERDICT_KIND_SPEC_ERROR <->
//     "spec-error", BRANCH_ORDER_MOST_CONSTRAINED <-> "most-constrained"
//     (the type's UPPER_SNAKE prefix dropped, '_' -> '-', lower case), read
//     from the generated descriptors so a new enum value needs no code here;
//   * gRPC status codes by name ("PERMISSION_DENIED"), as absl names them
//     (grpc::StatusCode and absl::StatusCode share their numbering).
#ifndef DUALSWARM_PROTO_NAMES_WIRE_NAMES_H_
#define DUALSWARM_PROTO_NAMES_WIRE_NAMES_H_

#include <string>
#include <vector>

#include <google/protobuf/generated_enum_reflection.h>
#include <grpcpp/support/status.h>

#include "absl/strings/string_view.h"

namespace dualswarm::wire {

// The word of `value`: "" for the zero value (UNSPECIFIED) and for numbers
// the enum does not define.
std::string EnumWord(const google::protobuf::EnumDescriptor* d, int value);
// The value whose word is exactly `word` (lower case, '-'); the zero value
// for anything else, "" included.
int EnumFromWord(const google::protobuf::EnumDescriptor* d, absl::string_view word);

// For printing what a server sent: EnumWord, but a number the enum does not
// define is written as the number.
std::string EnumText(const google::protobuf::EnumDescriptor* d, int value);
// For reading what a user typed: like EnumFromWord but case-insensitive and
// '_' accepted for '-'; false for an unknown word or the zero value.
bool ParseEnumText(const google::protobuf::EnumDescriptor* d, absl::string_view text, int* value);
// "queued|running|..." (every value but the zero value, joined by
// `separator`), for error messages.
std::string EnumChoices(const google::protobuf::EnumDescriptor* d, absl::string_view separator = "|");
// Every value but the zero value, in declaration order: the states a
// metric is labelled with, the words a SQL CHECK must accept.
std::vector<int> EnumValues(const google::protobuf::EnumDescriptor* d);

template <typename E>
std::string EnumWord(E value) {
  return EnumWord(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}
template <typename E>
E EnumFromWord(absl::string_view word) {
  return static_cast<E>(EnumFromWord(google::protobuf::GetEnumDescriptor<E>(), word));
}
template <typename E>
std::string EnumText(E value) {
  return EnumText(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}
template <typename E>
bool ParseEnumText(absl::string_view text, E* out) {
  int v = 0;
  if (!ParseEnumText(google::protobuf::GetEnumDescriptor<E>(), text, &v)) return false;
  *out = static_cast<E>(v);
  return true;
}
template <typename E>
std::string EnumChoices(absl::string_view separator = "|") {
  return EnumChoices(google::protobuf::GetEnumDescriptor<E>(), separator);
}
template <typename E>
std::vector<E> EnumValues() {
  std::vector<E> out;
  for (int v : EnumValues(google::protobuf::GetEnumDescriptor<E>())) out.push_back(static_cast<E>(v));
  return out;
}
// True for a value the enum defines other than the zero value (one that has
// a word).
template <typename E>
bool IsKnown(E value) {
  return !EnumWord(value).empty();
}

// "OK", "NOT_FOUND", ..., "UNAUTHENTICATED"; `fallback` for a number
// outside the 17 codes gRPC defines.
std::string StatusCodeName(grpc::StatusCode code, absl::string_view fallback = "");

}  // namespace dualswarm::wire

#endif  // DUALSWARM_PROTO_NAMES_WIRE_NAMES_H_
