#include "engine/harness/counterexample.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/harness/faults.h"
#include "engine/harness/fs_summary.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"

namespace dualswarm::harness {
namespace {

using check::Observation;
using ir::Value;

// The message labelled `label` on `side` (client and origin labels are
// counted apart, so the same number names one message on each side).
const Observation* FindLabel(const std::vector<Observation>& trace, int64_t label,
                             check::Side side = check::Side::kClient) {
  for (const auto& o : trace)
    if (o.label == label && o.side == side &&
        (o.kind == Observation::Kind::kSent || o.kind == Observation::Kind::kReceived))
      return &o;
  return nullptr;
}

// "GET" / "put": what kind of request this was, without its arguments.
std::string RequestKind(const Value& req) {
  for (const char* f : {"method", "op"})
    if (const Value* v = req.Find(f); v != nullptr && v->is_string()) return v->as_string();
  return "request";
}

std::string StatusSummary(const Value& resp) {
  if (const Value* s = resp.Find("status"); s != nullptr && s->is_int()) return absl::StrCat("status=", s->as_int());
  std::vector<std::string> keys;
  for (const auto& [k, v] : resp.as_map()) keys.push_back(k);
  return absl::StrCat("keys=", absl::StrJoin(keys, ","));
}

std::string Clip(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n - 3) + "...";
  return s;
}

std::string Quoted(const std::string& s, size_t n) {
  std::string out;
  ir::AppendJsonString(Clip(s, n), &out);
  return out;
}

// A short rendering of a message for the diagram.
std::string Summarize(const Value& m) {
  if (m.Find("method") && m.Find("path")) {  // HTTP request
    std::string s = absl::StrCat(m.Find("method")->ToString().substr(1, m.Find("method")->ToString().size() - 2), " ",
                                 m.Find("path")->is_string() ? m.Find("path")->as_string() : "?");
    if (const Value* h = m.Find("headers"); h && h->is_map())
      for (const auto& [k, v] : h->as_map())
        if (k.rfind("if-", 0) == 0) absl::StrAppend(&s, " ", k, ": ", v.is_string() ? v.as_string() : ir::ToJson(v));
    if (const Value* b = m.Find("body"); b && b->is_string() && !b->as_string().empty())
      absl::StrAppend(&s, " ", Quoted(b->as_string(), 16));
    return s;
  }
  if (m.Find("status") && m.Find("status")->is_int()) {  // HTTP response
    std::string s = absl::StrCat(m.Find("status")->as_int());
    if (const Value* h = m.Find("headers"); h && h->is_map())
      if (const Value* e = h->Find("etag")) absl::StrAppend(&s, " etag: ", e->is_string() ? e->as_string() : "?");
    if (const Value* b = m.Find("body"); b && b->is_string() && !b->as_string().empty())
      absl::StrAppend(&s, " ", Quoted(b->as_string(), 16));
    return s;
  }
  return Clip(ir::ToJson(m), 60);
}

const Value* Need(const Value& v, const char* key, Value::Kind kind, std::string* err) {
  const Value* f = v.Find(key);
  if (f == nullptr || f->kind() != kind) {
    if (err->empty())
      *err = absl::StrCat("counterexample field \"", key, "\" is missing or not a ", Value::KindName(kind));
    return nullptr;
  }
  return f;
}

}  // namespace

std::string FailureClass(const Verdict& v, const std::vector<Observation>& trace) {
  std::vector<std::string> parts = {v.kind};
  if (v.kind == "safety" && v.origin_side) {
    // A request the intermediary sent the origin: what kind it was.
    if (const Observation* req = FindLabel(trace, v.label, check::Side::kOrigin))
      parts.push_back(RequestKind(req->msg));
  } else if (v.kind == "safety") {
    if (const Observation* req = FindLabel(trace, v.label - 1)) parts.push_back(RequestKind(req->msg));
    if (const Observation* resp = FindLabel(trace, v.label)) parts.push_back(StatusSummary(resp->msg));
  } else if (v.kind == "liveness") {
    if (const Observation* req = FindLabel(trace, v.label)) parts.push_back(RequestKind(req->msg));
  } else if (v.kind == "property") {
    parts.push_back(v.field);  // "property:NAME"
  } else {
    // spec-error / sut-crash: the first line of the reason without numbers.
    std::string first = v.reason.substr(0, v.reason.find('\n'));
    first.erase(std::remove_if(first.begin(), first.end(), [](char c) { return c >= '0' && c <= '9'; }), first.end());
    parts.push_back(first);
  }
  return absl::StrJoin(parts, "|");
}

std::string ComputeSignature(const Verdict& v, const std::vector<Observation>& trace) {
  std::string key = FailureClass(v, trace);
  if (v.kind == "safety") {
    // What the spec expected instead: the `send` (within the spec file) of
    // the primary explanation (see Verdict::spec_loc).
    std::string loc = v.spec_loc;
    if (size_t slash = loc.rfind('/'); slash != std::string::npos) loc = loc.substr(slash + 1);
    absl::StrAppend(&key, "|", loc);
    if (v.origin_side) key += "|origin";  // a wrong forwarded request, not a wrong response
  }
  // The faults the failure kept through shrinking: a failure that needs a
  // kill is another cause than one without faults, whatever it looks like.
  std::set<std::string> faults;
  for (const Observation& o : trace)
    if (const Value* f = o.kind == Observation::Kind::kFault ? o.msg.Find("fault") : nullptr; f && f->is_string())
      faults.insert(f->as_string());
  if (!faults.empty()) absl::StrAppend(&key, "|faults:", absl::StrJoin(faults, ","));
  return lang::StableHashHex(key);
}

std::string CounterexampleToJson(const Counterexample& cx) {
  std::string out = "{\"version\":1,\"spec\":{\"name\":";
  ir::AppendJsonString(cx.spec_name, &out);
  out += ",\"hash\":";
  ir::AppendJsonString(cx.spec_hash, &out);
  out += ",\"file\":";
  ir::AppendJsonString(cx.spec_file, &out);
  out += "},\"target\":";
  ir::AppendJsonString(cx.target, &out);
  out += ",\"adapter\":";
  ir::AppendJsonString(cx.adapter, &out);
  absl::StrAppend(&out, ",\"seed\":", cx.seed, ",\"branch_order\":");
  ir::AppendJsonString(cx.branch_order, &out);
  out += ",\"feature_mask\":";
  ir::AppendJsonString(cx.feature_mask, &out);
  absl::StrAppend(&out, ",\"connections\":", cx.connections, ",\"max_in_flight\":", cx.max_in_flight,
                  ",\"response_timeout_ms\":", cx.response_timeout_ms, ",\"nodes\":", cx.nodes,
                  ",\"connect_node\":", cx.connect_node);
  if (cx.max_per_connection > 0) absl::StrAppend(&out, ",\"max_per_connection\":", cx.max_per_connection);
  if (cx.origins > 0) absl::StrAppend(&out, ",\"origins\":", cx.origins);
  if (!cx.origin_gen.empty()) {
    out += ",\"origin_gen\":";
    ir::AppendJsonString(cx.origin_gen, &out);
  }
  if (!cx.nemesis_faults.empty()) {
    absl::StrAppend(&out, ",\"nemesis\":{\"faults\":[");
    for (size_t i = 0; i < cx.nemesis_faults.size(); ++i) {
      if (i > 0) out += ",";
      ir::AppendJsonString(cx.nemesis_faults[i], &out);
    }
    absl::StrAppend(&out, "],\"interval_ms\":", cx.nemesis_interval_ms, ",\"duration_ms\":", cx.nemesis_duration_ms,
                    "}");
  }
  absl::StrAppend(&out, ",\"input\":[");
  for (size_t i = 0; i < cx.input.size(); ++i) {
    const harness::InputItem& item = cx.input[i];
    if (item.is_fault()) {
      absl::StrAppend(&out, i ? "," : "", "{\"fault\":", ir::ToJson(item.fault));
    } else {
      absl::StrAppend(&out, i ? "," : "", "{\"conn\":", item.conn, ",\"jexpr\":", ir::ToJson(item.jexpr));
    }
    absl::StrAppend(&out, ",\"after\":[", absl::StrJoin(item.after, ","), "]");
    if (!item.origin_answers.empty()) {
      out += ",\"origin_answers\":[";
      for (size_t k = 0; k < item.origin_answers.size(); ++k) {
        absl::StrAppend(&out, k ? "," : "", "{\"key\":");
        ir::AppendJsonString(item.origin_answers[k].key, &out);
        absl::StrAppend(&out, ",\"answer\":", ir::ToJson(item.origin_answers[k].answer));
        if (item.origin_answers[k].order >= 0) absl::StrAppend(&out, ",\"order\":", item.origin_answers[k].order);
        out += "}";
      }
      out += "]";
    }
    out += "}";
  }
  out += "]";
  if (!cx.origin_answers.empty()) {
    out += ",\"origin_answers\":[";
    for (size_t i = 0; i < cx.origin_answers.size(); ++i) {
      const OriginAnswerItem& a = cx.origin_answers[i];
      absl::StrAppend(&out, i ? "," : "", "{\"key\":");
      ir::AppendJsonString(a.key, &out);
      absl::StrAppend(&out, ",\"nth\":", a.nth, ",\"answer\":", ir::ToJson(a.answer), "}");
    }
    out += "]";
  }
  out += ",\"trace\":[";
  for (size_t i = 0; i < cx.trace.size(); ++i)
    absl::StrAppend(&out, i ? "," : "", check::ObservationToJson(cx.trace[i]));
  out += "],\"verdict\":{\"kind\":";
  ir::AppendJsonString(cx.verdict.kind, &out);
  out += ",\"reason\":";
  ir::AppendJsonString(cx.verdict.reason, &out);
  out += ",\"field\":";
  ir::AppendJsonString(cx.verdict.field, &out);
  out += ",\"spec_loc\":";
  ir::AppendJsonString(cx.verdict.spec_loc, &out);
  out += ",\"spec_locs\":[";
  for (size_t i = 0; i < cx.verdict.spec_locs.size(); ++i) {
    if (i) out += ",";
    ir::AppendJsonString(cx.verdict.spec_locs[i], &out);
  }
  absl::StrAppend(&out, "],\"label\":", cx.verdict.label, cx.verdict.origin_side ? ",\"side\":\"origin\"" : "",
                  ",\"details\":[");
  for (size_t i = 0; i < cx.verdict.details.size(); ++i) {
    if (i) out += ",";
    ir::AppendJsonString(cx.verdict.details[i], &out);
  }
  out += "]},\"signature\":";
  ir::AppendJsonString(cx.signature, &out);
  if (cx.repeat > 1) absl::StrAppend(&out, ",\"repeat\":", cx.repeat, ",\"failed_round\":", cx.failed_round);
  absl::StrAppend(&out, ",\"original_size\":", cx.original_size, ",\"shrunk_size\":", cx.shrunk_size,
                  ",\"shrink\":{\"reruns\":", cx.shrink_reruns,
                  ",\"milliseconds\":", static_cast<int64_t>(cx.shrink_seconds * 1000),
                  ",\"complete\":", cx.shrink_complete ? "true" : "false",
                  "},\"replays\":{\"verified\":", cx.replays_verified, ",\"reproduced\":", cx.replays_reproduced, "}}");
  return out;
}

namespace {

// Most origin answers a counterexample may carry, and the longest key.
constexpr size_t kMaxOriginAnswers = 100'000;
constexpr size_t kMaxOriginKeyBytes = 4096;

// "origin_answers" (optional): [{"key": STRING, "nth": N >= 0, "answer": MAP}].
absl::Status ReadOriginAnswers(const Value& v, Counterexample* cx) {
  const Value* list = v.Find("origin_answers");
  if (list == nullptr) return absl::OkStatus();
  if (!list->is_list() || list->as_list().size() > kMaxOriginAnswers)
    return absl::InvalidArgumentError(
        absl::StrCat("counterexample \"origin_answers\" must be a list of at most ", kMaxOriginAnswers, " answers"));
  for (const Value& item : list->as_list()) {
    const Value* key = item.Find("key");
    const Value* nth = item.Find("nth");
    const Value* answer = item.Find("answer");
    if (key == nullptr || !key->is_string() || key->as_string().size() > kMaxOriginKeyBytes || nth == nullptr ||
        !nth->is_int() || nth->as_int() < 0 || answer == nullptr || !answer->is_map())
      return absl::InvalidArgumentError(absl::StrCat("counterexample origin answer ", cx->origin_answers.size(),
                                                     ": needs \"key\" (a string of at most ", kMaxOriginKeyBytes,
                                                     " bytes), \"nth\" (0 or more) and \"answer\" (an object)"));
    cx->origin_answers.push_back({key->as_string(), nth->as_int(), *answer});
  }
  return absl::OkStatus();
}

// An input item's "origin_answers" (optional): [{"key": STRING, "answer":
// MAP}], the answers attached to its request; `*budget` answers may still
// be read (all items together share kMaxOriginAnswers).
absl::Status ReadAttachedAnswers(const Value& item, size_t index, size_t* budget, harness::InputItem* in) {
  const Value* list = item.Find("origin_answers");
  if (list == nullptr) return absl::OkStatus();
  if (!list->is_list() || list->as_list().size() > *budget)
    return absl::InvalidArgumentError(absl::StrCat("counterexample input item ", index,
                                                   ": \"origin_answers\" must be a list, and all items' at most ",
                                                   kMaxOriginAnswers, " answers together"));
  *budget -= list->as_list().size();
  for (const Value& a : list->as_list()) {
    const Value* key = a.Find("key");
    const Value* answer = a.Find("answer");
    const Value* order = a.Find("order");
    if (key == nullptr || !key->is_string() || key->as_string().size() > kMaxOriginKeyBytes || answer == nullptr ||
        !answer->is_map() || (order != nullptr && (!order->is_int() || order->as_int() < 0)))
      return absl::InvalidArgumentError(
          absl::StrCat("counterexample input item ", index, ": an origin answer needs \"key\" (a string of at most ",
                       kMaxOriginKeyBytes, " bytes) and \"answer\" (an object), and may have \"order\" (0 or more)"));
    in->origin_answers.push_back({key->as_string(), *answer, order != nullptr ? order->as_int() : -1});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Counterexample> CounterexampleFromJson(absl::string_view text) {
  auto parsed = ir::ParseJson(text);
  if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat("counterexample: ", parsed.status().message()));
  const Value& v = *parsed;
  std::string err;
  Counterexample cx;
  const Value* spec = Need(v, "spec", Value::Kind::kMap, &err);
  const Value* input = Need(v, "input", Value::Kind::kList, &err);
  const Value* trace = Need(v, "trace", Value::Kind::kList, &err);
  const Value* verdict = Need(v, "verdict", Value::Kind::kMap, &err);
  const Value* seed = Need(v, "seed", Value::Kind::kInt, &err);
  const Value* conns = Need(v, "connections", Value::Kind::kInt, &err);
  if (!err.empty()) return absl::InvalidArgumentError(err);
  auto str = [&](const Value& m, const char* k) {
    const Value* f = m.Find(k);
    return f && f->is_string() ? f->as_string() : std::string();
  };
  auto num = [&](const Value& m, const char* k, int64_t d) {
    const Value* f = m.Find(k);
    return f && f->is_int() ? f->as_int() : d;
  };
  cx.spec_name = str(*spec, "name");
  cx.spec_hash = str(*spec, "hash");
  cx.spec_file = str(*spec, "file");
  cx.target = str(v, "target");
  cx.adapter = str(v, "adapter");
  cx.seed = static_cast<uint64_t>(seed->as_int());
  cx.branch_order = str(v, "branch_order");
  cx.feature_mask = str(v, "feature_mask");
  cx.connections = static_cast<int>(conns->as_int());
  if (cx.connections < 1 || cx.connections > 1024)
    return absl::InvalidArgumentError("counterexample \"connections\" must be between 1 and 1024");
  cx.max_in_flight = static_cast<int>(num(v, "max_in_flight", cx.connections));
  const int64_t max_per_connection = num(v, "max_per_connection", 0);
  if (max_per_connection < 0 || max_per_connection > 100000)
    return absl::InvalidArgumentError("counterexample \"max_per_connection\" must be between 0 and 100000");
  cx.max_per_connection = static_cast<int>(max_per_connection);
  cx.response_timeout_ms = num(v, "response_timeout_ms", 5000);
  if (const Value* nem = v.Find("nemesis"); nem != nullptr && nem->is_map()) {
    const Value* faults = nem->Find("faults");
    if (faults == nullptr || !faults->is_list() || faults->as_list().size() > 16)
      return absl::InvalidArgumentError("counterexample \"nemesis\" needs \"faults\", a list of at most 16 names");
    for (const Value& f : faults->as_list()) {
      if (!f.is_string() || f.as_string().size() > 64)
        return absl::InvalidArgumentError("counterexample nemesis faults are names of at most 64 bytes");
      cx.nemesis_faults.push_back(f.as_string());
    }
    cx.nemesis_interval_ms = num(*nem, "interval_ms", 1000);
    cx.nemesis_duration_ms = num(*nem, "duration_ms", 300);
  }
  cx.nodes = static_cast<int>(num(v, "nodes", 1));
  cx.connect_node = static_cast<int>(num(v, "connect_node", -1));
  cx.origins = static_cast<int>(num(v, "origins", 0));
  if (cx.origins < 0 || cx.origins > 16)
    return absl::InvalidArgumentError("counterexample \"origins\" must be between 0 and 16");
  cx.origin_gen = str(v, "origin_gen");
  if (cx.origin_gen.size() > 256) return absl::InvalidArgumentError("counterexample \"origin_gen\" is too long");
  if (cx.nodes < 1 || cx.nodes > 16 || cx.connect_node < -1 || cx.connect_node >= cx.nodes)
    return absl::InvalidArgumentError(
        "counterexample \"nodes\" must be between 1 and 16 and \"connect_node\" -1 or one of them");
  size_t attached_budget = kMaxOriginAnswers;
  for (const auto& item : input->as_list()) {
    harness::InputItem in;
    if (const Value* f = item.Find("fault"); f != nullptr) {
      const Value* name = f->Find("fault");
      const Value* node = f->Find("node");
      const bool known = name != nullptr && name->is_string() && harness::IsFaultAction(name->as_string());
      if (!known || node == nullptr || !node->is_int() || node->as_int() < 0 || node->as_int() >= cx.nodes)
        return absl::InvalidArgumentError(absl::StrCat("counterexample input item ", cx.input.size(), ": ",
                                                       ir::ToJson(*f), " is not a fault: it needs \"fault\" (",
                                                       harness::FaultActionNames(), ") and \"node\" (0 to ",
                                                       cx.nodes - 1, ")"));
      in.fault = *f;
    } else {
      const Value* c = item.Find("conn");
      const Value* j = item.Find("jexpr");
      if (c == nullptr || !c->is_int() || j == nullptr || c->as_int() < 0 || c->as_int() >= cx.connections)
        return absl::InvalidArgumentError(
            "counterexample input items need \"conn\" (a valid connection) and \"jexpr\", or \"fault\"");
      in.conn = static_cast<int>(c->as_int());
      in.jexpr = *j;
    }
    if (const Value* a = item.Find("after"); a && a->is_list())
      for (const auto& x : a->as_list())
        if (x.is_int() && x.as_int() >= 0 && x.as_int() < static_cast<int64_t>(cx.input.size()))
          in.after.push_back(static_cast<int>(x.as_int()));
    if (absl::Status s = ReadAttachedAnswers(item, cx.input.size(), &attached_budget, &in); !s.ok()) return s;
    cx.input.push_back(std::move(in));
  }
  if (absl::Status s = ReadOriginAnswers(v, &cx); !s.ok()) return s;
  for (const auto& o : trace->as_list()) {
    auto obs = check::ObservationFromValue(o);
    if (!obs.ok()) return absl::InvalidArgumentError(absl::StrCat("counterexample trace: ", obs.status().message()));
    cx.trace.push_back(std::move(*obs));
  }
  cx.verdict.kind = str(*verdict, "kind");
  cx.verdict.reason = str(*verdict, "reason");
  cx.verdict.field = str(*verdict, "field");
  cx.verdict.spec_loc = str(*verdict, "spec_loc");
  cx.verdict.label = num(*verdict, "label", 0);
  cx.verdict.origin_side = str(*verdict, "side") == "origin";
  if (const Value* d = verdict->Find("spec_locs"); d && d->is_list())
    for (const auto& x : d->as_list())
      if (x.is_string()) cx.verdict.spec_locs.push_back(x.as_string());
  if (const Value* d = verdict->Find("details"); d && d->is_list())
    for (const auto& x : d->as_list())
      if (x.is_string()) cx.verdict.details.push_back(x.as_string());
  cx.signature = str(v, "signature");
  cx.original_size = static_cast<size_t>(num(v, "original_size", 0));
  cx.shrunk_size = static_cast<size_t>(num(v, "shrunk_size", static_cast<int64_t>(cx.input.size())));
  const int64_t repeat = num(v, "repeat", 1);
  if (repeat < 1 || repeat > kMaxRepeat)
    return absl::InvalidArgumentError(
        absl::StrCat("counterexample: repeat must be 1 to ", kMaxRepeat, " rounds (got ", repeat, ")"));
  if (repeat * static_cast<int64_t>(cx.input.size()) > kMaxRepeatedItems)
    return absl::InvalidArgumentError(absl::StrCat("counterexample: ", cx.input.size(), " input items sent ", repeat,
                                                   " times over exceed ", kMaxRepeatedItems, " requests"));
  // Each round would copy the answers attached to its items: an input sent
  // many times over never comes from an intermediary's test.
  if (repeat > 1 && std::any_of(cx.input.begin(), cx.input.end(),
                                [](const harness::InputItem& i) { return !i.origin_answers.empty(); }))
    return absl::InvalidArgumentError("counterexample: input items with origin_answers cannot be repeated");
  cx.repeat = static_cast<int>(repeat);
  cx.failed_round = static_cast<int>(std::clamp<int64_t>(num(v, "failed_round", 0), 0, repeat - 1));
  if (const Value* r = v.Find("replays"); r && r->is_map()) {
    cx.replays_verified = static_cast<int>(num(*r, "verified", 0));
    cx.replays_reproduced = static_cast<int>(num(*r, "reproduced", 0));
  }
  if (const Value* s = v.Find("shrink"); s && s->is_map()) {
    cx.shrink_reruns = static_cast<int>(num(*s, "reruns", 0));
    cx.shrink_seconds = static_cast<double>(num(*s, "milliseconds", 0)) / 1000;
    cx.shrink_complete = s->Find("complete") && s->Find("complete")->is_bool() && s->Find("complete")->as_bool();
  }
  return cx;
}

std::string RenderSequenceDiagram(const Counterexample& cx) {
  constexpr size_t kLane = 34;
  // The clients' connections, then an intermediary's origin connections
  // (labels there are the origin side's own: o#1).
  int lanes = 1, origin_lanes = 0;
  for (const auto& o : cx.trace) {
    int& n = o.side == check::Side::kOrigin ? origin_lanes : lanes;
    n = std::max(n, static_cast<int>(o.conn) + 1);
  }
  std::string out = absl::StrCat("spec ", cx.spec_name, " (", cx.spec_hash, "), seed ", cx.seed, ", ", cx.verdict.kind,
                                 ", signature ", cx.signature, "\n\n");
  // No trace (an explore run's violation: found in the spec, no SUT ran):
  // the requests that lead to it, one at a time.
  if (cx.trace.empty()) {
    for (size_t k = 0; k < cx.input.size(); ++k)
      absl::StrAppend(&out, " --> #", 2 * k + 1, " ", ir::ToJson(cx.input[k].jexpr), "\n");
    absl::StrAppend(&out, "\n", cx.verdict.kind, ": ", cx.verdict.reason, "\n");
    return out;
  }
  out += " ";
  for (int c = 0; c < lanes; ++c) {
    // A cluster's connections each talk to one node (node_of(c) in specs).
    // An fs job's one "connection" is the tester acting on the replicas
    // and running the program.
    std::string head = cx.adapter == "fs" ? "replicas a, b and the program" : absl::StrCat("conn ", c);
    if (cx.nodes > 1) absl::StrAppend(&head, " -> node ", lang::ConnectionNodes{cx.nodes, cx.connect_node}.NodeOf(c));
    head.resize(kLane, ' ');
    out += head;
  }
  for (int c = 0; c < origin_lanes; ++c) {
    std::string head = absl::StrCat("origin conn ", c);
    head.resize(kLane, ' ');
    out += head;
  }
  out += "\n";
  auto summarize = [&cx](const Value& m) { return cx.adapter == "fs" ? SummarizeFsMessage(m) : Summarize(m); };
  for (const auto& o : cx.trace) {
    const bool origin = o.side == check::Side::kOrigin;
    std::string row(static_cast<size_t>(o.conn + (origin ? lanes : 0)) * kLane + 1, ' ');
    const char* mark = origin ? "o#" : "#";
    const bool this_side = origin == cx.verdict.origin_side;
    bool failing = false;
    switch (o.kind) {
      case Observation::Kind::kSent:
        absl::StrAppend(&row, "--> ", mark, o.label, " ", summarize(o.msg));
        failing =
            (cx.verdict.kind == "liveness" || cx.verdict.kind == "property") && !origin && o.label == cx.verdict.label;
        break;
      case Observation::Kind::kReceived:
        absl::StrAppend(&row, "<-- ", mark, o.label, " ", summarize(o.msg));
        failing =
            (cx.verdict.kind == "safety" || cx.verdict.kind == "property") && this_side && o.label == cx.verdict.label;
        break;
      case Observation::Kind::kClosed:
        absl::StrAppend(&row, "x-- connection closed");
        break;
      case Observation::Kind::kTimeout:
        absl::StrAppend(&row, "... #", o.label, " timed out");
        break;
      case Observation::Kind::kFault:
        row = absl::StrCat(" !!! fault ", ir::ToJson(o.msg));
        break;
    }
    if (failing)
      absl::StrAppend(&row, cx.verdict.kind == "liveness"   ? "   <== NO RESPONSE"
                            : cx.verdict.kind == "property" ? "   <== PROPERTY VIOLATED"
                                                            : "   <== REJECTED");
    out += row + "\n";
  }
  absl::StrAppend(&out, "\n", cx.verdict.kind, ": ", cx.verdict.reason, "\n");
  for (const auto& d : cx.verdict.details) absl::StrAppend(&out, "  - ", d, "\n");
  const size_t faults = static_cast<size_t>(
      std::count_if(cx.input.begin(), cx.input.end(), [](const InputItem& i) { return i.is_fault(); }));
  absl::StrAppend(&out, "input: ", cx.shrunk_size - std::min(faults, cx.shrunk_size), " requests",
                  faults ? absl::StrCat(" and ", faults, " faults") : "", " (", cx.original_size, " before shrinking",
                  cx.shrink_reruns ? absl::StrCat(", ", cx.shrink_reruns, " reruns") : "",
                  cx.shrink_complete || !cx.shrink_reruns ? "" : ", shrinking stopped by its budget", ")\n");
  if (cx.repeat > 1)
    absl::StrAppend(&out, "repeated: the input is sent ", cx.repeat,
                    " times over in one run (a rare race); above is round ", cx.failed_round + 1,
                    ", where it failed\n");
  if (cx.replays_verified > 0)
    absl::StrAppend(&out, "replayed on fresh SUTs: ", cx.replays_reproduced, " of ", cx.replays_verified, " reproduced",
                    cx.replays_reproduced < cx.replays_verified ? " (flaky: the failure depends on timing)" : "", "\n");
  return out;
}

}  // namespace dualswarm::harness
