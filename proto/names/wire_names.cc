#include "proto/names/wire_names.h"

#include <algorithm>

#include <google/protobuf/descriptor.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace dualswarm::wire {
namespace {

// "RunState" -> "RUN_STATE_"
std::string EnumPrefix(const google::protobuf::EnumDescriptor* d) {
  std::string out;
  for (char c : d->name()) {
    if (absl::ascii_isupper(static_cast<unsigned char>(c)) && !out.empty()) out += '_';
    out += absl::ascii_toupper(static_cast<unsigned char>(c));
  }
  return out + "_";
}

std::string WordOf(const google::protobuf::EnumValueDescriptor* v) {
  absl::string_view rest = v->name();
  absl::ConsumePrefix(&rest, EnumPrefix(v->type()));
  std::string out = absl::AsciiStrToLower(rest);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

}  // namespace

std::string EnumWord(const google::protobuf::EnumDescriptor* d, int value) {
  if (value == 0) return "";
  const google::protobuf::EnumValueDescriptor* v = d->FindValueByNumber(value);
  return v == nullptr ? "" : WordOf(v);
}

int EnumFromWord(const google::protobuf::EnumDescriptor* d, absl::string_view word) {
  if (word.empty()) return 0;
  for (int i = 0; i < d->value_count(); ++i)
    if (WordOf(d->value(i)) == word) return d->value(i)->number();
  return 0;
}

std::string EnumText(const google::protobuf::EnumDescriptor* d, int value) {
  if (value == 0) return "";
  if (d->FindValueByNumber(value) == nullptr) return absl::StrCat(value);
  return EnumWord(d, value);
}

bool ParseEnumText(const google::protobuf::EnumDescriptor* d, absl::string_view text, int* value) {
  std::string name = absl::StrCat(EnumPrefix(d), absl::AsciiStrToUpper(text));
  std::replace(name.begin(), name.end(), '-', '_');
  const google::protobuf::EnumValueDescriptor* v = d->FindValueByName(name);
  if (v == nullptr || v->number() == 0) return false;
  *value = v->number();
  return true;
}

std::string EnumChoices(const google::protobuf::EnumDescriptor* d, absl::string_view separator) {
  std::string out;
  for (int v : EnumValues(d)) absl::StrAppend(&out, out.empty() ? "" : separator, EnumWord(d, v));
  return out;
}

std::vector<int> EnumValues(const google::protobuf::EnumDescriptor* d) {
  std::vector<int> out;
  for (int i = 0; i < d->value_count(); ++i)
    if (d->value(i)->number() != 0) out.push_back(d->value(i)->number());
  return out;
}

std::string StatusCodeName(grpc::StatusCode code, absl::string_view fallback) {
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? std::string(fallback) : name;
}

}  // namespace dualswarm::wire
