#include "engine/harness/origin_answers.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace dualswarm::harness {

using ir::Value;

namespace {

const std::string* StringField(const Value& msg, const char* name) {
  const Value* v = msg.is_map() ? msg.Find(name) : nullptr;
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

}  // namespace

std::string OriginRequestKey(const Value& request) {
  const std::string* method = StringField(request, "method");
  const std::string* path = StringField(request, "path");
  if (method != nullptr && path != nullptr) {
    const Value* headers = request.Find("headers");
    const bool conditional = headers != nullptr && headers->is_map() && headers->Find("if-none-match") != nullptr;
    return absl::StrCat(*method, " ", *path, conditional ? " conditional" : "");
  }
  if (const std::string* op = StringField(request, "op"); op != nullptr) return absl::StrCat("op ", *op);
  return "";
}

OriginAnswerBook::OriginAnswerBook(const std::vector<OriginAnswerItem>& items) {
  for (const OriginAnswerItem& item : items) kept_[item.key][item.nth] = item.answer;
}

std::optional<Value> OriginAnswerBook::Next(const std::string& key) {
  const int64_t nth = seen_[key]++;
  auto kept = kept_.find(key);
  if (kept == kept_.end()) return std::nullopt;
  auto it = kept->second.upper_bound(nth);  // the first kept past nth
  if (it == kept->second.begin()) return std::nullopt;
  return std::prev(it)->second;
}

int64_t OriginAnswerBook::Seen(const std::string& key) const {
  auto it = seen_.find(key);
  return it == seen_.end() ? 0 : it->second;
}

std::vector<OriginAnswerItem> OriginAnswersUsedBy(const std::vector<OriginAnswerItem>& items,
                                                  const std::vector<check::Observation>& trace) {
  absl::flat_hash_map<std::string, int64_t> requests;
  for (const check::Observation& o : trace)
    if (o.side == check::Side::kOrigin && o.kind == check::Observation::Kind::kReceived)
      ++requests[OriginRequestKey(o.msg)];
  std::vector<OriginAnswerItem> used;
  for (const OriginAnswerItem& item : items) {
    auto it = requests.find(item.key);
    if (it != requests.end() && item.nth < it->second) used.push_back(item);
  }
  return used;
}

}  // namespace dualswarm::harness
