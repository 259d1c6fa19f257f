#include "engine/harness/origin_answers.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace dualswarm::harness {

using ir::Value;

namespace {

const std::string* StringField(const Value& msg, const char* name) {
  const Value* v = msg.is_map() ? msg.Find(name) : nullptr;
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}

Value WithRequestHoles(const Value& v, const absl::flat_hash_map<std::string, ir::JPath>& where) {
  if (v.is_string()) {
    auto it = where.find(v.as_string());
    if (it == where.end()) return v;
    return ir::MakeHole(ir::JRef{kAnsweredRequestLabel, it->second, "id"}, &v);
  }
  if (v.is_map() && !ir::IsQuoted(v)) {
    ir::MapEntries entries;
    for (const auto& [k, item] : v.as_map()) entries.emplace_back(k, WithRequestHoles(item, where));
    return Value::Map(std::move(entries));
  }
  if (v.is_list()) {
    std::vector<Value> items;
    for (const Value& item : v.as_list()) items.push_back(WithRequestHoles(item, where));
    return Value::List(std::move(items));
  }
  return v;
}

}  // namespace

Value KeptAnswer(const Value& answer, const Value& request) {
  // Where each string of 3 or more bytes occurs in the request first.
  absl::flat_hash_map<std::string, ir::JPath> where;
  ir::JPath at;
  ir::ForEachStringLeaf(request, &at, [&](const std::string& s, const ir::JPath& path) {
    if (s.size() >= 3) where.try_emplace(s, path);
  });
  return WithRequestHoles(ir::QuoteLookalikes(answer, {}), where);
}

absl::StatusOr<Value> AnswerFromKept(const Value& kept, const Value& request) {
  return ir::Instantiate(kept, {ir::LabeledMessage{kAnsweredRequestLabel, request}});
}

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

bool FitsLoosely(const AttachedAnswer& a, const std::string& key) {
  constexpr absl::string_view kConditional = " conditional";
  if (a.key == key) return false;  // an exact fit, not a loose one
  const absl::string_view kept = absl::StripSuffix(a.key, kConditional);
  if (kept != absl::StripSuffix(key, kConditional) || kept.empty()) return false;
  const Value* status = a.answer.is_map() ? a.answer.Find("status") : nullptr;
  const bool not_modified = status != nullptr && status->is_int() && status->as_int() == 304;
  return !not_modified || absl::EndsWith(key, kConditional);
}

namespace {

// A request target's path: without "scheme://authority" (a proxy's client
// sends the absolute form, RFC 9112 §3.2.2).
absl::string_view PathPart(absl::string_view target) {
  const size_t scheme = target.find("://");
  if (scheme == absl::string_view::npos || target.substr(0, scheme).find('/') != absl::string_view::npos) return target;
  const size_t path = target.find('/', scheme + 3);
  return path == absl::string_view::npos ? absl::string_view("/") : target.substr(path);
}

// How well client request `client` explains origin request `origin`: 3 the
// same method and path (or the same key), 2 the same path, 1 neither.
int AttributionScore(const Value& client, const Value& origin) {
  const std::string origin_key = OriginRequestKey(origin);
  if (!origin_key.empty() && OriginRequestKey(client) == origin_key) return 3;
  const std::string* client_method = StringField(client, "method");
  const std::string* origin_method = StringField(origin, "method");
  const std::string* client_path = StringField(client, "path");
  const std::string* origin_path = StringField(origin, "path");
  if (client_path == nullptr || origin_path == nullptr) return 1;
  if (PathPart(*client_path) != PathPart(*origin_path)) return 1;
  return client_method != nullptr && origin_method != nullptr && *client_method == *origin_method ? 3 : 2;
}

// The strings of `client` that could name it (kMinForwardedIdBytes or
// more, not a Host field) which `origin` carries at the same place, as
// "path\0string".
std::vector<std::string> CarriedIdsOf(const Value& origin, const Value& client) {
  std::vector<std::string> ids;
  ir::JPath at;
  ir::ForEachStringLeaf(client, &at, [&](const std::string& s, const ir::JPath& path) {
    if (s.size() < kMinForwardedIdBytes) return;
    if (!path.empty() && !path.back().is_index && absl::EqualsIgnoreCase(path.back().field, "host")) return;
    const Value* there = ir::FollowJPath(origin, path);
    if (there != nullptr && there->is_string() && there->as_string() == s)
      ids.push_back(absl::StrCat(ir::JPathToString(path), std::string(1, '\0'), s));
  });
  return ids;
}

}  // namespace

std::optional<size_t> ForwardedFrom(const Value& origin, const std::vector<const Value*>& clients) {
  // Each carried string, and the clients that carry it.
  absl::flat_hash_map<std::string, std::vector<size_t>> carriers;
  for (size_t i = 0; i < clients.size(); ++i)
    for (std::string& id : CarriedIdsOf(origin, *clients[i])) carriers[std::move(id)].push_back(i);
  std::optional<size_t> named;
  for (const auto& [id, by] : carriers) {
    if (by.size() != 1) continue;                       // shared: it names none
    if (named && *named != by[0]) return std::nullopt;  // two strings name two requests
    named = by[0];
  }
  return named;
}

std::vector<int64_t> AttributeOriginRequests(const std::vector<check::Observation>& trace) {
  using Kind = check::Observation::Kind;
  struct InFlight {
    int64_t label;
    int64_t conn;
    const Value* msg;
    int named = 0;  // origin requests attributed to it so far
  };
  std::vector<InFlight> in_flight;  // oldest first
  std::vector<int64_t> out;
  for (const check::Observation& o : trace) {
    if (o.side == check::Side::kOrigin) {
      if (o.kind != Kind::kReceived) continue;
      std::vector<const Value*> clients;
      for (const InFlight& c : in_flight) clients.push_back(c.msg);
      if (std::optional<size_t> forwarded = ForwardedFrom(o.msg, clients)) {
        out.push_back(in_flight[*forwarded].label);
        ++in_flight[*forwarded].named;
        continue;
      }
      InFlight* best = nullptr;
      int best_score = 0;
      for (InFlight& c : in_flight) {
        const int score = AttributionScore(*c.msg, o.msg);
        if (best == nullptr || score > best_score || (score == best_score && c.named < best->named)) {
          best = &c;
          best_score = score;
        }
      }
      out.push_back(best == nullptr ? -1 : best->label);
      if (best != nullptr) ++best->named;
      continue;
    }
    switch (o.kind) {
      case Kind::kSent:
        in_flight.push_back({o.label, o.conn, &o.msg});
        break;
      case Kind::kReceived:
      case Kind::kTimeout: {
        const int64_t request = o.kind == Kind::kReceived ? o.label - 1 : o.label;
        std::erase_if(in_flight, [&](const InFlight& c) { return c.label == request; });
        break;
      }
      case Kind::kClosed:
        std::erase_if(in_flight, [&](const InFlight& c) { return c.conn == o.conn; });
        break;
      case Kind::kFault:
        break;
    }
  }
  return out;
}

std::vector<std::vector<AttachedAnswer>> AnswersByClientRequest(const std::vector<OriginAnswerItem>& given,
                                                                const std::vector<check::Observation>& trace,
                                                                size_t requests) {
  std::vector<std::vector<AttachedAnswer>> out(requests);
  const std::vector<int64_t> by = AttributeOriginRequests(trace);
  // The origin requests' labels in trace order, and when each one's answer
  // went out among the answers (an answer held back goes out after later
  // requests' answers: that order is what a rerun repeats).
  std::vector<int64_t> request_labels;
  absl::flat_hash_map<int64_t, int64_t> answer_rank;  // by the answered request's label
  for (const check::Observation& o : trace) {
    if (o.side != check::Side::kOrigin) continue;
    if (o.kind == check::Observation::Kind::kReceived) request_labels.push_back(o.label);
    if (o.kind == check::Observation::Kind::kSent) answer_rank.emplace(o.label - 1, answer_rank.size());
  }
  for (size_t i = 0; i < by.size() && i < given.size(); ++i) {
    if (by[i] < 1 || by[i] % 2 != 1) continue;
    const size_t k = static_cast<size_t>(by[i] / 2);
    auto rank = i < request_labels.size() ? answer_rank.find(request_labels[i]) : answer_rank.end();
    if (k < requests) out[k].push_back({given[i].key, given[i].answer, rank != answer_rank.end() ? rank->second : -1});
  }
  return out;
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
