#include "engine/harness/fresh_resources.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::harness {

using ir::Value;

namespace {

constexpr char kSuffix[] = "~w";
constexpr size_t kSuffixBytes = 2;

// The field of a request that names its resource, as ResourceOf reads it;
// nullptr when there is no literal one.
const char* ResourceField(const Value& jexpr) {
  if (!jexpr.is_map()) return nullptr;
  for (const char* field : {"path", "key"})
    if (const Value* v = jexpr.Find(field); v != nullptr && v->is_string()) return field;
  return nullptr;
}

// The longest name a rename makes (memcached keys stop at 250 bytes).
constexpr size_t kMaxRenamedBytes = 200;

// Where the suffix a rename gave `name` begins ("~w" and digits at its
// end); npos when it has none.
size_t SuffixAt(const std::string& name) {
  const size_t at = name.rfind(kSuffix);
  if (at == std::string::npos || at + kSuffixBytes == name.size()) return std::string::npos;
  for (size_t i = at + kSuffixBytes; i < name.size(); ++i)
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return std::string::npos;
  return at;
}

// `name` without the suffix a rename gave it.
std::string BaseName(const std::string& name) {
  const size_t at = SuffixAt(name);
  return at == std::string::npos ? name : name.substr(0, at);
}

// Whether a suffix makes `name` a name of its own: not the query or
// fragment of a URI (a server may ignore those), nor a member of the
// collection "/a/" instead of "/a/" itself; and not too long.
bool Renamable(const std::string& name) {
  return name.find_first_of("?#") == std::string::npos && (name.empty() || name.back() != '/') &&
         name.size() + kSuffixBytes + 20 <= kMaxRenamedBytes;
}

// Item `item` with its resource field set to f(the base name).
template <typename F>
InputItem Renamed(const InputItem& item, const char* field, F f) {
  InputItem out = item;
  out.jexpr = item.jexpr.Set(field, Value::String(f(BaseName(item.jexpr.Find(field)->as_string()))));
  return out;
}

}  // namespace

std::optional<std::vector<InputItem>> WithFreshResources(const std::vector<InputItem>& input, const lang::Spec& spec,
                                                         const std::string& token) {
  if (!spec.ast.has_partition || token.empty()) return std::nullopt;
  const lang::Interpreter interp(&spec);
  std::vector<InputItem> out;
  out.reserve(input.size());
  // Partition key (as text) before the rename -> after it: a bijection.
  std::map<std::string, std::string> before_to_after, after_to_before;
  const std::string suffix = absl::StrCat(kSuffix, token);
  for (const InputItem& item : input) {
    const char* field = item.is_fault() ? nullptr : ResourceField(item.jexpr);
    if (field == nullptr || !Renamable(BaseName(item.jexpr.Find(field)->as_string()))) return std::nullopt;
    InputItem fresh = Renamed(item, field, [&](const std::string& b) { return absl::StrCat(b, suffix); });
    absl::StatusOr<Value> key_before = interp.PartitionKey(item.jexpr);
    absl::StatusOr<Value> key_after = interp.PartitionKey(fresh.jexpr);
    if (!key_before.ok() || !key_after.ok()) return std::nullopt;
    const std::string before = key_before->ToString(), after = key_after->ToString();
    // The key follows the name: it carries the suffix, which no other run uses.
    if (after == before || !absl::StrContains(after, suffix)) return std::nullopt;
    auto [b, new_b] = before_to_after.emplace(before, after);
    auto [a, new_a] = after_to_before.emplace(after, before);
    if (b->second != after || a->second != before) return std::nullopt;  // partitions merged or split
    out.push_back(std::move(fresh));
  }
  return out;
}

bool HasFreshSuffixes(const std::vector<InputItem>& input) {
  for (const InputItem& item : input) {
    const char* field = item.is_fault() ? nullptr : ResourceField(item.jexpr);
    if (field != nullptr && SuffixAt(item.jexpr.Find(field)->as_string()) != std::string::npos) return true;
  }
  return false;
}

std::vector<InputItem> WithoutFreshSuffixes(std::vector<InputItem> input) {
  for (InputItem& item : input) {
    const char* field = item.is_fault() ? nullptr : ResourceField(item.jexpr);
    if (field != nullptr) item = Renamed(item, field, [](const std::string& b) { return b; });
  }
  return input;
}

}  // namespace dualswarm::harness
