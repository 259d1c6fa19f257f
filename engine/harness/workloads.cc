#include "engine/harness/workloads.h"

#include <memory>
#include <random>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::harness {
namespace {

using check::Observation;
using ir::Value;

const std::string& Pick(Rng& rng, const std::vector<std::string>& from) { return from[rng() % from.size()]; }

Value Rec(ir::MapEntries e) { return Value::Map(std::move(e)); }

// Every string in `v` (keys included), for the "nobody wrote it" check.
void CollectStrings(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Value::Kind::kString:
      absl::StrAppend(out, v.as_string(), "\n");
      break;
    case Value::Kind::kList:
      for (const auto& x : v.as_list()) CollectStrings(x, out);
      break;
    case Value::Kind::kMap:
      for (const auto& [k, x] : v.as_map()) {
        absl::StrAppend(out, k, "\n");
        CollectStrings(x, out);
      }
      break;
    case Value::Kind::kOption:
      if (v.has_value()) CollectStrings(v.inner(), out);
      break;
    default:
      break;
  }
}

}  // namespace

RequestFn KvRequests(std::vector<std::string> keys) {
  return [keys = std::move(keys)](Rng& rng) -> Value {
    static const std::vector<std::string> vals = {"x", "y", "z"};
    std::string key = Pick(rng, keys);
    switch (rng() % 4) {
      case 0:
        return Rec({{"op", Value::String("get")}, {"key", Value::String(key)}});
      case 1:
        return Rec(
            {{"op", Value::String("put")}, {"key", Value::String(key)}, {"value", Value::String(Pick(rng, vals))}});
      case 2:
        return Rec(
            {{"op", Value::String("append")}, {"key", Value::String(key)}, {"value", Value::String(Pick(rng, vals))}});
      default: {
        Value expected = rng() % 3 == 0 ? Value::Null() : Value::String(Pick(rng, vals));
        return Rec({{"op", Value::String("cas")},
                    {"key", Value::String(key)},
                    {"expected", expected},
                    {"value", Value::String(Pick(rng, vals))}});
      }
    }
  };
}

std::vector<std::string> KvKeys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(absl::StrCat("k", i));
  return keys;
}

RequestFn RegisterRequests(std::string key) {
  return [key = std::move(key)](Rng& rng) -> Value {
    static const std::vector<std::string> vals = {"0", "1", "2", "3", "4"};
    switch (rng() % 3) {
      case 0:
        return Rec({{"op", Value::String("get")}, {"key", Value::String(key)}});
      case 1:
        return Rec(
            {{"op", Value::String("put")}, {"key", Value::String(key)}, {"value", Value::String(Pick(rng, vals))}});
      default:
        return Rec({{"op", Value::String("cas")},
                    {"key", Value::String(key)},
                    {"expected", Value::String(Pick(rng, vals))},
                    {"value", Value::String(Pick(rng, vals))}});
    }
  };
}

RequestFn QueueRequests(double enq_fraction) {
  auto next = std::make_shared<int64_t>(0);
  return [next, enq_fraction](Rng& rng) -> Value {
    double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    if (u < enq_fraction)
      return Rec({{"op", Value::String("enq")}, {"value", Value::String(absl::StrCat("e", ++*next))}});
    return Rec({{"op", Value::String("deq")}});
  };
}

SimOptions CrashedClientsOptions(int clients, int ops, double never_answered, uint64_t seed) {
  SimOptions so;
  so.connections = clients;
  so.requests = ops;
  so.max_in_flight = 1;
  so.seed = seed;
  so.truncate_probability = 0;
  so.crash_probability = never_answered;
  return so;
}

absl::StatusOr<size_t> InjectUnwrittenRead(std::vector<Observation>* trace, Rng& rng,
                                           const std::vector<std::string>& read_ops, const std::string& field,
                                           const std::string& unwritten) {
  std::string written;
  for (const Observation& o : *trace)
    if (o.kind == Observation::Kind::kSent) CollectStrings(o.msg, &written);
  bool fresh_char = false;
  for (char ch : unwritten) fresh_char = fresh_char || written.find(ch) == std::string::npos;
  if (!fresh_char)
    return absl::FailedPreconditionError(absl::StrCat("every character of \"", unwritten,
                                                      "\" occurs in some request, so a read of it may be explainable"));
  // Answered reads: the request's op is a read op and the response has `field`.
  std::vector<size_t> reads;
  std::unordered_map<int64_t, bool> is_read;  // by request label
  for (size_t i = 0; i < trace->size(); ++i) {
    const Observation& o = (*trace)[i];
    if (o.kind == Observation::Kind::kSent) {
      const Value* op = o.msg.is_map() ? o.msg.Find("op") : nullptr;
      bool read = false;
      if (op != nullptr && op->is_string())
        for (const auto& r : read_ops) read = read || op->as_string() == r;
      is_read[o.label] = read;
    } else if (o.kind == Observation::Kind::kReceived) {
      auto it = is_read.find(o.label - 1);
      if (it != is_read.end() && it->second && o.msg.is_map() && o.msg.Find(field) != nullptr) reads.push_back(i);
    }
  }
  if (reads.empty()) return absl::NotFoundError("the trace has no answered read to corrupt");
  size_t at = reads[rng() % reads.size()];
  Observation& o = (*trace)[at];
  ir::MapEntries e = o.msg.as_map();
  for (auto& [k, v] : e)
    if (k == field) v = Value::String(unwritten);
  o.msg = Value::Map(std::move(e));
  return at;
}

std::vector<Observation> PendingPutsThenGet(int puts, const Value& observed, bool timeouts) {
  std::vector<Observation> trace;
  auto sent = [&](int64_t label, int64_t conn, Value msg) {
    Observation o;
    o.kind = Observation::Kind::kSent;
    o.label = label;
    o.conn = conn;
    o.msg = std::move(msg);
    trace.push_back(std::move(o));
  };
  for (int i = 0; i < puts; ++i)
    sent(2 * i + 1, i,
         Rec({{"op", Value::String("put")},
              {"key", Value::String("x")},
              {"value", Value::String(absl::StrCat("p", i + 1))}}));
  for (int i = 0; i < puts; ++i) {
    if (timeouts) {
      Observation o;
      o.kind = Observation::Kind::kTimeout;
      o.label = 2 * i + 1;
      o.conn = i;
      trace.push_back(std::move(o));
    }
    Observation c;
    c.kind = Observation::Kind::kClosed;
    c.conn = i;
    trace.push_back(std::move(c));
  }
  int64_t get = 2 * puts + 1;
  sent(get, puts, Rec({{"op", Value::String("get")}, {"key", Value::String("x")}}));
  Observation r;
  r.kind = Observation::Kind::kReceived;
  r.label = get + 1;
  r.conn = puts;
  r.msg = Rec({{"value", observed}});
  trace.push_back(std::move(r));
  return trace;
}

}  // namespace dualswarm::harness
